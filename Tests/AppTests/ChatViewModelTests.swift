import CableReactive
import CableReactivePreview
import Foundation
import Signals
import Testing

@testable import SwiftUIChat

/// Issue 23, item 5: the README's view model, run against its preview cable: no socket, no server, no real time.
/// What the screen would show is asserted after each step.
@Suite("The README's ChatViewModel on a CablePreview")
@MainActor
struct ChatViewModelTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("connects, shows the scripted lines, sends, shows a banner while a drop lasts, and flags a reload")
    func screenShowsWhatThePreviewPlays() async throws {
        // snippet:start swiftui-test
        let preview = previewCable()
        let model = try ChatViewModel(client: preview.client, room: "lobby")
        let screen = Task { await model.follow() }  // the view's .task
        #expect(model.status.value == .connecting(attempt: 0))  // the client's own step, at once
        #expect(!model.canSend)

        preview.flush()  // the welcome, the confirmation and the scripted messages
        #expect(model.status.value == .connected)
        #expect(model.canSend)
        #expect(model.banner.value == nil)
        #expect(await Self.shown(model, count: 2) == ["ada: Hi!", "bob: Hello, Ada"])

        #expect(model.send("hello"))
        preview.flush()  // the reply rule answers the speak
        #expect(preview.performed.map(\.action) == ["speak"])
        #expect(preview.performed.first?.data == ["text": "hello"])
        #expect(await Self.shown(model, count: 3).last == "me: hello")

        preview.drop()
        preview.flush()
        #expect(model.banner.value == "Connection lost; reconnecting")
        #expect(!model.canSend)
        #expect(!model.send("offline"))  // nothing is queued offline
        preview.advance(by: 1)  // the nominal first backoff step: connected again, and confirmed
        #expect(model.status.value == .connected)
        #expect(model.banner.value == nil)
        #expect(model.mayHaveMissedMessages)  // plain Action Cable: reload the history
        // snippet:end
        screen.cancel()
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("the model owns its client: releasing the model releases and closes it, and ends its observations")
    func releasingTheModelClosesTheClient() throws {
        weak var weakModel: ChatViewModel?
        weak var weakClient: ActionCableClient?
        do {
            let preview = previewCable()
            weakClient = preview.client
            let model = try ChatViewModel(client: preview.client, room: "lobby")
            weakModel = model
            preview.flush()
            #expect(model.status.value == .connected)
        }
        #expect(weakModel == nil)
        #expect(weakClient == nil)
    }

    /// The lines the model shows once it shows `count` of them (the loop runs on its own turns of the main actor).
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    static func shown(_ model: ChatViewModel, count: Int) async -> [String] {
        _ = await MainActorObserverTests.eventually { model.lines.count >= count }
        return model.lines.map { "\($0.user): \($0.text)" }
    }
}
