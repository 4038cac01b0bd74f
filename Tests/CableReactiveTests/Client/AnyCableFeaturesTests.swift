import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

/// AnyCable 1.5 and 1.6 for apps: pub/sub streams, whisper, presence and the session, on the fake transport
/// and the manual clock (../shared/docs/ANYCABLE-FEATURES.md).
@Suite("AnyCable streams, whisper, presence and session")
struct AnyCableFeaturesTests {
    static let a = #"{"channel":"A"}"#
    static let quotedA = ClientHarness.quoted(a)

    static func harness(_ wire: CableWireProtocol = .anyCableExtended, logger: CableLogger? = nil) throws
        -> ClientHarness
    {
        var options = CableOptions()
        options.wireProtocol = wire
        options.minReconnectDelay = 1
        options.maxReconnectDelay = 1
        return try ClientHarness(options: options, logger: logger)
    }

    /// A subscribed to on a welcomed extended connection (sid `sid-1`), confirmed.
    static func confirmedA(_ h: ClientHarness) throws -> (ChannelSubscription, FakeTransport.Connection) {
        let room = try h.client.subscribe(["channel": "A"])
        h.client.connect()
        let connection = try ExtendedProtocolTests.welcome(h)
        connection.receive(ClientHarness.confirm(a))
        #expect(h.state(of: room) == .subscribed(confirmations: 1))
        return (room, connection)
    }

    static func presence(_ message: String, identifier: String = a) -> String {
        #"{"type":"presence","identifier":\#(ClientHarness.quoted(identifier)),"message":\#(message)}"#
    }

    static let presenceRequest = #"{"command":"presence","data":{},"identifier":\#(quotedA)}"#
    static let leave = #"{"command":"leave","identifier":\#(quotedA)}"#

    static func join(_ id: String, info: String? = nil) -> String {
        let info = info.map { #","info":\#($0)"# } ?? ""
        return #"{"command":"join","identifier":\#(quotedA),"presence":{"id":"\#(id)"\#(info)}}"#
    }

    /// Everything a handle's presence publishes.
    final class PresenceWatch: Sendable {
        let members = Locked<[[String: PresenceMember]?]>([])
        let events = Locked<[PresenceEvent]>([])
        let tokens: [SignalObservation]

        init(_ room: ChannelSubscription) {
            let members = members
            let events = events
            tokens = [
                room.presence.members.observe { value in members.withLock { $0.append(value) } },
                room.presence.events.observe { event in events.withLock { $0.append(event) } },
            ]
        }

        var last: [String: PresenceMember]?? { members.withLock { $0.last } }
    }

    // MARK: whisper

    @Test("whisper sends data as a JSON value, only when subscribed on a live connection; nothing is queued")
    func whisperRules() throws {
        let h = try Self.harness()
        let room = try h.client.subscribe(["channel": "A"])
        #expect(!room.whisper(["typing": true]))  // not connected
        h.client.connect()
        let connection = try ExtendedProtocolTests.welcome(h)
        #expect(!room.whisper(["typing": true]))  // pending
        connection.receive(ClientHarness.confirm(Self.a))
        #expect(room.whisper(["typing": true]))
        #expect(room.whisper("hi"))
        #expect(room.whisper(7))
        struct Typing: Encodable { let user: String }
        #expect(room.whisper(Typing(user: "ada")))
        #expect(!room.whisper(["bad": .double(.nan)]))
        #expect(
            connection.sent.filter { $0.contains("whisper") } == [
                #"{"command":"whisper","data":{"typing":true},"identifier":\#(Self.quotedA)}"#,
                #"{"command":"whisper","data":"hi","identifier":\#(Self.quotedA)}"#,
                #"{"command":"whisper","data":7,"identifier":\#(Self.quotedA)}"#,
                #"{"command":"whisper","data":{"user":"ada"},"identifier":\#(Self.quotedA)}"#,
            ])
        connection.fail()
        #expect(!room.whisper(["typing": true]))  // offline: not queued
        h.scheduler.advance(by: 2)
        let next = try ExtendedProtocolTests.welcome(h, #"{"type":"welcome","sid":"sid-2"}"#)
        #expect(!next.sent.contains { $0.contains("whisper") })
        next.receive(ClientHarness.confirm(Self.a))
        room.unsubscribe()
        #expect(!room.whisper(["typing": true]))
    }

    @Test("a whisper received carries no position: it is delivered, and never moves the replay position")
    func whisperReceivedBypassesOffsets() throws {
        let h = try Self.harness()
        let (room, connection) = try Self.confirmedA(h)
        let watch = ExtendedProtocolTests.Watch(room)
        connection.receive(ExtendedProtocolTests.broadcast(Self.a, 1))
        connection.receive(ClientHarness.message(Self.a, "99"))  // a whisper: no stream_id, epoch, offset
        connection.receive(ExtendedProtocolTests.broadcast(Self.a, 2))
        connection.receive(ClientHarness.message(Self.a, "99"))  // the same whisper again is not a repeat
        h.scheduler.flush()
        #expect(watch.values.withLock { $0 } == [1, 99, 2, 99])
        let next = try ExtendedProtocolTests.reconnect(h)
        try ExtendedProtocolTests.welcome(h, #"{"type":"welcome","sid":"sid-2","restored":true}"#)
        #expect(
            next.sent == [
                #"{"command":"history","history":{"streams":{"s":{"epoch":"e","offset":2}}},"identifier":\#(Self.quotedA)}"#
            ])
    }

    // MARK: streams

    @Test("stream(signed:) and stream(named:) subscribe to $pubsub; a stream performs nothing; rejected is rejected")
    func streams() throws {
        let h = try Self.harness(.actionCable)
        let signed = h.client.stream(signed: "InN0cmVhbSI=--abc")
        let named = h.client.stream(named: "chat/42")
        let again = h.client.stream(named: "chat/42")
        #expect(signed.identifier == #"{"channel":"$pubsub","signed_stream_name":"InN0cmVhbSI=--abc"}"#)
        #expect(named.identifier == #"{"channel":"$pubsub","stream_name":"chat/42"}"#)
        let connection = try #require(h.connected())
        #expect(
            connection.sent == [
                #"{"command":"subscribe","identifier":"{\"channel\":\"$pubsub\",\"signed_stream_name\":\"InN0cmVhbSI=--abc\"}"}"#,
                #"{"command":"subscribe","identifier":"{\"channel\":\"$pubsub\",\"stream_name\":\"chat\/42\"}"}"#,
            ]
                || connection.sent == [
                    #"{"command":"subscribe","identifier":"{\"channel\":\"$pubsub\",\"signed_stream_name\":\"InN0cmVhbSI=--abc\"}"}"#,
                    #"{"command":"subscribe","identifier":"{\"channel\":\"$pubsub\",\"stream_name\":\"chat/42\"}"}"#,
                ])
        connection.receive(ClientHarness.reject(signed.identifier))
        connection.receive(ClientHarness.confirm(named.identifier))
        #expect(h.state(of: signed) == .rejected)
        #expect(h.state(of: named) == .subscribed(confirmations: 1))
        #expect(h.state(of: again) == .subscribed(confirmations: 1))
        let sentBefore = connection.sent.count
        #expect(!named.perform("speak", ["body": "hi"]))
        #expect(connection.sent.count == sentBefore)
        #expect(named.whisper(["typing": true]))
        let received = Locked<[JSONValue]>([])
        let token = again.messages.observe { message in received.withLock { $0.append(message) } }
        connection.receive(
            #"{"identifier":\#(ClientHarness.quoted(named.identifier)),"message":{"n":1},"stream_id":"chat/42","epoch":"e","offset":1}"#
        )
        h.scheduler.flush()
        #expect(received.withLock { $0 } == [["n": 1]])
        token.cancel()
    }

    @Test("a stream with history asks for it in its first subscribe")
    func streamHistory() throws {
        let h = try Self.harness(.actionCable)
        let lobby = h.client.stream(named: "lobby", historySince: Date(timeIntervalSince1970: 1_700_000_000))
        let connection = try #require(h.connected())
        #expect(h.state(of: lobby) == .pending)
        #expect(
            connection.sent == [
                #"{"command":"subscribe","history":{"since":1700000000},"identifier":"{\"channel\":\"$pubsub\",\"stream_name\":\"lobby\"}"}"#
            ])
    }

    @Test("Turbo Streams: Turbo::StreamsChannel with a signed name; its HTML strings read as String")
    func turboStreams() async throws {
        let h = try Self.harness(.actionCable)
        let turbo = try h.client.subscribe(["channel": "Turbo::StreamsChannel", "signed_stream_name": "abc--def"])
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(turbo.identifier))
        #expect(h.state(of: turbo) == .subscribed(confirmations: 1))
        #expect(turbo.perform("noop"))  // a channel, not a $pubsub stream
        let html = Locked<[String]>([])
        let token = turbo.messages(as: String.self).observe { text in html.withLock { $0.append(text) } }
        let stream = #"<turbo-stream action=\"append\" target=\"messages\"><template>hi</template></turbo-stream>"#
        connection.receive(ClientHarness.message(turbo.identifier, "\"\(stream)\""))
        h.scheduler.flush()
        #expect(
            html.withLock { $0 }
                == [#"<turbo-stream action="append" target="messages"><template>hi</template></turbo-stream>"#])
        token.cancel()
    }

    // MARK: presence

    @Test("a join before connecting goes in the subscribe; the set is asked for, kept from events, reset on loss")
    func joinInSubscribe() throws {
        let h = try Self.harness()
        let room = try h.client.subscribe(["channel": "A"])
        let watch = PresenceWatch(room)
        try room.presence.join(id: "u1", info: ["name": "Ada"])
        h.client.connect()
        let connection = try ExtendedProtocolTests.welcome(h)
        #expect(
            connection.sent == [
                #"{"command":"subscribe","identifier":\#(Self.quotedA),"presence":{"id":"u1","info":{"name":"Ada"}}}"#
            ])
        connection.receive(ClientHarness.confirm(Self.a))
        #expect(connection.sent.last == Self.presenceRequest)  // no second join: the subscribe joined
        #expect(connection.sent.filter { $0.contains(#""command":"join""#) }.isEmpty)
        connection.receive(Self.presence(#"{"type":"join","info":{"name":"Ada"},"id":"u1"}"#))
        h.scheduler.flush()
        #expect(watch.last == .some(nil))  // not known before the answer
        connection.receive(
            Self.presence(#"{"type":"info","total":2,"records":[{"info":{"name":"Ada"},"id":"u1"},{"id":"u2"}]}"#))
        h.scheduler.flush()
        #expect(
            room.presence.members.value == [
                "u1": PresenceMember(id: "u1", info: ["name": "Ada"]), "u2": PresenceMember(id: "u2"),
            ])
        connection.receive(Self.presence(#"{"type":"join","id":"u3"}"#))
        connection.receive(Self.presence(#"{"type":"leave","id":"u2"}"#))
        h.scheduler.flush()
        #expect(Set(room.presence.members.value?.keys ?? [:].keys) == ["u1", "u3"])
        #expect(
            watch.events.withLock { $0 } == [
                .joined(PresenceMember(id: "u1", info: ["name": "Ada"])), .joined(PresenceMember(id: "u3")),
                .left(id: "u2"),
            ])
        // presence frames are not messages
        let messages = ExtendedProtocolTests.Watch(room)
        connection.receive(Self.presence(#"{"type":"join","id":"u4"}"#))
        h.scheduler.flush()
        #expect(messages.values.withLock { $0 }.isEmpty)
        connection.fail()
        h.scheduler.flush()
        #expect(room.presence.members.value == nil)
        // a fresh session: the subscribe joins again and the set is asked for again
        h.scheduler.advance(by: 2)
        let next = try ExtendedProtocolTests.welcome(h, #"{"type":"welcome","sid":"sid-2"}"#)
        #expect(
            next.sent == [
                #"{"command":"subscribe","identifier":\#(Self.quotedA),"presence":{"id":"u1","info":{"name":"Ada"}}}"#
            ])
        next.receive(ClientHarness.confirm(Self.a))
        #expect(next.sent.last == Self.presenceRequest)
    }

    @Test("joining while live sends join and asks for the set; a new id leaves first; the same join sends nothing")
    func joinWhileLive() throws {
        let h = try Self.harness()
        let (room, connection) = try Self.confirmedA(h)
        try room.presence.join(id: "u1")
        #expect(Array(connection.sent.suffix(2)) == [Self.join("u1"), Self.presenceRequest])
        let count = connection.sent.count
        try room.presence.join(id: "u1")
        #expect(connection.sent.count == count + 1)  // still asking: the set is not known yet
        connection.receive(Self.presence(#"{"type":"info","total":1,"records":[{"id":"u1"}]}"#))
        let known = connection.sent.count
        try room.presence.join(id: "u1")
        #expect(connection.sent.count == known)
        try room.presence.join(id: "u1", info: ["away": true])  // new info: joined again, no leave
        #expect(connection.sent.last == Self.join("u1", info: #"{"away":true}"#))
        try room.presence.join(id: "u2")
        #expect(Array(connection.sent.suffix(2)) == [Self.leave, Self.join("u2")])
        #expect(throws: CableError.self) { try room.presence.join(id: "u3", info: ["x": .double(.infinity)]) }
        #expect(connection.sent.last == Self.join("u2"))
    }

    @Test("leave is sent once, and forgotten: a reconnect joins no more; unsubscribe forgets too")
    func leaveForgets() throws {
        let h = try Self.harness()
        let (room, connection) = try Self.confirmedA(h)
        try room.presence.join(id: "u1")
        room.presence.leave()
        room.presence.leave()
        #expect(connection.sent.filter { $0 == Self.leave }.count == 1)
        let next = try ExtendedProtocolTests.reconnect(h)
        try ExtendedProtocolTests.welcome(h, #"{"type":"welcome","sid":"sid-2"}"#)
        #expect(next.sent == [#"{"command":"subscribe","identifier":\#(Self.quotedA)}"#])
        next.receive(ClientHarness.confirm(Self.a))
        #expect(!next.sent.contains { $0.contains(#""command":"join""#) })
        #expect(next.sent.last == Self.presenceRequest)  // the set is still kept: the app asked for it
    }

    @Test("a leave before the confirmation of a joining subscribe is sent after it")
    func leaveWhilePending() throws {
        let h = try Self.harness()
        let room = try h.client.subscribe(["channel": "A"])
        try room.presence.join(id: "u1")
        h.client.connect()
        let connection = try ExtendedProtocolTests.welcome(h)
        room.presence.leave()
        #expect(!connection.sent.contains(Self.leave))
        connection.receive(ClientHarness.confirm(Self.a))
        #expect(connection.sent.contains(Self.leave))
        #expect(!connection.sent.contains { $0.contains(#""command":"join""#) })
    }

    @Test("after a restore the client joins again (a restored session is in no presence set) and asks for the set")
    func rejoinAfterRestore() throws {
        let h = try Self.harness()
        let (room, _) = try Self.confirmedA(h)
        try room.presence.join(id: "u1", info: ["name": "Ada"])
        let next = try ExtendedProtocolTests.reconnect(h)
        try ExtendedProtocolTests.welcome(
            h, #"{"type":"welcome","sid":"sid-2","restored":true,"restored_ids":[\#(Self.quotedA)]}"#)
        #expect(next.sent == [Self.join("u1", info: #"{"name":"Ada"}"#), Self.presenceRequest])
        #expect(h.state(of: room) == .subscribed(confirmations: 1))
    }

    @Test("info(): at once notSubscribed when not live; the answer; a timeout on the scheduler; loss; error")
    func infoNeverHangs() async throws {
        let h = try Self.harness()
        let room = try h.client.subscribe(["channel": "A"])
        await #expect(throws: PresenceError.notSubscribed) { try await room.presence.info() }
        h.client.connect()
        let connection = try ExtendedProtocolTests.welcome(h)
        connection.receive(ClientHarness.confirm(Self.a))
        // the first info() asked for the set: it is kept, so the confirmation asks for it again
        #expect(connection.sent.last == Self.presenceRequest)
        var requests: Int { connection.sent.filter { $0 == Self.presenceRequest }.count }

        let answered = Task { try await room.presence.info(timeout: 5) }
        #expect(await h.eventually { requests == 2 })
        connection.receive(Self.presence(#"{"type":"info","total":1,"records":[{"id":"u1","info":null}]}"#))
        h.scheduler.flush()  // answers arrive on the callback queue
        #expect(try await answered.value == ["u1": PresenceMember(id: "u1")])

        let ended = Locked(false)
        let timedOut = Task {
            defer { ended.withLock { $0 = true } }
            return try await room.presence.info(timeout: 5)
        }
        #expect(await h.eventually { requests == 3 })
        h.scheduler.advance(by: 4.9)
        for _ in 0..<100 { await Task.yield() }
        #expect(!ended.withLock { $0 })  // not before its time
        h.scheduler.advance(by: 0.2)
        await #expect(throws: PresenceError.timedOut) { try await timedOut.value }

        let failed = Task { try await room.presence.info(timeout: 5) }
        #expect(await h.eventually { requests == 4 })
        connection.receive(Self.presence(#"{"type":"error","total":0}"#))
        h.scheduler.flush()
        await #expect(throws: PresenceError.serverError) { try await failed.value }

        let lost = Task { try await room.presence.info(timeout: 5) }
        #expect(await h.eventually { requests == 5 })
        connection.fail()
        h.scheduler.flush()
        await #expect(throws: PresenceError.disconnected) { try await lost.value }
    }

    @Test("info() ends when its task is cancelled, and when the handle is unsubscribed")
    func infoCancelled() async throws {
        let h = try Self.harness()
        let (room, connection) = try Self.confirmedA(h)
        let task = Task { try await room.presence.info(timeout: 60) }
        #expect(await h.eventually { connection.sent.last == Self.presenceRequest })
        task.cancel()
        await #expect(throws: PresenceError.cancelled) { try await task.value }
        let ended = Task { try await room.presence.info(timeout: 60) }
        #expect(await h.eventually { connection.sent.filter { $0 == Self.presenceRequest }.count == 2 })
        room.unsubscribe()
        await #expect(throws: PresenceError.notSubscribed) { try await ended.value }
    }

    @Test("handles with equal params share the join; each sees the set")
    func sharedPresence() throws {
        let h = try Self.harness()
        let (room, connection) = try Self.confirmedA(h)
        let other = try h.client.subscribe(["channel": "A"])
        try room.presence.join(id: "u1")
        connection.receive(Self.presence(#"{"type":"info","total":1,"records":[{"id":"u1"}]}"#))
        h.scheduler.flush()
        #expect(other.presence.members.value == ["u1": PresenceMember(id: "u1")])
        let late = try h.client.subscribe(["channel": "A"])
        #expect(late.presence.members.value == ["u1": PresenceMember(id: "u1")])
        other.presence.leave()
        #expect(connection.sent.last == Self.leave)
    }

    @Test("no log line holds stream names, presence ids or info, or whisper data")
    func redacted() throws {
        let lines = Locked<[String]>([])
        let logger = CableLogger(minimumLevel: .debug) { _, line in lines.withLock { $0.append(line) } }
        let h = try Self.harness(logger: logger)
        let stream = h.client.stream(named: "S3CR3T-stream")
        let signed = h.client.stream(signed: "S3CR3T-signed")
        h.client.connect()
        let connection = try ExtendedProtocolTests.welcome(h)
        connection.receive(ClientHarness.confirm(stream.identifier))
        connection.receive(ClientHarness.reject(signed.identifier))
        try stream.presence.join(id: "S3CR3T-id", info: ["name": "S3CR3T-info"])
        stream.whisper(["S3CR3T-key": "S3CR3T-data"])
        stream.whisper(["bad": .double(.nan), "S3CR3T-key2": 1])
        stream.perform("S3CR3T-action")
        connection.receive(
            Self.presence(#"{"type":"join","id":"S3CR3T-id2","info":"S3CR3T"}"#, identifier: stream.identifier))
        connection.receive(Self.presence(#"{"type":"S3CR3T"}"#, identifier: stream.identifier))
        connection.receive(Self.presence(#"{"type":"leave","id":"S3CR3T-id3"}"#, identifier: #"{"S3CR3T":1}"#))
        h.scheduler.flush()
        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.contains("whisper_unencodable") })
        #expect(logged.contains { $0.contains("perform_on_stream") })
        #expect(!logged.contains { $0.contains("S3CR3T") }, "\(logged)")
    }

    // MARK: session

    @Test("the session: its protocol, sid and restored flag from the welcome; nil while there is none")
    func session() throws {
        let h = try Self.harness()
        #expect(h.client.session.value == nil)
        _ = try Self.confirmedA(h)
        h.scheduler.flush()
        #expect(
            h.client.session.value
                == CableSession(wireProtocol: .anyCableExtended, sessionID: "sid-1", restored: false))
        #expect(!String(describing: h.client.session.value).contains("sid-1"))
        #expect(!String(reflecting: h.client.session.value).contains("sid-1"))
        let next = try ExtendedProtocolTests.reconnect(h)
        h.scheduler.flush()
        #expect(h.client.session.value == nil)
        _ = next
        try ExtendedProtocolTests.welcome(h, #"{"type":"welcome","sid":"sid-2","restored":true}"#)
        h.scheduler.flush()
        #expect(
            h.client.session.value == CableSession(wireProtocol: .anyCableExtended, sessionID: "sid-2", restored: true))

        let plain = try Self.harness(.actionCable)
        plain.client.connect()
        try ExtendedProtocolTests.welcome(
            plain, subprotocol: nil, #"{"type":"welcome","sid":"p1","restored":true}"#)
        plain.scheduler.flush()
        #expect(
            plain.client.session.value == CableSession(wireProtocol: .actionCable, sessionID: "p1", restored: false))
    }

    // MARK: stream positions

    @Test("streamPositions: the last delivered position per stream; whispers have none; Codable for keeping")
    func streamPositions() throws {
        let h = try Self.harness()
        let (room, connection) = try Self.confirmedA(h)
        #expect(room.streamPositions.isEmpty)
        connection.receive(ExtendedProtocolTests.broadcast(Self.a, 1))
        connection.receive(ExtendedProtocolTests.broadcast(Self.a, 2))
        connection.receive(ExtendedProtocolTests.broadcast(Self.a, 7, stream: "t", epoch: "f"))
        connection.receive(ClientHarness.message(Self.a, "99"))  // a whisper
        let expected = [
            StreamPosition(stream: "s", epoch: "e", offset: 2), StreamPosition(stream: "t", epoch: "f", offset: 7),
        ]
        #expect(room.streamPositions == expected)
        let kept = try JSONDecoder().decode([StreamPosition].self, from: JSONEncoder().encode(room.streamPositions))
        #expect(kept == expected)
    }

    @Test("subscribe(resumingFrom:) asks for what came after the kept positions once confirmed; repeats are dropped")
    func resumingFromPositions() throws {
        let h = try Self.harness()
        let kept = [StreamPosition(stream: "s", epoch: "e", offset: 5)]
        let room = try h.client.subscribe(["channel": "A"], resumingFrom: kept)
        let watch = ExtendedProtocolTests.Watch(room)
        h.client.connect()
        let connection = try ExtendedProtocolTests.welcome(h)
        #expect(connection.sent == [#"{"command":"subscribe","identifier":\#(Self.quotedA)}"#])
        connection.receive(ClientHarness.confirm(Self.a))
        let history =
            #"{"command":"history","history":{"streams":{"s":{"epoch":"e","offset":5}}},"identifier":\#(Self.quotedA)}"#
        #expect(connection.sent.last == history)
        for n in [8, 5, 6, 7] { connection.receive(ExtendedProtocolTests.broadcast(Self.a, n)) }
        connection.receive(ExtendedProtocolTests.history(Self.a, "confirm_history"))
        h.scheduler.flush()
        #expect(watch.values.withLock { $0 } == [6, 7, 8])
        #expect(room.lastReconnect.value == .recovered, "the replay a first subscribe asked for says how it went")

        // subscribed while a session is live: the same, after the confirmation
        let b = #"{"channel":"B"}"#
        let other = try h.client.subscribe(["channel": "B"], resumingFrom: kept)
        connection.receive(ClientHarness.confirm(b))
        #expect(
            connection.sent.last
                == #"{"command":"history","history":{"streams":{"s":{"epoch":"e","offset":5}}},"identifier":\#(ClientHarness.quoted(b))}"#
        )
        // plain Action Cable: nothing to replay
        let plain = try Self.harness(.actionCable)
        let rails = try plain.client.subscribe(["channel": "A"], resumingFrom: kept)
        let railsConnection = try #require(plain.connected())
        railsConnection.receive(ClientHarness.confirm(Self.a))
        #expect(!railsConnection.sent.contains { $0.contains(#""command":"history""#) })
        _ = (other, rails)
    }

    @Test("stream(signed:resumingFrom:) and stream(named:resumingFrom:) ask for what came after the kept positions")
    func streamsResumingFromPositions() throws {
        let h = try Self.harness()
        let kept = [StreamPosition(stream: "s", epoch: "e", offset: 5)]
        let signed = h.client.stream(signed: "signed-name", resumingFrom: kept)
        let named = h.client.stream(named: "lobby", resumingFrom: kept)
        h.client.connect()
        let connection = try ExtendedProtocolTests.welcome(h)
        for stream in [signed, named] {
            connection.receive(ClientHarness.confirm(stream.identifier))
            let history =
                #"{"command":"history","history":{"streams":{"s":{"epoch":"e","offset":5}}},"identifier":"#
                + ClientHarness.quoted(stream.identifier) + "}"
            #expect(connection.sent.last == history)
            connection.receive(ExtendedProtocolTests.history(stream.identifier, "confirm_history"))
        }
        h.scheduler.flush()
        #expect(signed.identifier.contains("signed_stream_name") && named.identifier.contains("stream_name"))
        #expect(signed.lastReconnect.value == .recovered && named.lastReconnect.value == .recovered)
    }

    @Test(
        "a first subscribe whose replay the server refuses says so: recovering, then history_rejected",
        arguments: [false, true])
    func firstSubscribeHistoryRejected(historySince: Bool) throws {
        let h = try Self.harness()
        let kept = [StreamPosition(stream: "s", epoch: "old-epoch", offset: 5)]
        let room =
            historySince
            ? try h.client.subscribe(["channel": "A"], historySince: Date(timeIntervalSince1970: 1_700_000_000))
            : try h.client.subscribe(["channel": "A"], resumingFrom: kept)
        let outcomes = Locked<[SubscriptionReconnect?]>([])
        let token = room.lastReconnect.observe { value in outcomes.withLock { $0.append(value) } }
        h.client.connect()
        let connection = try ExtendedProtocolTests.welcome(h)
        connection.receive(ClientHarness.confirm(Self.a))
        connection.receive(ExtendedProtocolTests.history(Self.a, "reject_history"))
        connection.receive(ExtendedProtocolTests.broadcast(Self.a, 40))  // live messages follow
        h.scheduler.flush()
        #expect(outcomes.withLock { $0 } == [nil, .recovering, .historyRejected])
        #expect(room.lastReconnect.value?.mayHaveMissedMessages == true)
        // a second answer for the same request changes nothing
        connection.receive(ExtendedProtocolTests.history(Self.a, "confirm_history"))
        h.scheduler.flush()
        #expect(room.lastReconnect.value == .historyRejected)
        withExtendedLifetime(token) {}
    }

    @Test("messagesWithPositions: each message with its position, from the first use on; whispers have none")
    func messagesWithPositions() throws {
        let h = try Self.harness()
        let (room, connection) = try Self.confirmedA(h)
        let plain = try h.client.subscribe(["channel": "A"])  // another handle, without positions
        let plainWatch = ExtendedProtocolTests.Watch(plain)
        connection.receive(ExtendedProtocolTests.broadcast(Self.a, 1))  // before the first use: not recorded
        h.scheduler.flush()
        let positioned = Locked<[PositionedMessage]>([])
        let token = room.messagesWithPositions.observe { message in positioned.withLock { $0.append(message) } }
        connection.receive(ExtendedProtocolTests.broadcast(Self.a, 2))
        connection.receive(ClientHarness.message(Self.a, "99"))  // a whisper
        connection.receive(ExtendedProtocolTests.broadcast(Self.a, 3, stream: "t", epoch: "f"))
        // a replay after a restore: what waited for it comes out with its own position
        let next = try ExtendedProtocolTests.reconnect(h)
        try ExtendedProtocolTests.welcome(h, #"{"type":"welcome","sid":"sid-2","restored":true}"#)
        #expect(next.sent.first?.contains(#""command":"history""#) == true)
        next.receive(ExtendedProtocolTests.broadcast(Self.a, 5))  // past the gap: waits for the replay
        next.receive(ExtendedProtocolTests.broadcast(Self.a, 4))
        next.receive(ExtendedProtocolTests.history(Self.a, "confirm_history"))
        h.scheduler.flush()
        func at(_ offset: Int, _ stream: String = "s", _ epoch: String = "e") -> StreamPosition {
            StreamPosition(stream: stream, epoch: epoch, offset: offset)
        }
        #expect(
            positioned.withLock { $0 } == [
                PositionedMessage(2, at: at(2)), PositionedMessage(99, at: nil),
                PositionedMessage(3, at: at(3, "t", "f")),
                PositionedMessage(4, at: at(4)), PositionedMessage(5, at: at(5)),
            ])
        #expect(plainWatch.values.withLock { $0 } == [1, 2, 99, 3, 4, 5])
        token.cancel()
        room.unsubscribe()
        #expect(room.messagesWithPositions.isFinished)
    }
}
