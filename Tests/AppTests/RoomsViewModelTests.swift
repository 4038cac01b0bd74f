import CableReactive
import CableReactivePreview
import Signals
import Testing

@testable import SignalsChat

/// Issue 28: the README's RoomsViewModel (Playgrounds-linux/SignalsChat) on a CablePreview, its time operators
/// on the preview's virtual time: one `advance(by:)` moves the model's debounce and the client's backoff alike,
/// and nothing sleeps.
@Suite("The README's RoomsViewModel on a CablePreview's virtual time")
@MainActor
struct RoomsViewModelTests {
    static let lobby: JSONValue = ["channel": "ChatChannel", "room": "lobby"]
    static let swift: JSONValue = ["channel": "ChatChannel", "room": "swift"]

    /// A ChatChannel that echoes `speak` as the server's broadcast, except a text its filter drops.
    static func chatPreview() -> CablePreview {
        CablePreview(channels: [
            "ChatChannel": .confirm(replies: [
                "speak": { data in
                    data["text"]?.stringValue?.contains("spam") == true
                        ? nil : ["user": "me", "text": data["text"] ?? ""]
                }
            ])
        ])
    }

    @Test("shows typing until 3 s of quiet, follows the picked room, and shows the banner after 1 s of connecting")
    func screenOnVirtualTime() throws {
        let preview = Self.chatPreview()
        // snippet:start signals-test
        let model = try RoomsViewModel(
            client: preview.client, me: "me", rooms: ["lobby", "swift"], scheduler: preview.scheduler)
        preview.client.connect()
        preview.flush()
        #expect(model.canSend)

        preview.send(["typing": "bob"], toParams: Self.lobby)  // a whisper, as the server relays it
        preview.flush()
        #expect(model.typing == "bob is typing…")
        preview.advance(by: 2)
        #expect(model.typing == "bob is typing…")
        preview.advance(by: 1)  // 3 s after the last whisper: the model's debounce
        #expect(model.typing == nil)

        model.selectedRoom.value = "swift"
        preview.send(["user": "bob", "text": "in lobby"], toParams: Self.lobby)
        preview.send(["user": "bob", "text": "in swift"], toParams: Self.swift)
        preview.flush()
        #expect(model.lines == [Line(user: "bob", text: "in swift")])

        preview.acceptsConnections = false
        preview.drop()
        preview.flush()
        preview.advance(by: 0.5)
        #expect(model.banner == nil)  // connecting for under 1 s: nothing shown
        preview.advance(by: 0.5)
        #expect(model.banner == "Connecting…")
        preview.acceptsConnections = true
        preview.advance(by: 4)  // the client's next retry, on the same clock
        #expect(preview.client.state.value == .connected)
        #expect(model.banner == nil)
        // snippet:end
    }

    @Test("typing in a room the model does not show leaves its indicator alone; the lobby's line waits for the return")
    func typingFollowsThePickedRoom() throws {
        let preview = Self.chatPreview()
        let model = try RoomsViewModel(
            client: preview.client, me: "me", rooms: ["lobby", "swift"], scheduler: preview.scheduler)
        preview.client.connect()
        preview.flush()
        model.selectedRoom.value = "swift"
        preview.send(["typing": "bob"], toParams: Self.lobby)
        preview.send(["user": "bob", "text": "while you were in swift"], toParams: Self.lobby)
        preview.flush()
        #expect(model.typing == nil)
        #expect(model.lines.isEmpty)
        preview.advance(by: 5)
        model.selectedRoom.value = "lobby"
        preview.flush()
        // Held by the lobby's subscription while nobody showed it; the stale whisper is not a Line and is skipped.
        #expect(model.lines == [Line(user: "bob", text: "while you were in swift")])
        #expect(model.typing == nil)
    }

    @Test("send is delivered when the broadcast comes back, and says noAnswer 5 s after one that never does")
    func sendWaitsForTheEcho() async throws {
        let preview = Self.chatPreview()
        let model = try RoomsViewModel(
            client: preview.client, me: "me", rooms: ["lobby"], scheduler: preview.scheduler)
        #expect(await model.send("offline") == .notSent)  // nothing is queued offline
        preview.client.connect()
        preview.flush()

        let sending = Task { await model.send("hello") }
        try await Self.performed(preview, count: 1)
        preview.flush()  // the echo
        #expect(await sending.value == .delivered)

        let filtered = Task { await model.send("buy spam") }
        try await Self.performed(preview, count: 2)
        preview.flush()
        preview.advance(by: 4.5)
        preview.advance(by: 0.5)  // the model's timeout, on the preview's clock
        #expect(await filtered.value == .noAnswer)
        #expect(preview.performed.map { $0.data["text"] } == ["hello", "buy spam"])
    }

    /// Lets the main actor run the sending task until its perform reached the preview (a bounded number of turns).
    static func performed(_ preview: CablePreview, count: Int) async throws {
        for _ in 0..<10_000 where preview.performed.count < count { await Task.yield() }
        try #require(preview.performed.count == count)
    }
}
