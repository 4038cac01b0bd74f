import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

/// AnyCable's pub/sub streams, whisper and presence end to end: LocalCableServer with `pubSub` and several real
/// clients over sockets.
@Suite("LocalCableServer AnyCable features with ActionCableClient", .serialized)
struct AnyCableFeaturesServerTests {
    static let secret = "s3Krit"

    static func server(presenceTTL: TimeInterval = 15, reliable: Bool = false) throws -> LocalCableServer {
        var options = Fixture.serverOptions()
        var pubSub = LocalCableServer.PubSub(secret: secret)
        pubSub.publicStreams = true
        pubSub.presenceTTL = presenceTTL
        options.pubSub = pubSub
        if reliable { options.reliableStreams = LocalCableServer.ReliableStreams() }
        return try LocalCableServer(options: options)
    }

    static func client(_ server: LocalCableServer, _ wire: CableWireProtocol = .anyCableExtended) throws
        -> ActionCableClient
    {
        var options = Fixture.options()
        options.wireProtocol = wire
        return try ActionCableClient(url: server.url, options: options)
    }

    static func ids(_ members: [String: PresenceMember]??) -> Set<String>? {
        guard let members = members ?? nil else { return nil }
        return Set(members.keys)
    }

    /// Two clients on the public stream "room" of `server`, joined as ada (with a name) and bob, once both see
    /// both.
    static func adaAndBob(_ server: LocalCableServer) async throws -> (
        ActionCableClient, ActionCableClient, ChannelSubscription, ChannelSubscription
    ) {
        let a = try client(server)
        let b = try client(server)
        let roomA = a.stream(named: "room")
        let roomB = b.stream(named: "room")
        try roomA.presence.join(id: "ada", info: ["name": "Ada"])
        try roomB.presence.join(id: "bob")
        a.connect()
        b.connect()
        for room in [roomA, roomB] {
            #expect(await room.presence.members.first(within: 5) { ids($0) == ["ada", "bob"] } != nil)
        }
        return (a, b, roomA, roomB)
    }

    /// Every presence event a handle sees.
    final class Events: Sendable {
        let seen = Locked<[PresenceEvent]>([])
        let token: SignalObservation

        init(_ room: ChannelSubscription) {
            let seen = seen
            token = room.presence.events.observe { event in seen.withLock { $0.append(event) } }
        }

        var all: [PresenceEvent] { seen.withLock { $0 } }
    }

    @Test("the signing vector: a name signed with the secret subscribes and streams; a tampered one is rejected")
    func signedStreams() async throws {
        let signed = LocalCableServer.signedStreamName("chat:2021", secret: Self.secret)
        #expect(signed == "ImNoYXQ6MjAyMSI=--f9ee45dbccb1da04d8ceb99cc820207804370ba0d06b46fc3b8b373af1315628")
        let server = try Self.server()
        let client = try Self.client(server)
        defer { client.close() }
        let feed = client.stream(signed: signed)
        let forged = client.stream(signed: "ImNoYXQ6MjAyMSI=--" + String(repeating: "0", count: 64))
        client.connect()
        #expect(await feed.reaches(.subscribed(confirmations: 1)))
        #expect(await forged.reaches(.rejected))
        server.broadcast(["text": "hi"], toStream: "chat:2021")
        #expect(await feed.nextMessage() == ["text": "hi"])
    }

    @Test("public streams: rejected unless the server enables them")
    func publicStreams() async throws {
        var options = Fixture.serverOptions()
        options.pubSub = LocalCableServer.PubSub(secret: Self.secret)
        let closed = try LocalCableServer(options: options)
        let client = try Self.client(closed, .actionCable)
        defer { client.close() }
        let lobby = client.stream(named: "lobby")
        client.connect()
        #expect(await lobby.reaches(.rejected))

        let open = try Self.server()
        let other = try Self.client(open, .actionCable)
        defer { other.close() }
        let room = other.stream(named: "lobby")
        other.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        #expect(!room.perform("speak", ["text": "hi"]), "a stream has no channel")
    }

    @Test("Turbo Streams: Turbo::StreamsChannel with a signed name; the HTML reads as a String")
    func turbo() async throws {
        let server = try Self.server()
        let client = try Self.client(server, .actionCable)
        defer { client.close() }
        let name = LocalCableServer.signedStreamName("messages", secret: Self.secret)
        let turbo = try client.subscribe(["channel": "Turbo::StreamsChannel", "signed_stream_name": .string(name)])
        let html = turbo.messages(as: String.self)
        client.connect()
        #expect(await turbo.reaches(.subscribed(confirmations: 1)))
        let stream = #"<turbo-stream action="append" target="messages"><template>hi</template></turbo-stream>"#
        server.broadcast(.string(stream), toStream: "messages")
        #expect(await html.first(within: 5) { _ in true } == stream)
    }

    @Test("a whisper reaches every other client on the stream, and not the sender")
    func whisper() async throws {
        let server = try Self.server()
        let clients = try (0..<3).map { _ in try Self.client(server) }
        defer { for client in clients { client.close() } }
        let rooms = clients.map { $0.stream(named: "room") }
        for client in clients { client.connect() }
        for room in rooms { #expect(await room.reaches(.subscribed(confirmations: 1))) }
        #expect(rooms[0].whisper(["typing": "ada"]))
        #expect(await rooms[1].nextMessage() == ["typing": "ada"])
        #expect(await rooms[2].nextMessage() == ["typing": "ada"])
        // The server handled the whisper before this broadcast, and a handle holds what arrives before its
        // first consumer: so the sender's first message is the broadcast, as it got no whisper of its own.
        server.broadcast(["n": 1], toStream: "room")
        #expect(await rooms[0].nextMessage() == ["n": 1])
    }

    @Test("presence converges: joins, a leave, a join again, and a closed client's expiry after the TTL")
    func presenceConverges() async throws {
        let server = try Self.server(presenceTTL: 0.5)  // kept: a released server stops
        let (a, b, roomA, roomB) = try await Self.adaAndBob(server)
        defer {
            a.close()
            b.close()
        }
        let events = Events(roomA)
        #expect(roomB.presence.members.value?["ada"]?.info == ["name": "Ada"])
        roomB.presence.leave()
        #expect(await roomA.presence.members.first(within: 5) { Self.ids($0) == ["ada"] } != nil)
        try roomB.presence.join(id: "bob")
        #expect(await roomA.presence.members.first(within: 5) { Self.ids($0) == ["ada", "bob"] } != nil)
        b.close()
        // bob lingers for the TTL, then leaves
        #expect(await roomA.presence.members.first(within: 5) { Self.ids($0) == ["ada"] } != nil)
        // The events arrive on their own observer: the members state may be there first.
        let left = await eventually { events.all.last == .left(id: "bob") }
        #expect(left, "events: \(events.all)")
        let answer = try await roomA.presence.info()
        #expect(Set(answer.keys) == ["ada"])
    }

    @Test("after a restore the client joins again within the TTL: the others see neither a leave nor a join")
    func presenceAfterRestore() async throws {
        let server = try Self.server(presenceTTL: 30, reliable: true)
        let (a, b, roomA, roomB) = try await Self.adaAndBob(server)
        defer {
            a.close()
            b.close()
        }
        let events = Events(roomB)
        server.drop()  // both reconnect; AnyCable restores both sessions
        for client in [a, b] {
            #expect(await client.session.first(within: 10) { $0?.restored == true } != nil)
        }
        for room in [roomA, roomB] {
            #expect(await room.presence.members.first(within: 10) { Self.ids($0) == ["ada", "bob"] } != nil)
        }
        let joins = await server.wait { snapshot in
            snapshot.commands.filter { $0.command == "join" }.count >= 2
        }
        #expect(joins, "each restored client sent join again")
        #expect(events.all.isEmpty, "within the TTL, no leave and no join")
    }

    @Test("a restore never leaks a stream: one let go while the connection was down is unsubscribed")
    func streamRestoreNeverLeaks() async throws {
        let server = try Self.server(reliable: true)
        let client = try Self.client(server)
        defer { client.close() }
        let gone = client.stream(named: "gone")
        let kept = client.stream(named: "kept")
        client.connect()
        for room in [gone, kept] { #expect(await room.reaches(.subscribed(confirmations: 1))) }
        let goneIdentifier = gone.identifier
        server.refuseConnections()
        server.drop()
        #expect(await kept.reaches(.pending))
        gone.unsubscribe()
        try server.acceptConnections()
        #expect(await kept.reaches(.subscribed(confirmations: 1), within: 10))
        let unsubscribed = await server.wait { snapshot in
            snapshot.commands.contains { $0.command == "unsubscribe" && $0.identifier == goneIdentifier }
        }
        #expect(unsubscribed)
    }
}
