import CableReactive
import CableReactivePreview
import Signals
import Testing

/// A view model written against the client, as an app writes it: it holds the client and its subscriptions and
/// observes states and messages on the main actor (`observe(on: .main)`). A ``CablePreview`` publishes on the main
/// queue, where such an observer runs at once, so a test sees each step right after `flush()`.
@MainActor
final class ChatRoomModel {
    struct Line: Equatable, Sendable, CustomStringConvertible {
        let user: String
        let text: String
        var description: String { "\(user): \(text)" }
    }

    let client: ActionCableClient
    private let room: ChannelSubscription
    private let admin: ChannelSubscription
    private(set) var connection: CableState = .disconnected
    private(set) var lastDisconnect: CableDisconnect?
    private(set) var roomState: SubscriptionState = .pending
    private(set) var adminState: SubscriptionState = .pending
    private(set) var lines: [Line] = []
    private var observations: [SignalObservation] = []

    init(client: ActionCableClient) throws {
        self.client = client
        room = try client.subscribe(["channel": "ChatChannel", "room": "lobby"])
        admin = try client.subscribe(["channel": "AdminChannel"])
        observations = [
            client.state.observe(on: .main) { [weak self] state in self?.connection = state },
            client.lastDisconnect.observe(on: .main) { [weak self] lost in self?.lastDisconnect = lost },
            room.state.observe(on: .main) { [weak self] state in self?.roomState = state },
            admin.state.observe(on: .main) { [weak self] state in self?.adminState = state },
            room.messages.observe(on: .main) { [weak self] message in
                let line = Line(user: message["user"]?.stringValue ?? "?", text: message["text"]?.stringValue ?? "")
                self?.lines.append(line)
            },
        ]
    }

    func start() {
        client.connect()
    }

    @discardableResult
    func say(_ text: String) -> Bool {
        room.perform("speak", ["text": .string(text)])
    }
}

/// A view model in the README's style: a `for await` loop in a main-actor task.
@MainActor
final class LoopingRoomModel {
    private(set) var texts: [String] = []

    /// Reads messages until it has `count` of them.
    func read(_ room: ChannelSubscription, count: Int) async {
        for await message in room.messages {
            texts.append(message["text"]?.stringValue ?? "")
            if texts.count == count { return }
        }
    }
}

@MainActor
@Suite("CablePreview: a view model with no socket")
struct PreviewViewModelTests {
    typealias Line = ChatRoomModel.Line

    static let lobby: JSONValue = ["channel": "ChatChannel", "room": "lobby"]
    static let scripted = [Line(user: "ada", text: "hi"), Line(user: "grace", text: "hello")]

    static func chatPreview(options: CableOptions = CableOptions()) -> CablePreview {
        CablePreview(
            channels: [
                "ChatChannel": .confirm(
                    messages: [["user": "ada", "text": "hi"], ["user": "grace", "text": "hello"]],
                    replies: ["speak": { data in ["user": "me", "text": data["text"] ?? ""] }]),
                "AdminChannel": .reject,
            ], options: options)
    }

    @Test("the model connects, is confirmed, reads the scripted messages in order, and a rejected channel")
    func connectsAndReads() throws {
        let preview = Self.chatPreview()
        let model = try ChatRoomModel(client: preview.client)
        model.start()
        // The client's own step is published at once (on the main actor, observers on .main see it before connect()
        // returns); the attempt, the welcome and the answers wait in the preview's queue.
        #expect(model.connection == .connecting(attempt: 0))
        #expect(model.roomState == .pending)
        preview.flush()
        #expect(model.connection == .connected)
        #expect(model.roomState == .subscribed(confirmations: 1))
        #expect(model.adminState == .rejected)
        #expect(model.lines == Self.scripted)
        #expect(model.lastDisconnect == nil)
    }

    @Test("a message the test pushes arrives after the scripted ones, at the moment the test chooses")
    func pushedMessage() throws {
        let preview = Self.chatPreview()
        let model = try ChatRoomModel(client: preview.client)
        model.start()
        preview.flush()
        preview.send(["user": "bob", "text": "yo"], to: "ChatChannel")
        #expect(model.lines == Self.scripted)  // queued, not delivered yet
        preview.flush()
        #expect(model.lines == Self.scripted + [Line(user: "bob", text: "yo")])
        preview.send(["user": "eve", "text": "elsewhere"], toParams: ["channel": "ChatChannel", "room": "other"])
        preview.send(["user": "carl", "text": "lobby"], toParams: Self.lobby)
        preview.flush()
        #expect(model.lines.suffix(1) == [Line(user: "carl", text: "lobby")])
    }

    @Test("a perform is recorded when it returns true, and the channel's reply rule answers it")
    func performIsRecordedAndAnswered() throws {
        let preview = Self.chatPreview()
        let model = try ChatRoomModel(client: preview.client)
        #expect(!model.say("too early"))  // not confirmed: nothing leaves the client
        model.start()
        preview.flush()
        #expect(model.say("hello"))
        #expect(
            preview.performed == [
                .init(channel: "ChatChannel", params: Self.lobby, action: "speak", data: ["text": "hello"])
            ])
        #expect(model.lines == Self.scripted)  // the reply waits for its turn
        preview.flush()
        #expect(model.lines == Self.scripted + [Line(user: "me", text: "hello")])
    }

    @Test("a dropped connection shows lastDisconnect and reconnecting, and the retry waits for virtual time")
    func dropAndReconnect() throws {
        let preview = Self.chatPreview()
        let model = try ChatRoomModel(client: preview.client)
        model.start()
        preview.flush()
        preview.drop()
        preview.flush()
        let lost = try #require(model.lastDisconnect)
        #expect(lost.kind == .failed)
        #expect(lost.wasConnected)
        #expect(lost.error?.kind == .abnormalClosure)
        #expect(model.connection == .connecting(attempt: 1))
        #expect(model.roomState == .pending)
        #expect(preview.client.nextAttempt.value?.delay == 1)  // no jitter: the nominal first backoff step
        preview.advance(by: 0.999)
        #expect(model.connection == .connecting(attempt: 1))
        preview.advance(by: 0.001)
        #expect(model.connection == .connected)
        #expect(model.roomState == .subscribed(confirmations: 2))
        #expect(model.lines == Self.scripted + Self.scripted)  // the channel transmits again on each confirmation
    }

    @Test("retry now: connect() while waiting reconnects at once, with no time passing")
    func retryNow() throws {
        let preview = Self.chatPreview()
        let model = try ChatRoomModel(client: preview.client)
        model.start()
        preview.flush()
        preview.drop()
        preview.flush()
        model.start()
        preview.flush()
        #expect(model.connection == .connected)
        #expect(model.roomState == .subscribed(confirmations: 2))
    }

    @Test("a server disconnect without reconnect stops the client; connect() starts again")
    func serverDisconnectStops() throws {
        let preview = Self.chatPreview()
        let model = try ChatRoomModel(client: preview.client)
        model.start()
        preview.flush()
        preview.serverDisconnect(reason: "remote", reconnect: false)
        preview.flush()
        #expect(model.connection == .stopped(reason: .server("remote")))
        #expect(model.lastDisconnect?.kind == .serverDisconnect)
        #expect(model.lastDisconnect?.serverReason == "remote")
        #expect(model.lastDisconnect?.reconnect == false)
        model.start()
        preview.flush()
        #expect(model.connection == .connected)
    }

    @Test("an unauthorized server disconnect stops the preview client, which has no onUnauthorized hook")
    func unauthorized() throws {
        let preview = Self.chatPreview()
        let model = try ChatRoomModel(client: preview.client)
        model.start()
        preview.flush()
        preview.serverDisconnect(reason: "unauthorized", reconnect: false)
        preview.flush()
        guard case .stopped(let reason) = model.connection else {
            Issue.record("not stopped: \(model.connection)")
            return
        }
        #expect(reason.kind == .unauthorized)
    }

    @Test("a server disconnect with reconnect backs off and comes back")
    func serverDisconnectReconnects() throws {
        let preview = Self.chatPreview()
        let model = try ChatRoomModel(client: preview.client)
        model.start()
        preview.flush()
        preview.serverDisconnect(reason: "restart")
        preview.flush()
        #expect(model.connection == .connecting(attempt: 1))
        #expect(model.lastDisconnect?.reconnect == true)
        preview.advance(by: 1)
        #expect(model.connection == .connected)
    }

    @Test("time stands still: left alone for an hour of virtual time, a quiet connection stays, kept by pings")
    func noStaleWatchdog() throws {
        let preview = Self.chatPreview()
        let model = try ChatRoomModel(client: preview.client)
        model.start()
        preview.flush()
        preview.advance(by: 3600)  // four times the 15 s stale deadline, many times over
        #expect(model.connection == .connected)
        #expect(model.lastDisconnect == nil)
        #expect(model.roomState == .subscribed(confirmations: 1))
    }

    @Test("an offline server: every attempt is refused and backs off until it accepts again")
    func offline() throws {
        let preview = Self.chatPreview()
        let model = try ChatRoomModel(client: preview.client)
        preview.acceptsConnections = false
        model.start()
        preview.flush()
        #expect(model.connection == .connecting(attempt: 1))
        #expect(model.lastDisconnect?.error?.kind == .connectionRefused)
        #expect(model.lastDisconnect?.wasConnected == false)
        preview.advance(by: 1)
        #expect(model.connection == .connecting(attempt: 2))
        #expect(preview.client.nextAttempt.value?.delay == 2)
        preview.acceptsConnections = true
        preview.advance(by: 2)
        #expect(model.connection == .connected)
        #expect(model.roomState == .subscribed(confirmations: 1))
    }

    @Test("an unanswered channel stays pending; its re-sends wait for virtual time")
    func unansweredChannel() throws {
        let preview = CablePreview(channels: ["ChatChannel": .unanswered])
        let room = try preview.client.subscribe(Self.lobby)
        preview.client.connect()
        preview.flush()
        #expect(room.state.value == .pending)
        #expect(room.subscribesSent == 1)
        preview.advance(by: 5)  // subscribeRetryDelays' first step, without jitter
        #expect(room.subscribesSent == 2)
        #expect(room.state.value == .pending)
    }

    @Test("the subscription rule decides from the params before the channel table")
    func subscriptionRule() throws {
        let preview = CablePreview(
            channels: ["ChatChannel": .confirm()], otherChannels: .reject,
            subscriptionRule: { params in params["room"] == "secret" ? .reject : nil })
        let lobby = try preview.client.subscribe(Self.lobby)
        let secret = try preview.client.subscribe(["channel": "ChatChannel", "room": "secret"])
        let other = try preview.client.subscribe(["channel": "OtherChannel"])
        preview.client.connect()
        preview.flush()
        #expect(lobby.state.value == .subscribed(confirmations: 1))
        #expect(secret.state.value == .rejected)
        #expect(other.state.value == .rejected)
    }

    @Test("observers may call the client and the preview from inside a flush: no deadlock, order kept")
    func reentrantObservers() throws {
        let preview = Self.chatPreview()
        let room = try preview.client.subscribe(Self.lobby)
        let texts = Locked<[String]>([])
        let greet = room.state.observe { state in
            guard state == .subscribed(confirmations: 1) else { return }
            MainActor.assumeIsolated { preview.flush() }  // inside a flush: returns at once
            room.perform("speak", ["text": "greetings"])  // from an observer, as a view model might
        }
        let read = room.messages.observe { message in texts.withLock { $0.append(message["text"]?.stringValue ?? "") } }
        preview.client.connect()
        preview.flush()
        // The reply was queued behind the scripted messages, so it comes after them, in the same flush.
        #expect(texts.withLock { $0 } == ["hi", "hello", "greetings"])
        #expect(preview.performed.map(\.action) == ["speak"])
        _ = (greet, read)
    }

    @Test("with no flush, the main queue runs the preview by itself, as in a SwiftUI preview", .timeLimit(.minutes(1)))
    func drainsOnTheMainQueue() async throws {
        let preview = Self.chatPreview()
        let room = try preview.client.subscribe(Self.lobby)
        preview.client.connect()
        let model = LoopingRoomModel()
        await model.read(room, count: 2)  // suspends the main actor: the main queue delivers meanwhile
        #expect(model.texts == ["hi", "hello"])
        #expect(preview.client.state.value == .connected)
    }

    @Test("a for-await loop in a main-actor task sees scripted and pushed messages", .timeLimit(.minutes(1)))
    func loopingModel() async throws {
        let preview = Self.chatPreview()
        let room = try preview.client.subscribe(Self.lobby)
        let model = LoopingRoomModel()
        let reading = Task { await model.read(room, count: 3) }
        preview.client.connect()
        preview.flush()
        preview.send(["text": "pushed"], to: "ChatChannel")
        await reading.value
        #expect(model.texts == ["hi", "hello", "pushed"])
    }

    /// `MainActorUsageTests` only compiles its `ChatViewModel`: driven from the main actor by a harness whose
    /// callbacks run only when the test flushes them, its awaits (`first`, `first(within:)`) wait for a flush
    /// that the suspended test never makes. A preview's queue drains on the main queue by itself, so the same
    /// model runs to the end here.
    @Test("MainActorUsageTests' ChatViewModel runs on the main actor against a preview", .timeLimit(.minutes(1)))
    func chatViewModelRuns() async throws {
        let preview = CablePreview(channels: ["ChatChannel": .confirm(messages: [["text": "a"], ["text": "b"]])])
        let room = try preview.client.subscribe(["channel": "ChatChannel"])
        let model = ChatViewModel(client: preview.client, room: room)
        let task = Task { await model.run() }
        preview.client.connect()
        // The third message only once the first loop is done with two (held messages go to one consumer).
        while model.lines.count < 2 { await Task.yield() }
        preview.send(["text": "c"], to: "ChatChannel")
        while model.lines.count < 3 { await Task.yield() }
        preview.send(["text": "d"], to: "ChatChannel")  // for its last step, `room.messages.first()`
        await task.value
        #expect(model.lines == ["a", "b", "c"])
        #expect(model.connected && model.subscribed && model.reconnected)
    }
}
