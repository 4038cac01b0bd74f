import CableReactive
import CableTesting
import Dispatch
import Signals
import Testing

/// Issue 37, item 1: everything the client tells the app about one subscription reaches each observer in the order
/// the client decided it, whatever queue the observer names, also when the server writes the confirmation and the
/// data it transmits in `subscribed` together (one network read).
@Suite("ActionCableClient: one order per subscription, on the app's queue")
struct DeliveryOrderTests {
    let params: JSONValue = ["channel": "ChatChannel", "room": "lobby"]

    /// What the observers saw, in the order they ran: `state:…`, `reconnect:…`, `message:…`, `finished`.
    final class Journal: Sendable {
        let entries = Locked<[String]>([])
        func note(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }

        /// The position of the first entry equal to `entry`; `Int.max` when there is none.
        func index(of entry: String) -> Int { all.firstIndex(of: entry) ?? .max }
    }

    /// Observes a handle's state, last reconnect and messages on `queue` (the client's callback queue when nil).
    static func watch(
        _ room: ChannelSubscription, on queue: DispatchQueue?, into journal: Journal
    ) -> [SignalObservation] {
        [
            room.state.observe(on: queue) { journal.note("state:\($0)") },
            room.lastReconnect.observe(on: queue) { journal.note("reconnect:\($0.map(\.description) ?? "nil")") },
            room.messages.observe(
                on: queue, onValue: { journal.note("message:\($0["n"]?.intValue ?? -1)") },
                onFinish: { journal.note("finished") }),
        ]
    }

    static func data(_ room: ChannelSubscription, _ n: Int) -> String {
        ClientHarness.message(room.identifier, #"{"n":\#(n)}"#)
    }

    @Test(
        "a confirmation and data in one read: a queue's observers see subscribed before the messages",
        arguments: [false, true])
    func confirmationThenDataOnAQueue(namesAQueue: Bool) throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let queue = DispatchQueue(label: "app")
        queue.suspend()  // the app's queue is busy while the read arrives
        let journal = Journal()
        let tokens = Self.watch(room, on: namesAQueue ? queue : nil, into: journal)
        let connection = try #require(h.connected())
        connection.receive(read: [ClientHarness.confirm(room.identifier)] + (0..<3).map { Self.data(room, $0) })
        h.scheduler.flush()
        queue.resume()
        queue.sync {}
        #expect(
            journal.all == [
                "state:pending", "reconnect:nil", "state:subscribed(confirmations: 1)", "message:0", "message:1",
                "message:2",
            ])
        withExtendedLifetime(tokens) {}
    }

    @Test("observers on different queues each see the one order, and the client's callback queue is one of them")
    func twoQueuesOneOrderEach() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let queue = DispatchQueue(label: "app")
        queue.suspend()
        let onQueue = Journal()
        let onCallbacks = Journal()
        let tokens = Self.watch(room, on: queue, into: onQueue) + Self.watch(room, on: nil, into: onCallbacks)
        let connection = try #require(h.connected())
        connection.receive(read: [ClientHarness.confirm(room.identifier), Self.data(room, 0)])
        h.scheduler.flush()
        #expect(onCallbacks.all.suffix(2) == ["state:subscribed(confirmations: 1)", "message:0"])
        #expect(onQueue.all.isEmpty, "the app's queue has not run yet")
        queue.resume()
        queue.sync {}
        #expect(onQueue.all == onCallbacks.all)
        withExtendedLifetime(tokens) {}
    }

    @Test("a for-await loop sees the state the client decided before each message: subscribed, with no hop")
    func loopReadsTheDecidedState() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let states = Locked<[SubscriptionState]>([])
        let loop = Task {
            for await _ in room.messages.values {
                states.withLock { $0.append(room.state.value) }
                if states.withLock({ $0.count }) == 2 { return }
            }
        }
        let connection = try #require(h.connected())
        await Task.yield()
        // The callback queue (the scheduler's) is never flushed: the loop must not depend on it.
        connection.receive(read: [ClientHarness.confirm(room.identifier), Self.data(room, 0), Self.data(room, 1)])
        await loop.value
        #expect(states.withLock { $0 } == [.subscribed(confirmations: 1), .subscribed(confirmations: 1)])
    }

    @Test(
        "after a reconnect, the outcome and the new confirmation reach a queue before the new session's first message")
    func reconnectOutcomeBeforeTheNewSessionsMessages() throws {
        let h = try AnyCableFeaturesTests.harness(.actionCable)  // reconnects after 1 s
        let room = try h.client.subscribe(params)
        let first = try #require(h.connected())
        first.receive(read: [ClientHarness.confirm(room.identifier), Self.data(room, 0)])
        let queue = DispatchQueue(label: "app")
        let journal = Journal()
        let tokens = Self.watch(room, on: queue, into: journal)
        queue.sync {}
        queue.suspend()
        first.fail()
        h.scheduler.advance(by: 2)
        let second = try #require(h.welcome())
        #expect(second !== first)
        second.receive(read: [ClientHarness.confirm(room.identifier), Self.data(room, 1)])
        h.scheduler.flush()
        queue.resume()
        queue.sync {}
        let message = journal.index(of: "message:1")
        #expect(message != .max, "\(journal.all) \(second.sent)")
        #expect(journal.index(of: "reconnect:resubscribed") < message)
        #expect(journal.index(of: "state:subscribed(confirmations: 2)") < message)
        withExtendedLifetime(tokens) {}
    }

    @Test("unsubscribe right after a read: the read's messages, then unsubscribed, then the end of the messages")
    func unsubscribedAfterTheLastMessage() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(room.identifier))
        let queue = DispatchQueue(label: "app")
        let journal = Journal()
        let tokens = Self.watch(room, on: queue, into: journal)
        queue.sync {}
        queue.suspend()
        connection.receive(read: [Self.data(room, 0), Self.data(room, 1)])
        room.unsubscribe()
        h.scheduler.flush()
        queue.resume()
        queue.sync {}
        #expect(journal.all.suffix(4).prefix(2) == ["message:0", "message:1"])
        #expect(Set(journal.all.suffix(2)) == ["state:unsubscribed", "finished"])
        #expect(!journal.all.dropFirst(2).contains("state:pending"))
        withExtendedLifetime(tokens) {}
    }

    @Test("a rejection after a retry reaches a queue after the messages of the read before it")
    func rejectedAfterEarlierMessages() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let queue = DispatchQueue(label: "app")
        queue.suspend()
        let journal = Journal()
        let tokens = Self.watch(room, on: queue, into: journal)
        let connection = try #require(h.connected())
        // A server that streams before it decides (AnyCable's broadcasts can overtake the answer), then rejects.
        connection.receive(read: [Self.data(room, 0), ClientHarness.reject(room.identifier)])
        h.scheduler.flush()
        queue.resume()
        queue.sync {}
        let rejected = journal.index(of: "state:rejected")
        #expect(rejected != .max)
        #expect(journal.index(of: "message:0") < rejected || journal.index(of: "message:0") == .max)
        withExtendedLifetime(tokens) {}
    }

    @Test("messagesWithPositions observed without a queue runs on the client's callback queue, not the reading thread")
    func positionedMessagesOnTheCallbackQueue() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let journal = Journal()
        let token = room.messagesWithPositions.observe { journal.note("positioned:\($0.value["n"]?.intValue ?? -1)") }
        let connection = try #require(h.connected())
        connection.receive(read: [ClientHarness.confirm(room.identifier), Self.data(room, 7)])
        #expect(journal.all.isEmpty, "ran on the thread that read the frame")
        h.scheduler.flush()
        #expect(journal.all == ["positioned:7"])
        withExtendedLifetime(token) {}
    }

    @Test("a mapped signal keeps its source's queue and order; combineLatest observes its inputs where they send")
    func operatorsKeepTheOrder() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let queue = DispatchQueue(label: "app")
        queue.suspend()
        let journal = Journal()
        let tokens = [
            room.state.map(\.isSubscribed).observe(on: queue) { journal.note("subscribed:\($0)") },
            room.messages.map { $0["n"]?.intValue ?? -1 }.observe(on: queue) { journal.note("message:\($0)") },
        ]
        let connection = try #require(h.connected())
        connection.receive(read: [ClientHarness.confirm(room.identifier), Self.data(room, 0)])
        h.scheduler.flush()
        queue.resume()
        queue.sync {}
        #expect(journal.all == ["subscribed:false", "subscribed:true", "message:0"])
        withExtendedLifetime(tokens) {}
    }

    @Test("presence and messages of one read reach a queue in the order the server wrote them")
    func presenceAndMessagesInOrder() throws {
        let h = try AnyCableFeaturesTests.harness()
        let (room, connection) = try AnyCableFeaturesTests.confirmedA(h)
        let queue = DispatchQueue(label: "app")
        let journal = Journal()
        let presence = room.presence
        let tokens = [
            presence.events.observe(on: queue) { event in
                switch event {
                case .joined(let member): journal.note("presence:join:\(member.id)")
                case .left(let id): journal.note("presence:leave:\(id)")
                }
            },
            room.messages.observe(on: queue) { journal.note("message:\($0["n"]?.intValue ?? -1)") },
        ]
        queue.sync {}
        queue.suspend()
        connection.receive(read: [
            Self.data(room, 0), AnyCableFeaturesTests.presence(#"{"type":"join","id":"u1"}"#), Self.data(room, 1),
            AnyCableFeaturesTests.presence(#"{"type":"leave","id":"u1"}"#),
        ])
        h.scheduler.flush()
        queue.resume()
        queue.sync {}
        #expect(journal.all == ["message:0", "presence:join:u1", "message:1", "presence:leave:u1"])
        withExtendedLifetime(tokens) {}
    }
}
