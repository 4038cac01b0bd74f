import CableReactive
import Foundation
import Signals
import Testing

@testable import CableTesting

/// AnyCable's pub/sub streams, whisper and presence in LocalCableServer, from raw sockets: the client has no
/// API for them yet, so these tests send the commands AnyCable's JS SDK sends and check every frame.
///
/// Silence is never asserted with a timeout: a peer sends a "barrier" (a subscribe the server confirms) and
/// expects the confirmation as its very next frame, since the server answers a connection's commands in order.
@Suite("LocalCableServer pub/sub streams, whisper and presence")
struct PubSubServerTests {
    static let secret = "s3Krit"

    /// A raw WebSocket peer, welcomed, with helpers for Action Cable commands.
    final class Peer: Sendable {
        let socket: RawSocket
        let id: LocalCableServer.ConnectionID
        let welcome: JSONValue
        private let barriers = Locked(0)

        init(socket: RawSocket, id: LocalCableServer.ConnectionID, welcome: JSONValue) {
            self.socket = socket
            self.id = id
            self.welcome = welcome
        }

        static func connect(
            _ server: LocalCableServer, protocols: String = "actioncable-v1-json", extra: [String] = []
        ) async throws -> Peer {
            let socket = try RawSocket(port: server.port, timeout: 15)
            let head = try #require(await socket.upgrade(protocols: protocols, extra: extra))
            try #require(head.hasPrefix("HTTP/1.1 101"))
            let welcome = try #require(PubSubServerTests.json(await socket.nextText()))
            try #require(welcome["type"] == "welcome")
            // Peers connect one after the other: the newest open connection is this one.
            let id = try #require(server.connections.map(\.id).max())
            return Peer(socket: socket, id: id, welcome: welcome)
        }

        func send(_ frame: JSONValue) { socket.sendText(frame.description) }

        func send(_ command: String, _ identifier: String, _ extra: [String: JSONValue] = [:]) {
            var frame = extra
            frame["command"] = .string(command)
            frame["identifier"] = .string(identifier)
            send(.object(frame))
        }

        /// The next text frame (pings skipped), parsed.
        func next() async -> JSONValue? { PubSubServerTests.json(await socket.nextText()) }

        /// Subscribes and returns the reply's `type`.
        func subscribe(_ identifier: String, _ extra: [String: JSONValue] = [:]) async -> String? {
            send("subscribe", identifier, extra)
            let reply = await next()
            guard reply?["identifier"] == .string(identifier) else { return "unexpected: \(String(describing: reply))" }
            return reply?["type"]?.stringValue
        }

        /// Whether nothing arrived before the answer to a command sent now.
        func receivedNothing() async -> Bool {
            let n = barriers.withLock { n in
                n += 1
                return n
            }
            let identifier = PubSubServerTests.identifier(["channel": "Barrier", "n": .int(n)])
            return await subscribe(identifier) == "confirm_subscription"
        }
    }

    static func json(_ text: String?) -> JSONValue? { text.flatMap { try? JSONValue(parsing: $0) } }

    static func identifier(_ params: JSONValue) -> String { params.description }

    static func signed(_ name: String) -> String {
        identifier([
            "channel": "$pubsub",
            "signed_stream_name": .string(LocalCableServer.signedStreamName(name, secret: secret)),
        ])
    }

    static func publicStream(_ name: String) -> String {
        identifier(["channel": "$pubsub", "stream_name": .string(name)])
    }

    static func turbo(_ name: String) -> String {
        identifier([
            "channel": "Turbo::StreamsChannel",
            "signed_stream_name": .string(LocalCableServer.signedStreamName(name, secret: secret)),
        ])
    }

    static func server(
        reliable: Bool = false, _ configure: (inout LocalCableServer.PubSub) -> Void = { _ in }
    ) throws -> LocalCableServer {
        var options = Fixture.serverOptions(pingInterval: nil)
        var pubSub = LocalCableServer.PubSub(secret: secret)
        pubSub.publicStreams = true
        configure(&pubSub)
        options.pubSub = pubSub
        if reliable { options.reliableStreams = LocalCableServer.ReliableStreams() }
        return try LocalCableServer(options: options)
    }

    static func presence(_ identifier: String, _ message: JSONValue) -> JSONValue {
        ["type": "presence", "identifier": .string(identifier), "message": message]
    }

    static func joined(_ identifier: String, _ id: String, _ info: JSONValue? = nil) -> JSONValue {
        var event: [String: JSONValue] = ["type": "join", "id": .string(id)]
        if let info { event["info"] = info }
        return presence(identifier, .object(event))
    }

    static func left(_ identifier: String, _ id: String) -> JSONValue {
        presence(identifier, ["type": "leave", "id": .string(id)])
    }

    // MARK: Signing

    @Test("signs AnyCable's vector and verifies only what it signed")
    func signing() {
        let signed = LocalCableServer.signedStreamName("chat:2021", secret: "s3Krit")
        #expect(signed == "ImNoYXQ6MjAyMSI=--f9ee45dbccb1da04d8ceb99cc820207804370ba0d06b46fc3b8b373af1315628")
        #expect(LocalCableServer.verifiedStreamName(signed, secret: "s3Krit") == "chat:2021")
        #expect(LocalCableServer.verifiedStreamName(signed, secret: "other") == nil)
        #expect(LocalCableServer.verifiedStreamName(String(signed.dropLast()) + "9", secret: "s3Krit") == nil)
        #expect(LocalCableServer.verifiedStreamName(signed.uppercased(), secret: "s3Krit") == nil)
        #expect(LocalCableServer.verifiedStreamName("ImNoYXQ6MjAyMSI=", secret: "s3Krit") == nil, "no digest")
        #expect(LocalCableServer.verifiedStreamName("", secret: "s3Krit") == nil)
        let odd = "a--b <&> \u{2028} é"
        let oddSigned = LocalCableServer.signedStreamName(odd, secret: "s3Krit")
        #expect(LocalCableServer.verifiedStreamName(oddSigned, secret: "s3Krit") == odd, "split at the last --")
        let json = String(
            decoding: Data(base64Encoded: String(oddSigned.prefix { $0 != "-" })) ?? Data(), as: UTF8.self)
        #expect(json == #""a--b \u003c\u0026\u003e \u2028 é""#, "escaped as Go and Rails write it")
        #expect(LocalCableServer.verifiedStreamName(Self.signedPayload("[\"a\"]"), secret: "s3Krit") == nil)
        #expect(LocalCableServer.verifiedStreamName(Self.signedPayload("\"ok\""), secret: "s3Krit") == "ok")
    }

    /// A correctly signed arbitrary JSON payload.
    static func signedPayload(_ json: String, secret: String = secret) -> String {
        let encoded = Data(json.utf8).base64EncodedString()
        return encoded + "--" + HMACSHA256.hex(HMACSHA256.mac(key: Array(secret.utf8), message: Array(encoded.utf8)))
    }

    @Test("rejects a negative or infinite presence TTL")
    func validation() {
        var options = LocalCableServer.Options()
        var pubSub = LocalCableServer.PubSub(secret: "x")
        pubSub.presenceTTL = -1
        options.pubSub = pubSub
        #expect(throws: LocalCableServerError(.invalidOption, detail: "pubSub.presenceTTL")) { try options.validate() }
        pubSub.presenceTTL = .infinity
        options.pubSub = pubSub
        #expect(throws: LocalCableServerError(.invalidOption, detail: "pubSub.presenceTTL")) { try options.validate() }
    }

    // MARK: Subscriptions

    @Test("$pubsub: signed names verify, tampered and non-string ones are rejected, without the subscription rule")
    func signedSubscriptions() async throws {
        let server = try Self.server()
        server.subscriptionRule = { _, _ in .reject }
        let peer = try await Peer.connect(server)
        #expect(await peer.subscribe(Self.signed("chat:2021")) == "confirm_subscription")
        let good = LocalCableServer.signedStreamName("chat:2021", secret: Self.secret)
        let tampered = Self.identifier([
            "channel": "$pubsub", "signed_stream_name": .string(String(good.dropLast()) + "0"),
        ])
        #expect(await peer.subscribe(tampered) == "reject_subscription")
        let array = Self.identifier(["channel": "$pubsub", "signed_stream_name": .string(Self.signedPayload("[1]"))])
        #expect(await peer.subscribe(array) == "reject_subscription")
        let otherSecret = Self.identifier([
            "channel": "$pubsub",
            "signed_stream_name": .string(LocalCableServer.signedStreamName("chat:2021", secret: "nope")),
        ])
        #expect(await peer.subscribe(otherSecret) == "reject_subscription")
        #expect(await peer.subscribe(Self.identifier(["channel": "$pubsub"])) == "reject_subscription", "no name")
        let number = Self.identifier(["channel": "$pubsub", "stream_name": 5])
        #expect(await peer.subscribe(number) == "reject_subscription", "a name that is not a string")
        let mixed = Self.identifier(["channel": "$pubsub", "signed_stream_name": .string(good), "stream_name": 5])
        #expect(await peer.subscribe(mixed) == "reject_subscription", "any field of the wrong type")
        #expect(server.connections.first?.subscriptions == [Self.signed("chat:2021")])
    }

    @Test("$pubsub: public streams are rejected when off and confirmed when on")
    func publicSubscriptions() async throws {
        let closed = try Self.server { $0.publicStreams = false }
        let peer = try await Peer.connect(closed)
        #expect(await peer.subscribe(Self.publicStream("chat/42")) == "reject_subscription")
        #expect(await peer.subscribe(Self.signed("chat/42")) == "confirm_subscription")
        let open = try Self.server()
        let other = try await Peer.connect(open)
        #expect(await other.subscribe(Self.publicStream("chat/42")) == "confirm_subscription")
    }

    @Test("$pubsub without pubSub, or Turbo with turboStreams off: an ordinary channel for the subscription rule")
    func ordinaryWhenOff() async throws {
        let rails = try LocalCableServer(options: Fixture.serverOptions(pingInterval: nil))
        let peer = try await Peer.connect(rails)
        #expect(await peer.subscribe(Self.publicStream("chat/42")) == "confirm_subscription")
        let server = try Self.server { $0.turboStreams = false }
        server.subscriptionRule = { params, _ in params["channel"] == "Turbo::StreamsChannel" ? .reject : .confirm }
        let other = try await Peer.connect(server)
        #expect(await other.subscribe(Self.turbo("t")) == "reject_subscription", "decided by the rule")
    }

    @Test("broadcast(toStream:) reaches $pubsub (signed wins over stream_name) and Turbo with the plain stream_id")
    func streamBroadcasts() async throws {
        let server = try Self.server(reliable: true)
        let extended = "actioncable-v1-ext-json"
        let a = try await Peer.connect(server, protocols: extended)
        let b = try await Peer.connect(server, protocols: extended)
        let both = Self.identifier([
            "channel": "$pubsub", "stream_name": "decoy",
            "signed_stream_name": .string(LocalCableServer.signedStreamName("chat:1", secret: Self.secret)),
        ])
        #expect(await a.subscribe(both) == "confirm_subscription")
        #expect(await b.subscribe(Self.turbo("chat:1")) == "confirm_subscription")
        #expect(await b.subscribe(Self.publicStream("decoy")) == "confirm_subscription")
        #expect(await b.subscribe(Self.identifier(["channel": "Chat"])) == "confirm_subscription")
        server.broadcast("<turbo-stream></turbo-stream>", toStream: "chat:1")
        let position: (Int) -> [String: JSONValue] = { ["stream_id": "chat:1", "epoch": "e1", "offset": .int($0)] }
        var expected = position(1)
        expected["message"] = "<turbo-stream></turbo-stream>"
        expected["identifier"] = .string(both)
        #expect(await a.next() == .object(expected))
        expected["identifier"] = .string(Self.turbo("chat:1"))
        #expect(await b.next() == .object(expected), "the Turbo subscription; not the decoy nor the channel")
        #expect(await a.receivedNothing())
        #expect(await b.receivedNothing())
        // Kept for history under the plain name: a later subscriber replays it.
        server.broadcast(["n": 2], toStream: "chat:1")
        _ = await a.next()
        _ = await b.next()
        let c = try await Peer.connect(server, protocols: extended)
        c.send("subscribe", Self.signed("chat:1"), ["history": ["streams": ["chat:1": ["epoch": "e1", "offset": 1]]]])
        #expect(await c.next()?["type"] == "confirm_subscription")
        var replayed = position(2)
        replayed["message"] = ["n": 2]
        replayed["identifier"] = .string(Self.signed("chat:1"))
        #expect(await c.next() == .object(replayed))
        #expect(await c.next() == ["identifier": .string(Self.signed("chat:1")), "type": "confirm_history"])
    }

    @Test("perform on $pubsub is recorded and answered with nothing")
    func performIgnored() async throws {
        let server = try Self.server()
        server.onPerform("speak") { call in call.reply(["heard": true]) }
        let peer = try await Peer.connect(server)
        let stream = Self.publicStream("chat")
        #expect(await peer.subscribe(stream) == "confirm_subscription")
        peer.send("message", stream, ["data": #"{"action":"speak"}"#])
        #expect(await peer.receivedNothing())
        #expect(server.commands.contains { $0.command == "message" && $0.action == "speak" })
    }

    // MARK: Whisper

    @Test("whisper reaches every other connection of the stream, not the sender; null data arrives as \"null\"")
    func whisper() async throws {
        let server = try Self.server(reliable: true)
        let a = try await Peer.connect(server, protocols: "actioncable-v1-ext-json")
        let b = try await Peer.connect(server, protocols: "actioncable-v1-ext-json")
        let stream = Self.publicStream("room")
        let signedSameStream = Self.signed("room")
        for peer in [a, b] { #expect(await peer.subscribe(stream) == "confirm_subscription") }
        #expect(await a.subscribe(signedSameStream) == "confirm_subscription")
        #expect(await b.subscribe(signedSameStream) == "confirm_subscription")
        a.send("whisper", stream, ["data": ["typing": true, "b": [1, "x"]]])
        #expect(await b.next() == ["identifier": .string(stream), "message": ["typing": true, "b": [1, "x"]]])
        #expect(
            await b.next() == ["identifier": .string(signedSameStream), "message": ["typing": true, "b": [1, "x"]]],
            "every subscription of the stream, without a position")
        #expect(await a.receivedNothing(), "not on any of the sender's subscriptions")
        a.send("whisper", stream)
        #expect(await b.next() == ["identifier": .string(stream), "message": "null"])
        _ = await b.next()
        a.send("whisper", stream, ["data": .null])
        #expect(await b.next() == ["identifier": .string(stream), "message": "null"])
        _ = await b.next()
        #expect(await a.receivedNothing())
        #expect(
            server.commands.filter { $0.command == "whisper" }.map(\.data) == [
                ["typing": true, "b": [1, "x"]], .null, .null,
            ])
        // Whispers are not history: the next broadcast has offset 1.
        server.broadcast(["n": 1], toStream: "room")
        #expect(await b.next()?["offset"] == 1)
    }

    @Test("whisper is dropped silently where it is off: signed without signedWhisper, Turbo, other channels")
    func whisperDisabled() async throws {
        let server = try Self.server { $0.whisperChannels = ["TypingChannel"] }
        let a = try await Peer.connect(server)
        let b = try await Peer.connect(server)
        let typing = Self.identifier(["channel": "TypingChannel", "room": 1])
        let plain = Self.identifier(["channel": "ChatChannel"])
        let subscriptions = [Self.signed("s"), Self.turbo("t"), plain, typing]
        for peer in [a, b] {
            for identifier in subscriptions { #expect(await peer.subscribe(identifier) == "confirm_subscription") }
        }
        for identifier in subscriptions.dropLast() { a.send("whisper", identifier, ["data": "psst"]) }
        a.send("whisper", Self.identifier(["channel": "Unknown"]), ["data": "psst"])
        a.send("whisper", typing, ["data": "typed"])
        #expect(await b.next() == ["identifier": .string(typing), "message": "typed"], "the first whisper B gets")
        #expect(await b.receivedNothing())
        let signedWhisper = try Self.server { $0.signedWhisper = true }
        let c = try await Peer.connect(signedWhisper)
        let d = try await Peer.connect(signedWhisper)
        for peer in [c, d] { #expect(await peer.subscribe(Self.signed("s")) == "confirm_subscription") }
        c.send("whisper", Self.signed("s"), ["data": 1])
        #expect(await d.next() == ["identifier": .string(Self.signed("s")), "message": 1])
    }

    // MARK: Presence

    @Test("join: an event to every subscriber, the joiner included; a known id only replaces info; one id each")
    func join() async throws {
        let server = try Self.server()
        let a = try await Peer.connect(server)
        let b = try await Peer.connect(server)
        let stream = Self.publicStream("room")
        for peer in [a, b] { #expect(await peer.subscribe(stream) == "confirm_subscription") }
        a.send("join", stream, ["presence": ["id": "u1", "info": ["name": "Ann"]]])
        for peer in [a, b] { #expect(await peer.next() == Self.joined(stream, "u1", ["name": "Ann"])) }
        b.send("join", stream, ["presence": ["id": "u1", "info": ["name": "Ann 2"]]])
        a.send("join", stream, ["presence": ["id": "u2"]])
        b.send("presence", stream, ["data": [:]])
        let records: JSONValue = ["type": "info", "total": 1, "records": [["id": "u1", "info": ["name": "Ann 2"]]]]
        #expect(await b.next() == Self.presence(stream, records), "no event; info replaced; u2 refused")
        #expect(await a.receivedNothing())
        #expect(server.snapshot.value.presence == ["room": ["u1"]])
        b.send("join", stream, ["presence": ["id": "u3"]])
        #expect(await server.wait { $0.commands.contains { $0.text.contains("u3") } })
        a.send("presence", stream)
        #expect(await a.next() == Self.presence(stream, records), "B holds u1 now: u3 refused too")
    }

    @Test("presence info: records in join order without null info, no records when nobody")
    func info() async throws {
        let server = try Self.server()
        let a = try await Peer.connect(server)
        let b = try await Peer.connect(server)
        let stream = Self.publicStream("room")
        #expect(await a.subscribe(stream) == "confirm_subscription")
        a.send("presence", stream, ["data": [:]])
        #expect(await a.next() == Self.presence(stream, ["type": "info", "total": 0]))
        a.send("join", stream, ["presence": ["id": "u1", "info": .null]])
        #expect(await a.next() == Self.joined(stream, "u1"))
        b.send("subscribe", stream, ["presence": ["id": "u2", "info": 7]])
        #expect(await b.next() == ["identifier": .string(stream), "type": "confirm_subscription"])
        #expect(await b.next() == Self.joined(stream, "u2", 7), "subscribe with presence: join after confirm")
        #expect(await a.next() == Self.joined(stream, "u2", 7))
        b.send("presence", stream)
        let expected: JSONValue = ["type": "info", "total": 2, "records": [["id": "u1"], ["id": "u2", "info": 7]]]
        #expect(await b.next() == Self.presence(stream, expected))
    }

    @Test("leave and unsubscribe: the event goes out only when the last holder is gone")
    func leave() async throws {
        let server = try Self.server()
        let a = try await Peer.connect(server)
        let b = try await Peer.connect(server)
        let c = try await Peer.connect(server)
        let stream = Self.publicStream("room")
        for peer in [a, b, c] { #expect(await peer.subscribe(stream) == "confirm_subscription") }
        a.send("join", stream, ["presence": ["id": "u1"]])
        for peer in [a, b, c] { #expect(await peer.next() == Self.joined(stream, "u1")) }
        b.send("join", stream, ["presence": ["id": "u1"]])
        #expect(await server.wait { $0.commands.filter { $0.command == "join" }.count == 2 })
        a.send("leave", stream, ["presence": ["id": "u1"]])
        #expect(await a.receivedNothing(), "B still holds u1")
        #expect(await c.receivedNothing())
        b.send("unsubscribe", stream)
        #expect(await c.next() == Self.left(stream, "u1"))
        #expect(await a.next() == Self.left(stream, "u1"))
        #expect(await b.receivedNothing(), "unsubscribed: it does not see its own leave")
        #expect(server.snapshot.value.presence.isEmpty)
        a.send("leave", stream)
        #expect(await a.receivedNothing())
        #expect(await c.receivedNothing(), "a leave without a hold")
    }

    @Test("presence off: join, leave and presence get no reply on signed without signedPresence, Turbo, channels")
    func presenceDisabled() async throws {
        let server = try Self.server {
            $0.signedPresence = false
            $0.presenceChannels = ["RoomChannel"]
        }
        let peer = try await Peer.connect(server)
        let room = Self.identifier(["channel": "RoomChannel"])
        let off = [Self.signed("s"), Self.turbo("t"), Self.identifier(["channel": "ChatChannel"])]
        for identifier in off + [room] { #expect(await peer.subscribe(identifier) == "confirm_subscription") }
        for identifier in off {
            peer.send("join", identifier, ["presence": ["id": "u1"]])
            peer.send("presence", identifier, ["data": [:]])
            peer.send("leave", identifier)
        }
        peer.send("presence", Self.identifier(["channel": "NotSubscribed"]))
        #expect(await peer.receivedNothing())
        #expect(server.snapshot.value.presence.isEmpty)
        peer.send("join", room, ["presence": ["id": "u1"]])
        #expect(await peer.next() == Self.joined(room, "u1"), "on a presence channel, the stream is the identifier")
        #expect(server.snapshot.value.presence == [room: ["u1"]])
        let signedOn = try Self.server()
        let other = try await Peer.connect(signedOn)
        other.send("subscribe", Self.signed("s"), ["presence": ["id": "u9"]])
        #expect(await other.next()?["type"] == "confirm_subscription")
        #expect(await other.next() == Self.joined(Self.signed("s"), "u9"), "signedPresence is on by default")
    }

    @Test("an id that is not a string closes the connection with 1007, as AnyCable stops reading it")
    func badPresenceID() async throws {
        let server = try Self.server()
        let peer = try await Peer.connect(server)
        let stream = Self.publicStream("room")
        #expect(await peer.subscribe(stream) == "confirm_subscription")
        peer.send("join", stream, ["presence": ["id": 42]])
        #expect(await peer.socket.waitForClose() == (1007, true))
        let other = try await Peer.connect(server)
        other.send("join", stream, ["presence": "u1"])
        #expect(await other.socket.waitForClose() == (1007, true), "a presence that is not an object")
    }

    @Test("a dropped connection stays present for the TTL, then leave goes out")
    func expiry() async throws {
        let ttl = 0.3
        let server = try Self.server { $0.presenceTTL = ttl }
        let a = try await Peer.connect(server)
        let b = try await Peer.connect(server)
        let stream = Self.publicStream("room")
        for peer in [a, b] { #expect(await peer.subscribe(stream) == "confirm_subscription") }
        a.send("join", stream, ["presence": ["id": "u1"]])
        for peer in [a, b] { #expect(await peer.next() == Self.joined(stream, "u1")) }
        let dropped = Date()
        server.drop(.connection(a.id))
        #expect(await b.next() == Self.left(stream, "u1"))
        #expect(Date().timeIntervalSince(dropped) >= ttl * 0.9, "not before the TTL")
        #expect(await server.wait(timeout: 10) { $0.presence.isEmpty })
    }

    @Test("re-joining within the TTL from a new connection makes neither leave nor join")
    func rejoinWithinTTL() async throws {
        // Long enough for the new connection to join before A's hold expires, even on a loaded machine.
        let server = try Self.server { $0.presenceTTL = 3 }
        let a = try await Peer.connect(server)
        let b = try await Peer.connect(server)
        let c = try await Peer.connect(server)
        let stream = Self.publicStream("room")
        for peer in [a, b, c] { #expect(await peer.subscribe(stream) == "confirm_subscription") }
        a.send("join", stream, ["presence": ["id": "u1"]])
        for peer in [a, b, c] { #expect(await peer.next() == Self.joined(stream, "u1")) }
        c.send("join", stream, ["presence": ["id": "u2"]])
        for peer in [b, c] { #expect(await peer.next() == Self.joined(stream, "u2")) }
        server.drop(.connection(a.id))
        // C drops after A, so its hold expires after A's: its leave tells B that A's hold has expired.
        server.drop(.connection(c.id))
        let again = try await Peer.connect(server)
        #expect(await again.subscribe(stream) == "confirm_subscription")
        again.send("join", stream, ["presence": ["id": "u1", "info": "back"]])
        #expect(await server.wait { $0.commands.contains { $0.connection == again.id && $0.command == "join" } })
        #expect(await b.next() == Self.left(stream, "u2"), "no join for u1, nor its leave when A's hold expired")
        #expect(await again.next() == Self.left(stream, "u2"))
        #expect(server.snapshot.value.presence == ["room": ["u1"]])
    }

    @Test("a restored session keeps its streams, whisper and presence flags, but must join again")
    func restore() async throws {
        var options = Fixture.serverOptions(pingInterval: nil)
        var pubSub = LocalCableServer.PubSub(secret: Self.secret)
        pubSub.presenceTTL = 2  // long enough to restore before A's holds expire
        pubSub.presenceChannels = ["RoomChannel"]
        options.pubSub = pubSub
        options.reliableStreams = LocalCableServer.ReliableStreams()
        let server = try LocalCableServer(options: options)
        let extended = "actioncable-v1-ext-json"
        let a = try await Peer.connect(server, protocols: extended)
        let b = try await Peer.connect(server, protocols: extended)
        let stream = Self.signed("room")
        let room = Self.identifier(["channel": "RoomChannel"])
        for peer in [a, b] {
            #expect(await peer.subscribe(stream) == "confirm_subscription")
            #expect(await peer.subscribe(room) == "confirm_subscription")
        }
        a.send("join", stream, ["presence": ["id": "u1"]])
        for peer in [a, b] { #expect(await peer.next() == Self.joined(stream, "u1")) }
        a.send("join", room, ["presence": ["id": "u1"]])
        for peer in [a, b] { #expect(await peer.next() == Self.joined(room, "u1")) }
        let sid = try #require(a.welcome["sid"]?.stringValue)
        server.drop(.connection(a.id))
        let restored = try await Peer.connect(server, protocols: extended, extra: ["X-AnyCable-Restore-SID: \(sid)"])
        #expect(restored.welcome["restored"] == true)
        #expect(restored.welcome["restored_ids"] == [.string(stream), .string(room)])
        // Not in the presence sets: once A's holds expire, both leaves go out, the restored connection's too.
        for peer in [b, restored] {
            #expect(await peer.next() == Self.left(stream, "u1"))
            #expect(await peer.next() == Self.left(room, "u1"))
        }
        restored.send("join", stream, ["presence": ["id": "u1"]])
        for peer in [b, restored] { #expect(await peer.next() == Self.joined(stream, "u1")) }
        server.broadcast(["n": 1], toStream: "room")
        #expect(await restored.next()?["stream_id"] == "room", "still the plain stream")
        _ = await b.next()
        restored.send("presence", room)
        #expect(await restored.next() == Self.presence(room, ["type": "info", "total": 0]), "presence still on")
    }
}
