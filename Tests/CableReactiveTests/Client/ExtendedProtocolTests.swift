import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

/// AnyCable's extended protocol (`actioncable-v1-ext-json`): negotiation, pongs, and session recovery, on the
/// fake transport and the manual clock (../shared/docs/ANYCABLE-EXT.md, rules 1.3, 9 and 10).
@Suite("AnyCable extended protocol")
struct ExtendedProtocolTests {
    static let ext = CableWireProtocol.anyCableExtended.name
    static let a = #"{"channel":"A"}"#
    static let b = #"{"channel":"B"}"#

    static func harness(_ wire: CableWireProtocol = .anyCableExtended) throws -> ClientHarness {
        var options = CableOptions()
        options.wireProtocol = wire
        options.minReconnectDelay = 1
        options.maxReconnectDelay = 1
        return try ClientHarness(options: options)
    }

    /// Opens the newest connection with `subprotocol` and delivers `welcome`.
    @discardableResult
    static func welcome(
        _ h: ClientHarness, subprotocol: String? = ext, _ welcome: String = #"{"type":"welcome","sid":"sid-1"}"#
    ) throws -> FakeTransport.Connection {
        let connection = try #require(h.fake.last)
        connection.open(subprotocol: subprotocol)
        connection.receive(welcome)
        return connection
    }

    /// Drops the live connection and lets the backoff run out, so the next attempt has started.
    static func reconnect(_ h: ClientHarness) throws -> FakeTransport.Connection {
        let before = h.fake.connections.count
        try #require(h.fake.last).fail()
        h.scheduler.advance(by: 2)
        #expect(h.fake.connections.count == before + 1)
        return try #require(h.fake.last)
    }

    /// Two subscriptions, A and B, confirmed on an extended session with sid `sid-1`.
    static func twoConfirmed(_ h: ClientHarness) throws -> (ChannelSubscription, ChannelSubscription) {
        let roomA = try h.client.subscribe(["channel": "A"])
        let roomB = try h.client.subscribe(["channel": "B"])
        h.client.connect()
        let connection = try welcome(h)
        connection.receive(ClientHarness.confirm(a))
        connection.receive(ClientHarness.confirm(b))
        #expect(h.state(of: roomA) == .subscribed(confirmations: 1))
        #expect(h.state(of: roomB) == .subscribed(confirmations: 1))
        return (roomA, roomB)
    }

    static func subscribes(_ connection: FakeTransport.Connection) -> [String] {
        connection.sent.filter { $0.contains(#""command":"subscribe""#) }
    }

    @Test("plain mode offers the protocol and the sentinel; extended mode offers the extended protocol alone")
    func offers() throws {
        let plain = try Self.harness(.actionCable)
        plain.client.connect()
        #expect(plain.fake.last?.protocols == ["actioncable-v1-json", "actioncable-unsupported"])
        let extended = try Self.harness()
        extended.client.connect()
        #expect(extended.fake.last?.protocols == ["actioncable-v1-ext-json"])
    }

    @Test(
        "every answer to the offer: only the extended protocol gets pongs and a restore id; the sentinel stops",
        arguments: [
            (CableWireProtocol.anyCableExtended, "actioncable-v1-ext-json", true),
            (.anyCableExtended, nil, false),  // Rails knows none of the offer and answers with no protocol
            (.anyCableExtended, "actioncable-v1-json", false),
            (.actionCable, "actioncable-v1-json", false),
            (.actionCable, nil, false),
            (.actionCable, "actioncable-v1-ext-json", false),  // not offered: no extended behaviour
        ] as [(CableWireProtocol, String?, Bool)])
    func negotiation(wire: CableWireProtocol, answer: String?, extended: Bool) throws {
        let h = try Self.harness(wire)
        h.client.connect()
        let connection = try Self.welcome(h, subprotocol: answer)
        #expect(h.state == .connected)
        connection.receive(#"{"type":"ping","message":1700000000}"#)
        #expect(connection.sent.contains(#"{"command":"pong"}"#) == extended)
        let next = try Self.reconnect(h)
        #expect(next.request.value(forHeader: "X-AnyCable-Restore-SID") == (extended ? "sid-1" : nil))
    }

    @Test("a server that picks actioncable-unsupported, not offered in extended mode, still stops the client")
    func sentinelStops() throws {
        let h = try Self.harness()
        h.client.connect()
        try #require(h.fake.last).open(subprotocol: "actioncable-unsupported")
        #expect(h.state == .stopped(reason: .unsupportedProtocol))
    }

    @Test("a restoring welcome keeps the listed subscriptions without a subscribe; the others are resubscribed")
    func restoresListed() throws {
        let h = try Self.harness()
        let (roomA, roomB) = try Self.twoConfirmed(h)
        h.scheduler.flush()
        #expect(roomA.lastReconnect.value == nil)
        let next = try Self.reconnect(h)
        #expect(h.state(of: roomA) == .pending)
        #expect(next.request.value(forHeader: "X-AnyCable-Restore-SID") == "sid-1")
        try Self.welcome(h, #"{"type":"welcome","sid":"sid-2","restored":true,"restored_ids":["{\"channel\":\"A\"}"]}"#)
        #expect(Self.subscribes(next) == [#"{"command":"subscribe","identifier":"{\"channel\":\"B\"}"}"#])
        #expect(h.state(of: roomA) == .subscribed(confirmations: 1))
        h.scheduler.flush()
        #expect(roomA.lastReconnect.value == .restored && roomA.subscribesSent == 0)
        #expect(roomA.perform("speak", ["body": "hi"]))
        h.scheduler.flush()
        #expect(h.state(of: roomB) == .pending && roomB.lastReconnect.value == .resubscribed)
        next.receive(ClientHarness.confirm(Self.b))
        #expect(h.state(of: roomB) == .subscribed(confirmations: 2))
        // the restored session's own sid is what the attempt after it presents
        #expect(try Self.reconnect(h).request.value(forHeader: "X-AnyCable-Restore-SID") == "sid-2")
    }

    @Test("restored with no restored_ids restores every subscription of the previous session")
    func restoresAllWithoutList() throws {
        let h = try Self.harness()
        let (roomA, roomB) = try Self.twoConfirmed(h)
        let next = try Self.reconnect(h)
        try Self.welcome(h, #"{"type":"welcome","sid":"sid-2","restored":true}"#)
        #expect(Self.subscribes(next).isEmpty)
        #expect(h.state(of: roomA) == .subscribed(confirmations: 1))
        #expect(h.state(of: roomB) == .subscribed(confirmations: 1))
        h.scheduler.flush()
        #expect(roomB.lastReconnect.value == .restored)
    }

    @Test("restored_ids in another JSON spelling still name our subscription")
    func restoresOtherSpelling() throws {
        let h = try Self.harness()
        let (roomA, roomB) = try Self.twoConfirmed(h)
        let next = try Self.reconnect(h)
        try Self.welcome(h, #"{"type":"welcome","sid":"s","restored":true,"restored_ids":["{\"channel\": \"A\"}"]}"#)
        #expect(Self.subscribes(next) == [#"{"command":"subscribe","identifier":"{\"channel\":\"B\"}"}"#])
        h.scheduler.flush()
        #expect(roomA.lastReconnect.value == .restored && roomB.lastReconnect.value == .resubscribed)
    }

    @Test(
        "a handle made while disconnected, for params the welcome lists, is adopted: no subscribe the server would ignore"
    )
    func adoptsListedUnconfirmed() throws {
        let h = try Self.harness()
        let (roomA, roomB) = try Self.twoConfirmed(h)
        try #require(h.fake.last).fail()
        roomB.unsubscribe()  // while down: the server still has B
        let again = try h.client.subscribe(["channel": "B"])
        let late = try h.client.subscribe(["channel": "C"])
        h.scheduler.advance(by: 2)
        let next = try #require(h.fake.last)
        try Self.welcome(
            h,
            #"{"type":"welcome","sid":"s","restored":true,"restored_ids":["{\"channel\":\"A\"}","{\"channel\":\"B\"}"]}"#
        )
        #expect(Self.subscribes(next) == [#"{"command":"subscribe","identifier":"{\"channel\":\"C\"}"}"#])
        #expect(!next.sent.contains { $0.contains(#""command":"unsubscribe""#) })
        h.scheduler.flush()
        #expect(h.state(of: again) == .subscribed(confirmations: 1))
        #expect(again.lastReconnect.value == nil && again.subscribesSent == 0)
        #expect(again.perform("speak", ["body": "hi"]))
        #expect(h.state(of: late) == .pending && late.lastReconnect.value == nil)
        #expect(roomA.lastReconnect.value == .restored)
    }

    @Test("a restored subscription no handle holds any more gets an unsubscribe, in the server's spelling")
    func unsubscribesUnheldRestored() throws {
        let h = try Self.harness()
        let (roomA, roomB) = try Self.twoConfirmed(h)
        try #require(h.fake.last).fail()
        roomB.unsubscribe()  // while down: nothing can be sent
        h.scheduler.advance(by: 2)
        let next = try #require(h.fake.last)
        try Self.welcome(
            h,
            #"{"type":"welcome","sid":"s","restored":true,"restored_ids":["{\"channel\":\"A\"}","{\"channel\": \"B\"}"]}"#
        )
        #expect(Self.subscribes(next).isEmpty)
        #expect(next.sent == [#"{"command":"unsubscribe","identifier":"{\"channel\": \"B\"}"}"#])
        h.scheduler.flush()
        #expect(h.state(of: roomA) == .subscribed(confirmations: 1) && roomA.lastReconnect.value == .restored)
        // the same params subscribed again later are a new server subscription, answered as usual
        let again = try h.client.subscribe(["channel": "B"])
        #expect(Self.subscribes(next) == [#"{"command":"subscribe","identifier":"{\"channel\":\"B\"}"}"#])
        next.receive(ClientHarness.confirm(Self.b))
        #expect(h.state(of: again) == .subscribed(confirmations: 1))
    }

    @Test("a welcome that restored nothing resubscribes everything")
    func notRestored() throws {
        let h = try Self.harness()
        let (roomA, roomB) = try Self.twoConfirmed(h)
        let next = try Self.reconnect(h)
        try Self.welcome(h, #"{"type":"welcome","sid":"sid-2"}"#)
        #expect(Self.subscribes(next).count == 2)
        h.scheduler.flush()
        #expect(roomA.lastReconnect.value == .resubscribed && roomB.lastReconnect.value == .resubscribed)
    }

    @Test("a server disconnect, an unauthorized answer and the app's disconnect() forget the session id")
    func forgetsSessionID() throws {
        let h = try Self.harness()
        h.client.connect()
        try Self.welcome(h).receive(#"{"type":"disconnect","reason":"server_restart","reconnect":true}"#)
        h.scheduler.advance(by: 2)
        #expect(h.fake.last?.request.value(forHeader: "X-AnyCable-Restore-SID") == nil)

        try Self.welcome(h)
        h.client.disconnect()
        h.client.connect()
        #expect(h.fake.last?.request.value(forHeader: "X-AnyCable-Restore-SID") == nil)

        try Self.welcome(h)
        try #require(h.fake.last).fail()
        h.scheduler.advance(by: 2)
        #expect(h.fake.last?.request.value(forHeader: "X-AnyCable-Restore-SID") == "sid-1")
        try #require(h.fake.last).fail(WebSocketError(.upgradeRejected(status: 401)))  // the upgrade is refused
        #expect(h.state == .stopped(reason: .unauthorized(serverReason: nil)))  // no onUnauthorized to refresh
        h.client.connect()
        #expect(h.fake.last?.request.value(forHeader: "X-AnyCable-Restore-SID") == nil)
    }

    @Test("onRequest sees the restore header and may remove it (another user logged in)")
    func appMayDropRestore() async throws {
        var options = CableOptions()
        options.wireProtocol = .anyCableExtended
        let seen = Locked<[String?]>([])
        let h = try ClientHarness(options: options) { request in
            seen.withLock { $0.append(request.value(forHeader: "x-anycable-restore-sid")) }
            request.removeHeader("X-AnyCable-Restore-SID")
        }
        h.client.connect()
        #expect(await h.eventually { h.fake.last != nil })
        try Self.welcome(h)
        try #require(h.fake.last).fail()
        h.scheduler.advance(by: 2)
        #expect(await h.eventually { h.fake.connections.count == 2 })
        #expect(seen.withLock { $0 } == [nil, "sid-1"])
        #expect(h.fake.last?.request.value(forHeader: "X-AnyCable-Restore-SID") == nil)
    }

    @Test("unsubscribing a restored subscription tells the server, which still has it")
    func unsubscribeRestored() throws {
        let h = try Self.harness()
        let (roomA, _) = try Self.twoConfirmed(h)
        let next = try Self.reconnect(h)
        try Self.welcome(h, #"{"type":"welcome","sid":"s","restored":true}"#)
        roomA.unsubscribe()
        h.endLinger()
        #expect(next.sent.contains(#"{"command":"unsubscribe","identifier":"{\"channel\":\"A\"}"}"#))
    }

    @Test("the session id and stream positions are never logged")
    func sessionIDNotLogged() throws {
        let lines = Locked<[String]>([])
        var options = CableOptions()
        options.wireProtocol = .anyCableExtended
        let fake = FakeTransport()
        let scheduler = ManualScheduler()
        let client = try ActionCableClient(
            url: ClientHarness.url, options: options, transport: fake, scheduler: scheduler,
            logger: CableLogger(minimumLevel: .debug) { _, line in lines.withLock { $0.append(line) } })
        let room = try client.subscribe(["channel": "A"])
        client.connect()
        let connection = try #require(fake.last)
        connection.open(subprotocol: Self.ext)
        connection.receive(#"{"type":"welcome","sid":"SECRET-SID-1"}"#)
        connection.receive(ClientHarness.confirm(Self.a))
        connection.receive(Self.broadcast(Self.a, 7, stream: "SECRET-STREAM", epoch: "SECRET-EPOCH"))
        connection.fail()
        scheduler.advance(by: 5)
        let next = try #require(fake.last)
        next.open(subprotocol: Self.ext)
        next.receive(#"{"type":"welcome","sid":"SECRET-SID-2","restored":true}"#)
        scheduler.flush()
        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.contains("restored") })
        #expect(!logged.contains { $0.contains("SECRET") }, "no session id, stream or epoch")
        scheduler.flush()
        #expect(room.lastReconnect.value == .recovering)  // it saw a position: a replay was asked for
        client.close()
    }

    // MARK: Stream history

    /// A broadcast of `n` on stream `s` at offset `n`, as AnyCable sends it with its broker on.
    static func broadcast(_ identifier: String, _ n: Int, stream: String = "s", epoch: String = "e") -> String {
        let quoted = ClientHarness.quoted(identifier)
        return #"{"identifier":\#(quoted),"message":\#(n),"stream_id":"\#(stream)","epoch":"\#(epoch)","offset":\#(n)}"#
    }

    static func history(_ identifier: String, _ type: String) -> String {
        #"{"identifier":\#(ClientHarness.quoted(identifier)),"type":"\#(type)"}"#
    }

    /// Everything `room` delivers, as integers, and every value of its lastReconnect.
    final class Watch: Sendable {
        let values = Locked<[Int]>([])
        let reconnects = Locked<[SubscriptionReconnect?]>([])
        let tokens: [SignalObservation]

        init(_ room: ChannelSubscription) {
            let values = values
            let reconnects = reconnects
            tokens = [
                room.messages.observe { message in values.withLock { $0.append(message.intValue ?? -1) } },
                room.lastReconnect.observe { value in reconnects.withLock { $0.append(value) } },
            ]
        }
    }

    @Test(
        "a restored subscription asks for a replay since its last positions; live and replayed come out once, in order")
    func restoredReplay() throws {
        let h = try Self.harness()
        let room = try h.client.subscribe(["channel": "A"])
        let watch = Watch(room)
        h.client.connect()
        let first = try Self.welcome(h)
        first.receive(ClientHarness.confirm(Self.a))
        for n in 1...3 { first.receive(Self.broadcast(Self.a, n)) }
        first.receive(Self.broadcast(Self.a, 2))  // a repeat
        let next = try Self.reconnect(h)
        try Self.welcome(h, #"{"type":"welcome","sid":"sid-2","restored":true}"#)
        #expect(
            next.sent == [
                #"{"command":"history","history":{"streams":{"s":{"epoch":"e","offset":3}}},"identifier":"{\"channel\":\"A\"}"}"#
            ])
        #expect(h.state(of: room) == .subscribed(confirmations: 1))
        // AnyCable does not hold live broadcasts back during the replay, and may repeat one in both
        for n in [6, 4, 5, 6, 7] { next.receive(Self.broadcast(Self.a, n)) }
        h.scheduler.flush()
        #expect(watch.values.withLock { $0 } == [1, 2, 3, 4, 5, 6, 7])
        h.scheduler.flush()
        #expect(room.lastReconnect.value == .recovering)
        next.receive(Self.history(Self.a, "confirm_history"))
        h.scheduler.flush()
        #expect(watch.reconnects.withLock { $0 } == [nil, .recovering, .recovered])
        h.scheduler.flush()
        #expect(room.lastReconnect.value?.mayHaveMissedMessages == false)
    }

    @Test("a rejected replay releases what waited and says the subscription may have missed messages")
    func rejectedReplay() throws {
        let h = try Self.harness()
        let room = try h.client.subscribe(["channel": "A"])
        let watch = Watch(room)
        h.client.connect()
        let first = try Self.welcome(h)
        first.receive(ClientHarness.confirm(Self.a))
        first.receive(Self.broadcast(Self.a, 1))
        let next = try Self.reconnect(h)
        try Self.welcome(h, #"{"type":"welcome","sid":"sid-2","restored":true}"#)
        next.receive(Self.broadcast(Self.a, 9))  // live, past a gap: waits for the replay
        h.scheduler.flush()
        #expect(watch.values.withLock { $0 } == [1])
        next.receive(Self.history(Self.a, "reject_history"))
        h.scheduler.flush()
        #expect(watch.values.withLock { $0 } == [1, 9])
        h.scheduler.flush()
        #expect(room.lastReconnect.value == .historyRejected)
        h.scheduler.flush()
        #expect(room.lastReconnect.value?.mayHaveMissedMessages == true)
    }

    @Test("a resubscribed subscription with positions asks for its replay once the server confirms it")
    func resubscribedReplay() throws {
        let h = try Self.harness()
        let room = try h.client.subscribe(["channel": "A"])
        let watch = Watch(room)
        h.client.connect()
        let first = try Self.welcome(h)
        first.receive(ClientHarness.confirm(Self.a))
        first.receive(Self.broadcast(Self.a, 1, epoch: "e1"))
        let next = try Self.reconnect(h)
        try Self.welcome(h, #"{"type":"welcome","sid":"sid-2"}"#)  // not restored
        h.scheduler.flush()
        #expect(room.lastReconnect.value == .recovering)
        #expect(Self.subscribes(next).count == 1)
        #expect(!next.sent.contains { $0.contains("history") })
        next.receive(ClientHarness.confirm(Self.a))
        #expect(next.sent.last?.contains(#""command":"history""#) == true)
        #expect(next.sent.last?.contains(#""epoch":"e1","offset":1"#) == true)
        next.receive(Self.broadcast(Self.a, 2, epoch: "e1"))
        next.receive(Self.history(Self.a, "confirm_history"))
        h.scheduler.flush()
        #expect(watch.values.withLock { $0 } == [1, 2])
        h.scheduler.flush()
        #expect(room.lastReconnect.value == .recovered)
        #expect(h.state(of: room) == .subscribed(confirmations: 2))
    }

    @Test("with no positions seen, nothing is replayed: restored and resubscribed say messages may be missing")
    func nothingToReplay() throws {
        let h = try Self.harness()
        let (roomA, roomB) = try Self.twoConfirmed(h)
        let next = try Self.reconnect(h)
        try Self.welcome(h, #"{"type":"welcome","sid":"sid-2","restored":true,"restored_ids":["{\"channel\":\"A\"}"]}"#)
        h.scheduler.flush()
        #expect(!next.sent.contains { $0.contains("history") })
        h.scheduler.flush()
        #expect(roomA.lastReconnect.value == .restored && roomB.lastReconnect.value == .resubscribed)
        h.scheduler.flush()
        #expect(roomA.lastReconnect.value?.mayHaveMissedMessages == true)
    }

    @Test("a plain session never asks for a replay, though its messages carry positions")
    func plainNeverReplays() throws {
        let h = try Self.harness(.actionCable)
        let room = try h.client.subscribe(["channel": "A"])
        h.client.connect()
        let first = try Self.welcome(h, subprotocol: "actioncable-v1-json")
        first.receive(ClientHarness.confirm(Self.a))
        first.receive(Self.broadcast(Self.a, 1))
        let next = try Self.reconnect(h)
        try Self.welcome(h, subprotocol: "actioncable-v1-json")
        next.receive(ClientHarness.confirm(Self.a))
        #expect(!next.sent.contains { $0.contains("history") })
        h.scheduler.flush()
        #expect(room.lastReconnect.value == .resubscribed)
    }

    @Test("a reconnect during a replay asks again from the last message delivered; still once each, in order")
    func reconnectDuringReplay() throws {
        let h = try Self.harness()
        let room = try h.client.subscribe(["channel": "A"])
        let watch = Watch(room)
        h.client.connect()
        let first = try Self.welcome(h)
        first.receive(ClientHarness.confirm(Self.a))
        for n in 1...2 { first.receive(Self.broadcast(Self.a, n)) }
        let second = try Self.reconnect(h)
        try Self.welcome(h, #"{"type":"welcome","sid":"sid-2","restored":true}"#)
        second.receive(Self.broadcast(Self.a, 8))  // live, waits
        for n in 3...4 { second.receive(Self.broadcast(Self.a, n)) }  // part of the replay, then the drop
        let third = try Self.reconnect(h)
        #expect(third.request.value(forHeader: "X-AnyCable-Restore-SID") == "sid-2")
        try Self.welcome(h, #"{"type":"welcome","sid":"sid-3","restored":true}"#)
        #expect(third.sent.contains { $0.contains(#""offset":4"#) }, "from the last delivered, not the held 8")
        for n in [3, 4, 5, 6, 7, 8, 9] { third.receive(Self.broadcast(Self.a, n)) }
        third.receive(Self.history(Self.a, "confirm_history"))
        h.scheduler.flush()
        #expect(watch.values.withLock { $0 } == Array(1...9))
        #expect(room.lastReconnect.value == .recovered)
        // Two reconnects, each published (the second with the first's outcome), then the replay's end.
        #expect(watch.reconnects.withLock { $0 } == [nil, .recovering, .recovering, .recovered])
    }

    @Test("a new epoch during the replay starts the stream afresh, and the rejected replay says so")
    func epochChangeDuringReplay() throws {
        let h = try Self.harness()
        let room = try h.client.subscribe(["channel": "A"])
        let watch = Watch(room)
        h.client.connect()
        let first = try Self.welcome(h)
        first.receive(ClientHarness.confirm(Self.a))
        first.receive(Self.broadcast(Self.a, 1))
        let next = try Self.reconnect(h)
        try Self.welcome(h, #"{"type":"welcome","sid":"sid-2","restored":true}"#)
        next.receive(Self.broadcast(Self.a, 1, epoch: "f"))  // the server restarted: offset 1 of epoch f
        next.receive(Self.history(Self.a, "reject_history"))
        next.receive(Self.broadcast(Self.a, 2, epoch: "f"))
        h.scheduler.flush()
        #expect(watch.values.withLock { $0 } == [1, 1, 2])
        #expect(room.lastReconnect.value == .historyRejected)
    }

    @Test("historySince: the first subscribe asks for history since then; replayed and live come out sorted")
    func historySince() throws {
        let h = try Self.harness()
        let room = try h.client.subscribe(["channel": "A"], historySince: Date(timeIntervalSince1970: 1_700_000_000.9))
        let watch = Watch(room)
        h.client.connect()
        let first = try Self.welcome(h)
        #expect(
            first.sent == [
                #"{"command":"subscribe","history":{"since":1700000000},"identifier":"{\"channel\":\"A\"}"}"#
            ])
        // dropped before the confirmation: the next session asks again
        let second = try Self.reconnect(h)
        try Self.welcome(h)
        #expect(second.sent.first?.contains(#""since":1700000000"#) == true)
        second.receive(ClientHarness.confirm(Self.a))
        second.receive(Self.broadcast(Self.a, 11))  // live, before the replay
        for n in 5...10 { second.receive(Self.broadcast(Self.a, n)) }
        h.scheduler.flush()
        #expect(watch.values.withLock { $0 }.isEmpty, "waiting for the replay to end")
        second.receive(Self.history(Self.a, "confirm_history"))
        second.receive(Self.broadcast(Self.a, 12))
        h.scheduler.flush()
        #expect(watch.values.withLock { $0 } == Array(5...12))
        #expect(room.lastReconnect.value == .recovered, "the replay the first subscribe asked for is complete")
        // once confirmed, later subscribes replay from positions instead
        let third = try Self.reconnect(h)
        try Self.welcome(h)
        #expect(!third.sent.contains { $0.contains("since") })
    }
}
