import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

/// Navigation churn: after its last handle goes, a subscription stays on the server for
/// ``CableOptions/unsubscribeDelay``, and a handle on equal params within it takes it over with no command.
@Suite("Linger: a released subscription outlives its last handle for unsubscribeDelay")
struct LingerTests {
    static let params: JSONValue = ["channel": "ChatChannel", "room": "lobby"]
    static let room = #"{"channel":"ChatChannel","room":"lobby"}"#
    static let unsubscribe = #"{"command":"unsubscribe","identifier":\#(ClientHarness.quoted(room))}"#
    static let subscribe = #"{"command":"subscribe","identifier":\#(ClientHarness.quoted(room))}"#

    static func harness(delay: TimeInterval = CableOptions().unsubscribeDelay, buffer: Int = 128) throws
        -> ClientHarness
    {
        var options = CableOptions()
        options.unsubscribeDelay = delay
        options.messageBufferSize = buffer
        return try ClientHarness(options: options)
    }

    /// A confirmed subscription to the room on a welcomed connection.
    static func confirmed(_ h: ClientHarness) throws -> (ChannelSubscription, FakeTransport.Connection) {
        let connection = try #require(h.connected())
        let room = try h.client.subscribe(params)
        connection.receive(ClientHarness.confirm(Self.room))
        #expect(h.state(of: room) == .subscribed(confirmations: 1))
        return (room, connection)
    }

    @Test("the default is 300 ms; a negative or infinite delay is an invalid option")
    func defaultAndValidation() throws {
        #expect(CableOptions().unsubscribeDelay == 0.3)
        for bad in [-1, TimeInterval.infinity, .nan] {
            var options = CableOptions()
            options.unsubscribeDelay = bad
            #expect(throws: CableError.invalidOption("unsubscribeDelay")) {
                _ = try ActionCableClient(url: ClientHarness.url, options: options)
            }
        }
    }

    @Test("a handle for equal params within the delay takes over: no command, subscribed, the messages kept")
    func takeOver() async throws {
        let h = try Self.harness()
        let (old, connection) = try Self.confirmed(h)
        var oldLoop = old.messages.makeAsyncIterator()
        old.unsubscribe()  // a loop holds its handle: the screen's task ends it
        let sentAtRelease = connection.sent
        for n in 1...3 { connection.receive(ClientHarness.message(Self.room, "\(n)")) }
        #expect(await oldLoop.next() == nil, "the released handle ended at once")
        h.scheduler.advance(by: 0.25)
        let new = try h.client.subscribe(["room": "lobby", "channel": "ChatChannel"])
        connection.receive(ClientHarness.message(Self.room, "4"))
        h.scheduler.advance(by: 10)
        connection.receive(#"{"type":"ping","message":1}"#)
        #expect(connection.sent == sentAtRelease, "neither unsubscribe nor subscribe went out")
        #expect(h.state(of: new) == .subscribed(confirmations: 1))
        #expect(new.perform("speak"))
        var loop = new.messages.makeAsyncIterator()
        for n in 1...4 { #expect(await loop.next() == .int(n)) }
    }

    @Test("the messages kept while nobody holds it are bounded by the buffer: the oldest dropped and counted")
    func keptMessagesAreBounded() async throws {
        let h = try Self.harness(buffer: 4)
        var (old, connection): (ChannelSubscription?, FakeTransport.Connection) = try Self.confirmed(h)
        old = nil
        _ = old
        for n in 1...10 { connection.receive(ClientHarness.message(Self.room, "\(n)")) }
        let new = try h.client.subscribe(Self.params)
        var loop = new.messages.makeAsyncIterator()
        for n in 7...10 { #expect(await loop.next() == .int(n)) }
        #expect(new.messages.droppedCount == 6)
    }

    @Test("when the delay ends unclaimed, unsubscribe goes out, then a new handle subscribes again, in that order")
    func expiry() throws {
        let h = try Self.harness()
        let (room, connection) = try Self.confirmed(h)
        room.unsubscribe()
        h.scheduler.advance(by: 0.29)
        #expect(!connection.sent.contains(Self.unsubscribe))
        h.scheduler.advance(by: 0.01)
        #expect(connection.sent.last == Self.unsubscribe)
        connection.receive(ClientHarness.message(Self.room, "1"))  // on its way before the unsubscribe landed
        let again = try h.client.subscribe(Self.params)
        #expect(Array(connection.sent.suffix(2)) == [Self.unsubscribe, Self.subscribe])
        #expect(h.state(of: again) == .pending)
        #expect(again.messages.droppedCount == 0)
    }

    @Test("with delay 0 the last handle's release unsubscribes at once")
    func noDelay() throws {
        let h = try Self.harness(delay: 0)
        let (room, connection) = try Self.confirmed(h)
        room.unsubscribe()
        #expect(connection.sent.last == Self.unsubscribe)
    }

    @Test("a disconnect ends a lingering subscription: nothing sent, and the next session does not subscribe it")
    func disconnectEndsLinger() throws {
        let h = try Self.harness()
        let (room, connection) = try Self.confirmed(h)
        room.unsubscribe()
        connection.fail()
        h.scheduler.advance(by: 1.25)
        let next = try #require(h.welcome())
        h.endLinger()
        #expect(!connection.sent.contains(Self.unsubscribe))
        #expect(next.sent.isEmpty)
    }

    @Test("close ends a lingering subscription: nothing sent")
    func closeEndsLinger() throws {
        let h = try Self.harness()
        let (room, connection) = try Self.confirmed(h)
        room.unsubscribe()
        h.client.close()
        h.endLinger()
        #expect(!connection.sent.contains(Self.unsubscribe))
    }

    @Test("a subscription never subscribed on the live session (offline) ends at once, with nothing to send")
    func offlineReleaseEndsAtOnce() throws {
        let h = try Self.harness()
        let room = try h.client.subscribe(Self.params)
        room.unsubscribe()
        let connection = try #require(h.connected())
        #expect(connection.sent.isEmpty, "no subscribe for a subscription that is gone")
    }

    @Test("a rejected subscription does not linger: a new handle subscribes again")
    func rejectedDoesNotLinger() throws {
        let h = try Self.harness()
        let connection = try #require(h.connected())
        let room = try h.client.subscribe(Self.params)
        connection.receive(ClientHarness.reject(Self.room))
        room.unsubscribe()
        let again = try h.client.subscribe(Self.params)
        #expect(connection.sent.filter { $0 == Self.subscribe }.count == 2)
        #expect(h.state(of: again) == .pending)
    }

    @Test("released before the confirmation: the new handle gets it; its re-send waits its turn, the linger's none")
    func takeOverWhilePending() throws {
        let h = try Self.harness()
        let connection = try #require(h.connected())
        var room: ChannelSubscription? = try h.client.subscribe(Self.params)
        room = nil
        _ = room
        let new = try h.client.subscribe(Self.params)
        h.endLinger()
        #expect(connection.sent == [Self.subscribe], "the linger's end did not unsubscribe the new handle's")
        for _ in 0..<7 {  // the first re-send: 5 s ± 25% after the subscribe
            h.scheduler.advance(by: 1)
            connection.receive(#"{"type":"ping","message":1}"#)
        }
        #expect(connection.sent == [Self.subscribe, Self.subscribe])
        connection.receive(ClientHarness.confirm(Self.room))
        #expect(h.state(of: new) == .subscribed(confirmations: 1))
    }

    @Test("released while unanswered and never claimed: the re-sends stop, and the delay's end unsubscribes")
    func pendingLingerExpires() throws {
        let h = try Self.harness()
        let connection = try #require(h.connected())
        let room = try h.client.subscribe(Self.params)
        room.unsubscribe()
        h.endLinger()
        #expect(connection.sent == [Self.subscribe, Self.unsubscribe])
        for _ in 0..<60 {
            h.scheduler.advance(by: 1)
            connection.receive(#"{"type":"ping","message":1}"#)
        }
        #expect(connection.sent == [Self.subscribe, Self.unsubscribe], "no re-send for a released subscription")
    }

    @Test("100 release-and-resubscribe cycles within the delay: one subscribe on the wire, every message delivered")
    func churn() async throws {
        let h = try Self.harness()
        var (room, connection): (ChannelSubscription?, FakeTransport.Connection) = try Self.confirmed(h)
        var delivered: [JSONValue] = []
        var n = 0
        for cycle in 0..<100 {
            var loop = room?.messages.makeAsyncIterator()
            n += 1
            connection.receive(ClientHarness.message(Self.room, "\(n)"))
            if let value = await loop?.next() { delivered.append(value) }
            loop = nil
            room = nil
            n += 1
            connection.receive(ClientHarness.message(Self.room, "\(n)"))  // while nobody holds it
            h.scheduler.advance(by: Double(cycle % 6) * 0.05)  // 0 to 250 ms
            room = try h.client.subscribe(Self.params)
            var next = room?.messages.makeAsyncIterator()
            if let value = await next?.next() { delivered.append(value) }
        }
        #expect(delivered == (1...n).map { .int($0) })
        #expect(connection.sent == [Self.subscribe])
        #expect(h.state(of: try #require(room)) == .subscribed(confirmations: 1))
    }
}

/// Presence joins belong to the handles that made them.
@Suite("Linger: a released handle's presence join")
struct LingerPresenceTests {
    typealias A = AnyCableFeaturesTests

    @Test("releasing the handle that joined leaves at once, even while the subscription lingers")
    func releaseLeaves() throws {
        let h = try A.harness()
        var (room, connection): (ChannelSubscription?, FakeTransport.Connection) = try A.confirmedA(h)
        try room?.presence.join(id: "u1")
        room = nil
        _ = room
        #expect(connection.sent.last == A.leave)
        let again = try h.client.subscribe(["channel": "A"])
        #expect(connection.sent.last == A.leave, "the new handle did not join: the join was the released one's")
        let next = try ExtendedProtocolTests.reconnect(h)
        try ExtendedProtocolTests.welcome(h, #"{"type":"welcome","sid":"sid-2"}"#)
        #expect(next.sent == [#"{"command":"subscribe","identifier":\#(A.quotedA)}"#], "no join in the subscribe")
        next.receive(ClientHarness.confirm(A.a))
        #expect(!next.sent.contains { $0.contains(#""command":"join""#) })
        _ = again
    }

    @Test("another handle's join with the same id keeps the presence; with another id, it joins as that one")
    func otherJoinsStay() throws {
        let h = try A.harness()
        let (first, connection) = try A.confirmedA(h)
        var second: ChannelSubscription? = try h.client.subscribe(["channel": "A"])
        try first.presence.join(id: "u1")
        try second?.presence.join(id: "u1")
        let before = connection.sent.count
        second = nil
        #expect(connection.sent.count == before, "u1 is still joined through the first handle")
        var third: ChannelSubscription? = try h.client.subscribe(["channel": "A"])
        try third?.presence.join(id: "u2")
        func joinsAndLeaves() -> [String] {
            connection.sent.dropFirst(before).filter { $0 == A.leave || $0.contains(#""command":"join""#) }
        }
        #expect(joinsAndLeaves() == [A.leave, A.join("u2")])
        third = nil
        #expect(joinsAndLeaves() == [A.leave, A.join("u2"), A.leave, A.join("u1")], "back to the first handle's join")
        _ = (second, third)
    }
}
