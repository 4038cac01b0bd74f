import CableReactive
import CableTesting
import Dispatch
import Foundation
import Signals
import Testing

/// The async API the way a SwiftUI view model uses it, from the main actor: this file compiling in Swift 6
/// mode without warnings is half the test (every entry point below once failed with "sending value of
/// non-Sendable type ... risks causing data races"); the test runs it.
@MainActor
final class ChatViewModel {
    struct Line: Decodable, Sendable { let text: String }

    let client: ActionCableClient
    let room: ChannelSubscription
    private(set) var lines: [String] = []
    private(set) var connected = false
    private(set) var subscribed = false
    private(set) var reconnected = false

    init(client: ActionCableClient, room: ChannelSubscription) {
        self.client = client
        self.room = room
    }

    func run() async {
        FileHandle.standardError.write(Data("run start\n".utf8))
        connected = await client.state.first { $0 == .connected } != nil
        FileHandle.standardError.write(Data("connected\n".utf8))
        subscribed = await room.state.first(within: 10) { $0 == .subscribed(confirmations: 1) } != nil
        for await message in room.messages {
            lines.append(message["text"]?.stringValue ?? "")
            if lines.count == 2 { break }
        }
        for await line in room.messages(as: Line.self) {
            lines.append(line.text)
            break
        }
        for await state in client.state.values where state == .connected {
            reconnected = true
            break
        }
        _ = await room.messages.first()
    }
}

/// The same steps on an actor of the test's own, which runs. Driven from the main actor through `ClientHarness`,
/// the view model above would wait for ever: its awaits wait for callbacks that run only when the test flushes the
/// `ManualScheduler`, which a suspended test never does. `PreviewViewModelTests` runs it against a `CablePreview`.
actor ChatModel {
    let client: ActionCableClient
    let room: ChannelSubscription
    private(set) var lines: [String] = []
    private(set) var checks: [Bool] = []

    init(client: ActionCableClient, room: ChannelSubscription) {
        self.client = client
        self.room = room
    }

    func run() async {
        checks.append(await client.state.first { $0 == .connected } != nil)
        checks.append(await room.state.first(within: 10) { $0 == .subscribed(confirmations: 1) } != nil)
        for await message in room.messages {
            lines.append(message["text"]?.stringValue ?? "")
            if lines.count == 2 { break }
        }
        for await line in room.messages(as: ChatViewModel.Line.self) {
            lines.append(line.text)
            break
        }
        for await state in client.state.values where state == .connected {
            checks.append(true)
            break
        }
    }
}

@Suite("Async API from actor-isolated code")
struct MainActorUsageTests {
    @Test("an actor's model awaits states, loops over messages and typed messages, all from its isolation")
    func actorModel() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(["channel": "ChatChannel"])
        let model = ChatModel(client: h.client, room: room)
        let task = Task { await model.run() }
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(room.identifier))
        for text in ["a", "b"] { connection.receive(ClientHarness.message(room.identifier, #"{"text":"\#(text)"}"#)) }
        // The third message only once the first loop is done with two (held messages go to one consumer).
        #expect(await Self.eventually(h) { await model.lines.count == 2 })
        connection.receive(ClientHarness.message(room.identifier, #"{"text":"c"}"#))
        #expect(await Self.eventually(h) { await model.lines.count == 3 })
        await task.value
        #expect(await model.lines == ["a", "b", "c"])
        #expect(await model.checks == [true, true, true])
        h.client.close()
    }

    /// Yields (flushing the harness's callbacks) until `condition` holds; false after 20 s of wall time.
    static func eventually(_ h: ClientHarness, _ condition: () async -> Bool) async -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + 20_000_000_000
        while DispatchTime.now().uptimeNanoseconds < deadline {
            h.scheduler.flush()
            if await condition() { return true }
            await Task.yield()
        }
        return false
    }
}
