import CableReactive
import CableTesting
import Dispatch
import Signals
import Testing

/// Several handles on one server subscription, several consumers on one handle, and what keeps a
/// subscription alive.
@Suite("ActionCableClient: shared handles and consumers")
struct SharedSubscriptionTests {
    let params: JSONValue = ["channel": "ChatChannel", "room": "lobby"]

    static func subscribes(_ connection: FakeTransport.Connection) -> Int {
        connection.sent.filter { $0.hasPrefix(#"{"command":"subscribe""#) }.count
    }

    static func unsubscribes(_ connection: FakeTransport.Connection) -> Int {
        connection.sent.filter { $0.hasPrefix(#"{"command":"unsubscribe""#) }.count
    }

    /// Collects what an observer gets, in order.
    final class Received: Sendable {
        let values = Locked<[JSONValue]>([])
        let finished = Locked(false)
        var all: [JSONValue] { values.withLock { $0 } }
        var isFinished: Bool { finished.withLock { $0 } }
    }

    @Test("equal params share one server subscription: one subscribe, and one unsubscribe after the last handle")
    func sharedHandles() throws {
        let h = try ClientHarness()
        let connection = try #require(h.connected())
        let first = try h.client.subscribe(params)
        let second = try h.client.subscribe(["room": "lobby", "channel": "ChatChannel"])  // other key order
        #expect(first.identifier == second.identifier)
        #expect(Self.subscribes(connection) == 1)
        connection.receive(ClientHarness.confirm(first.identifier))
        #expect(h.state(of: first) == .subscribed(confirmations: 1))
        #expect(h.state(of: second) == .subscribed(confirmations: 1))
        first.unsubscribe()
        #expect(Self.unsubscribes(connection) == 0, "the other handle still uses it")
        #expect(h.state(of: first) == .unsubscribed)
        #expect(h.state(of: second) == .subscribed(confirmations: 1))
        #expect(first.perform("speak") == false, "an unsubscribed handle sends nothing")
        #expect(second.perform("speak"))
        second.unsubscribe()
        #expect(Self.unsubscribes(connection) == 0, "it lingers")
        h.endLinger()
        #expect(Self.unsubscribes(connection) == 1)
        #expect(h.state(of: second) == .unsubscribed)
    }

    @Test("subscribesSent counts the subscribe commands on the current connection, re-sends included")
    func subscribesSent() throws {
        var options = CableOptions()
        options.subscribeRetryDelays = [2]
        let h = try ClientHarness(options: options)
        let room = try h.client.subscribe(params)
        #expect(room.subscribesSent == 0, "no connection yet")
        let connection = try #require(h.connected())
        #expect(room.subscribesSent == 1)
        h.scheduler.advance(by: 2.5)  // unanswered: sent again
        #expect(room.subscribesSent == 2 && Self.subscribes(connection) == 2)
        connection.receive(ClientHarness.confirm(room.identifier))
        h.scheduler.advance(by: 10)
        #expect(room.subscribesSent == 2, "confirmed: no more re-sends")
        connection.fail()
        #expect(room.subscribesSent == 0)
        h.scheduler.advance(by: 1.25)
        _ = try #require(h.welcome())
        #expect(room.subscribesSent == 1, "a new connection counts afresh")
    }

    @Test("every unanswered subscribe waits behind one timer; each is re-sent on time, and confirmed ones are not")
    func retriesShareOneTimer() throws {
        var options = CableOptions()
        options.subscribeRetryDelays = [2, 4]
        let h = try ClientHarness(options: options)
        let connection = try #require(h.connected())
        let idle = h.scheduler.pendingCount  // the watchdog
        let rooms = try (0..<100).map { try h.client.subscribe(["channel": "ChatChannel", "room": .int($0)]) }
        #expect(h.scheduler.pendingCount == idle + 1, "100 pending subscribes, one timer")
        #expect(Self.subscribes(connection) == 100)
        for room in rooms[..<50] { connection.receive(ClientHarness.confirm(room.identifier)) }
        h.scheduler.advance(by: 2.5)
        #expect(Self.subscribes(connection) == 150, "the 50 unanswered ones are sent again")
        #expect(
            rooms[50...].allSatisfy { $0.subscribesSent == 2 } && rooms[..<50].allSatisfy { $0.subscribesSent == 1 })
        for room in rooms[50...] { connection.receive(ClientHarness.confirm(room.identifier)) }
        #expect(h.scheduler.pendingCount == idle, "nothing waits: the timer is cancelled")
        h.scheduler.advance(by: 10)
        #expect(Self.subscribes(connection) == 150)
    }

    @Test("a subscribe made later with an earlier deadline re-arms the one timer for it")
    func laterSubscribeEarlierDeadline() throws {
        var options = CableOptions()
        options.subscribeRetryDelays = [2, 8]  // ±25% each
        let h = try ClientHarness(options: options)
        _ = try #require(h.connected())
        let first = try h.client.subscribe(["channel": "A"])
        h.scheduler.advance(by: 2.6)  // first re-sent (1.5–2.5 s); its next one is 6–10 s later
        #expect(first.subscribesSent == 2)
        let second = try h.client.subscribe(["channel": "B"])  // due 1.5–2.5 s from now: before the first's
        h.scheduler.advance(by: 2.6)
        #expect(second.subscribesSent == 2, "the timer was armed again for the earlier deadline")
        #expect(first.subscribesSent == 2)
    }

    @Test("a handle that joins a confirmed subscription starts subscribed, and sends nothing new")
    func lateHandleJoinsConfirmed() throws {
        let h = try ClientHarness()
        let connection = try #require(h.connected())
        let first = try h.client.subscribe(params)
        connection.receive(ClientHarness.confirm(first.identifier))
        let sentBefore = connection.sent.count
        let second = try h.client.subscribe(params)
        #expect(h.state(of: second) == .subscribed(confirmations: 1))
        #expect(connection.sent.count == sentBefore)
        #expect(second.perform("speak"))
        _ = first
    }

    @Test("releasing one handle keeps the other alive; its messages finish while the other's go on")
    func releasingOneHandle() async throws {
        let h = try ClientHarness()
        let connection = try #require(h.connected())
        var first: ChannelSubscription? = try h.client.subscribe(params)
        let second = try h.client.subscribe(params)
        connection.receive(ClientHarness.confirm(second.identifier))
        var firstLoop = try #require(first?.messages.makeAsyncIterator())
        var secondLoop = second.messages.makeAsyncIterator()
        connection.receive(ClientHarness.message(second.identifier, "1"))
        first = nil  // the handle goes, but its loop still holds its share
        #expect(Self.unsubscribes(connection) == 0)
        #expect(await firstLoop.next() == 1)
        firstLoop = second.messages.makeAsyncIterator()  // the first loop ends: its share is released
        #expect(Self.unsubscribes(connection) == 0, "the second handle keeps the server subscription")
        connection.receive(ClientHarness.message(second.identifier, "2"))
        #expect(await secondLoop.next() == 1)
        #expect(await secondLoop.next() == 2)
        #expect(await firstLoop.next() == 2)
    }

    @Test("after a drop, the resubscribe's confirmation reaches every handle")
    func resubscribeConfirmsBoth() throws {
        let h = try ClientHarness()
        let first = try h.client.subscribe(params)
        let second = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        #expect(Self.subscribes(connection) == 1)
        connection.receive(ClientHarness.confirm(first.identifier))
        connection.fail()
        #expect(h.state(of: first) == .pending)
        #expect(h.state(of: second) == .pending)
        h.scheduler.advance(by: 1.25)
        let next = try #require(h.welcome())
        #expect(Self.subscribes(next) == 1)
        next.receive(ClientHarness.confirm(first.identifier))
        #expect(h.state(of: first) == .subscribed(confirmations: 2))
        #expect(h.state(of: second) == .subscribed(confirmations: 2))
    }

    @Test("two loops and an observer on one subscription each see every message, in order")
    func severalConsumers() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(room.identifier))
        var loopA = room.messages.makeAsyncIterator()
        var loopB = room.messages.makeAsyncIterator()
        let received = Received()
        let token = room.messages.observe { value in received.values.withLock { $0.append(value) } }
        for n in 0..<50 { connection.receive(ClientHarness.message(room.identifier, "\(n)")) }
        for n in 0..<50 {
            #expect(await loopA.next() == .int(n))
            #expect(await loopB.next() == .int(n))
        }
        h.scheduler.flush()
        #expect(received.all == (0..<50).map { .int($0) })
        #expect(room.messages.droppedCount == 0)
        token.cancel()
    }

    @Test("messages held before the first consumer go to it; a consumer that starts later sees what follows")
    func heldMessagesGoToTheFirstConsumer() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.message(room.identifier, "0"))  // before the confirmation, even
        connection.receive(ClientHarness.confirm(room.identifier))
        connection.receive(ClientHarness.message(room.identifier, "1"))
        var early = room.messages.makeAsyncIterator()
        var late = room.messages.makeAsyncIterator()
        connection.receive(ClientHarness.message(room.identifier, "2"))
        #expect(await early.next() == 0)
        #expect(await early.next() == 1)
        #expect(await early.next() == 2)
        #expect(await late.next() == 2)
    }

    @Test("messages that arrive between one loop and the next are held for the next")
    func heldBetweenLoops() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(room.identifier))
        do {
            var loop = room.messages.makeAsyncIterator()
            connection.receive(ClientHarness.message(room.identifier, "1"))
            #expect(await loop.next() == 1)
        }
        connection.receive(ClientHarness.message(room.identifier, "2"))  // nobody consumes now
        var next = room.messages.makeAsyncIterator()
        #expect(await next.next() == 2)
    }

    @Test("each consumer overflows on its own, keeping its newest; the total counts every drop")
    func overflowPerConsumer() async throws {
        var options = CableOptions()
        options.messageBufferSize = 4
        let h = try ClientHarness(options: options)
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(room.identifier))
        var keepingUp = room.messages.makeAsyncIterator()
        var behind = room.messages.makeAsyncIterator()
        for n in 0..<10 {
            connection.receive(ClientHarness.message(room.identifier, "\(n)"))
            #expect(await keepingUp.next() == .int(n))
        }
        for n in 6..<10 { #expect(await behind.next() == .int(n)) }
        #expect(keepingUp.droppedCount == 0)
        #expect(behind.droppedCount == 6)
        #expect(room.messages.droppedCount == 6)
    }

    @Test("an observer's buffer is capped at messageBufferSize, whatever it asks for")
    func observerBufferIsCapped() throws {
        var options = CableOptions()
        options.messageBufferSize = 4
        let h = try ClientHarness(options: options)
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        let received = Received()
        let token = room.messages.observe(buffering: .unbounded) { value in
            received.values.withLock { $0.append(value) }
        }
        for n in 0..<10 { connection.receive(ClientHarness.message(room.identifier, "\(n)")) }
        h.scheduler.flush()  // the observer runs on the callback queue: nothing ran yet, so its buffer filled
        #expect(received.all == [6, 7, 8, 9])
        #expect(token.droppedCount == 6)
    }

    @Test("an observation keeps its subscription alive, and releasing it unsubscribes")
    func observationKeepsTheSubscription() throws {
        let h = try ClientHarness()
        let connection = try #require(h.connected())
        let received = Received()
        var token: SignalObservation? = try h.client.subscribe(params).messages.observe { value in
            received.values.withLock { $0.append(value) }
        }
        #expect(Self.subscribes(connection) == 1)
        let identifier = #"{"channel":"ChatChannel","room":"lobby"}"#
        connection.receive(ClientHarness.confirm(identifier))
        #expect(Self.unsubscribes(connection) == 0)
        connection.receive(ClientHarness.message(identifier, "1"))
        h.scheduler.flush()
        #expect(received.all == [1])
        token = nil
        h.endLinger()
        #expect(Self.unsubscribes(connection) == 1)
        _ = token
    }

    @Test("a chain's end holds the chain: a mapped observation and a state observation keep it alive")
    func chainsKeepTheSubscription() throws {
        let h = try ClientHarness()
        let connection = try #require(h.connected())
        let received = Received()
        var mapped: SignalObservation? = try h.client.subscribe(params).messages
            .compactMap { $0["n"] }
            .filter { $0 != 0 }
            .observe { value in received.values.withLock { $0.append(value) } }
        let states = Locked<[SubscriptionState]>([])
        var stateToken: SignalObservation? = try h.client.subscribe(["channel": "Other"]).state.observe { state in
            states.withLock { $0.append(state) }
        }
        #expect(Self.subscribes(connection) == 2)
        let identifier = #"{"channel":"ChatChannel","room":"lobby"}"#
        for n in 0..<3 { connection.receive(ClientHarness.message(identifier, #"{"n":\#(n)}"#)) }
        connection.receive(ClientHarness.confirm(#"{"channel":"Other"}"#))
        h.scheduler.flush()
        #expect(received.all == [1, 2])
        #expect(states.withLock { $0 } == [.pending, .subscribed(confirmations: 1)])
        mapped = nil
        h.endLinger()
        #expect(Self.unsubscribes(connection) == 1)
        stateToken = nil
        h.endLinger()
        #expect(Self.unsubscribes(connection) == 2)
        _ = (mapped, stateToken)
    }

    @Test("a loop keeps its subscription alive until it ends")
    func loopKeepsTheSubscription() async throws {
        let h = try ClientHarness()
        let connection = try #require(h.connected())
        var loop: CableMessages<JSONValue>.Iterator? = try h.client.subscribe(params).messages.makeAsyncIterator()
        let identifier = #"{"channel":"ChatChannel","room":"lobby"}"#
        connection.receive(ClientHarness.message(identifier, "7"))
        #expect(await loop?.next() == 7)
        #expect(Self.unsubscribes(connection) == 0)
        loop = nil
        h.endLinger()
        #expect(Self.unsubscribes(connection) == 1)
        _ = loop
    }

    @Test("a cancelled loop ends, and the subscription goes with it when nothing else holds it")
    func cancelledLoop() async throws {
        let h = try ClientHarness()
        let connection = try #require(h.connected())
        let started = Locked(false)
        let task = Task { [client = h.client, params] in
            var count = 0
            let messages = try client.subscribe(params).messages
            started.withLock { $0 = true }
            for await _ in messages { count += 1 }
            return count
        }
        #expect(await h.eventually { started.withLock { $0 } && Self.subscribes(connection) == 1 })
        task.cancel()
        #expect(try await task.value == 0)
        // The release comes from the task's end; then the linger's time passes, a little on each turn.
        #expect(
            await h.eventually {
                h.scheduler.advance(by: 0.01)
                return Self.unsubscribes(connection) == 1
            })
    }

    @Test("map, merge and messages(as:) work on the messages and stay multi-consumer")
    func operators() async throws {
        struct Line: Decodable, Sendable, Equatable { let n: Int }
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let other = try h.client.subscribe(["channel": "Other"])
        let connection = try #require(h.connected())
        var typed = room.messages(as: Line.self).makeAsyncIterator()
        var untyped = room.messages.makeAsyncIterator()
        let merged = Received()
        let token = room.messages.merge(with: other.messages).observe { value in
            merged.values.withLock { $0.append(value) }
        }
        connection.receive(ClientHarness.message(room.identifier, #"{"n":1}"#))
        connection.receive(ClientHarness.message(other.identifier, #"{"n":2}"#))
        connection.receive(ClientHarness.message(room.identifier, #""skip""#))
        connection.receive(ClientHarness.message(room.identifier, #"{"n":3}"#))
        #expect(await typed.next() == Line(n: 1))
        #expect(await typed.next() == Line(n: 3))
        #expect(await untyped.next() == ["n": 1])
        #expect(await untyped.next() == "skip")
        #expect(await h.eventually { merged.all.count == 4 })
        // Each input keeps its order; across inputs, arrival at the merge decides (each input's observer
        // drains on the callback queue on its own).
        #expect(merged.all.filter { $0 != ["n": 2] } == [["n": 1], "skip", ["n": 3]])
        #expect(merged.all.contains(["n": 2]))
        token.cancel()
    }
}
