import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

@Suite("LocalCableServer with ActionCableClient: connect, subscribe, perform, broadcast")
struct ServerClientTests {
    let params: JSONValue = ["channel": "ChatChannel", "room": "lobby"]

    @Test("a client connects, is welcomed and shows up in the snapshot with its request")
    func connectsAndWelcomes() async throws {
        let server = try LocalCableServer()
        let client = try Fixture.client(server)
        client.connect()
        #expect(await client.reaches(.connected))
        #expect(await server.connectionCount.first(within: 5) { $0 == 1 } == 1)
        let request = try #require(server.requests.first)
        #expect(request.path == "/cable")
        #expect(request.query == nil)
        #expect(request.status == 101)
        #expect(request.header("sec-websocket-protocol") == "actioncable-v1-json, actioncable-unsupported")
        let connection = try #require(server.connections.first)
        #expect(connection.id == request.connection)
        #expect(connection.isWelcomed)
        #expect(!connection.isStalled)
        client.close()
        #expect(await server.connectionCount.first(within: 5) { $0 == 0 } == 0)
    }

    @Test("port 0 picks distinct free ports; a taken port fails with bind; a stopped server's port is free again")
    func ports() throws {
        let a = try LocalCableServer()
        let b = try LocalCableServer(port: 0)
        #expect(a.port != 0 && b.port != 0 && a.port != b.port)
        #expect(a.url.absoluteString == "ws://127.0.0.1:\(a.port)/cable")
        #expect(a.url(query: "token=a b").absoluteString == "ws://127.0.0.1:\(a.port)/cable?token=a%20b")
        #expect(throws: LocalCableServerError(.bind, errno: EADDRINUSE)) { try LocalCableServer(port: a.port) }
        let port = a.port
        a.stop()
        let again = try LocalCableServer(port: port)
        #expect(again.port == port)
    }

    @Test("invalid options are refused with the option's name")
    func invalidOptions() {
        var options = LocalCableServer.Options()
        options.path = "cable"
        #expect(throws: LocalCableServerError(.invalidOption, detail: "path")) {
            try LocalCableServer(options: options)
        }
        options = LocalCableServer.Options()
        options.pingInterval = 0
        #expect(throws: LocalCableServerError(.invalidOption, detail: "pingInterval")) {
            try LocalCableServer(options: options)
        }
    }

    @Test("the subscription rule confirms, rejects or ignores; confirmed identifiers are listed per connection")
    func subscriptionRule() async throws {
        let server = try LocalCableServer()
        let seen = Locked<[String]>([])
        server.subscriptionRule = { params, request in
            seen.withLock { $0.append(request.path) }
            switch params["channel"]?.stringValue {
            case "RejectChannel": return .reject
            case "SilentChannel": return .ignore
            default: return .confirm
            }
        }
        let client = try Fixture.client(server)
        let ok = try client.subscribe(params)
        let rejected = try client.subscribe(["channel": "RejectChannel"])
        let silent = try client.subscribe(["channel": "SilentChannel"])
        client.connect()
        #expect(await ok.reaches(.subscribed(confirmations: 1)))
        #expect(await rejected.reaches(.rejected))
        #expect(await server.wait { $0.commands.filter { $0.command == "subscribe" }.count >= 3 })
        #expect(silent.state.value == .pending)
        #expect(server.connections.first?.subscriptions == [ok.identifier])
        #expect(seen.withLock { $0 } == ["/cable", "/cable", "/cable"])
        ok.unsubscribe()
        #expect(await server.wait { $0.connections.first?.subscriptions == [] })
        #expect(server.commands.last?.command == "unsubscribe")
        #expect(server.commands.last?.identifier == ok.identifier)
    }

    @Test("a perform handler gets the call and replies to the subscription")
    func performReply() async throws {
        let server = try LocalCableServer()
        let calls = Locked<[LocalCableServer.PerformCall]>([])
        server.onPerform("echo") { call in
            calls.withLock { $0.append(call) }
            call.reply(call.data)
        }
        let client = try Fixture.client(server)
        let room = try client.subscribe(params)
        client.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        #expect(room.perform("echo", ["text": "hi"]))
        #expect(await room.nextMessage() == ["text": "hi", "action": "echo"])
        let call = try #require(calls.withLock { $0.first })
        #expect(call.identifier == room.identifier)
        #expect(call.params == params)
        #expect(call.action == "echo")
        #expect(call.request.path == "/cable")
        #expect(server.commands.last?.action == "echo")
        server.removePerformHandler(for: "echo")
        #expect(room.perform("echo", ["text": "again"]))
        #expect(await server.wait { $0.commands.filter { $0.action == "echo" }.count == 2 })
        #expect(calls.withLock { $0.count } == 1)
    }

    @Test("broadcasts reach every subscriber of an identifier, or every subscription a matcher accepts")
    func broadcasts() async throws {
        let server = try LocalCableServer()
        server.onPerform("speak") { call in call.broadcast(["text": call.data["text"] ?? nil]) }
        let alice = try Fixture.client(server)
        let bob = try Fixture.client(server)
        let aliceRoom = try alice.subscribe(params)
        let bobRoom = try bob.subscribe(params)
        let bobOther = try bob.subscribe(["channel": "ChatChannel", "room": "other"])
        alice.connect()
        bob.connect()
        for sub in [aliceRoom, bobRoom, bobOther] { #expect(await sub.reaches(.subscribed(confirmations: 1))) }

        server.broadcast(["n": 1], to: aliceRoom.identifier)
        #expect(await aliceRoom.nextMessage() == ["n": 1])
        #expect(await bobRoom.nextMessage() == ["n": 1])

        server.broadcast(["n": 2]) { $0["room"] == "other" }
        #expect(await bobOther.nextMessage() == ["n": 2])

        #expect(aliceRoom.perform("speak", ["text": "hello"]))
        #expect(await aliceRoom.nextMessage() == ["text": "hello"])
        #expect(await bobRoom.nextMessage() == ["text": "hello"])
        #expect(await bobOther.nextMessage(within: 0.2) == nil)
        #expect(server.snapshot.value.subscriptions.values.map(\.count).sorted() == [1, 2])
    }

    @Test("a disconnect with reconnect true brings the client back and re-subscribes it")
    func disconnectReconnects() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions())
        let client = try Fixture.client(server)
        let room = try client.subscribe(params)
        client.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        server.disconnect(reason: "server_restart", reconnect: true)
        #expect(await room.reaches(.subscribed(confirmations: 2)))
        #expect(client.state.value == .connected)
        #expect(server.requests.count == 2)
        #expect(await server.connectionCount.first(within: 5) { $0 == 1 } == 1)
    }

    @Test("a server that chooses actioncable-unsupported is closed and never sent a command or retried")
    func unsupportedProtocol() async throws {
        var options = Fixture.serverOptions()
        options.subprotocols = ["actioncable-unsupported"]
        let server = try LocalCableServer(options: options)
        let client = try Fixture.client(server)
        let room = try client.subscribe(["channel": "ChatChannel"])
        client.connect()
        #expect(await client.reaches(.stopped(reason: .unsupportedProtocol)))
        #expect(await server.connectionCount.first(within: 5) { $0 == 0 } == 0)
        #expect(server.commands.isEmpty)
        #expect(server.requests.count == 1)
        #expect(room.state.value == .pending)
    }

    @Test("a server that chooses no subprotocol is spoken to as Action Cable")
    func noSubprotocol() async throws {
        var options = Fixture.serverOptions()
        options.subprotocols = []
        let server = try LocalCableServer(options: options)
        let client = try Fixture.client(server)
        let room = try client.subscribe(["channel": "ChatChannel"])
        client.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        #expect(client.state.value == .connected)
    }

    @Test("a disconnect with reconnect false stops the client with the reason")
    func disconnectStops() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions())
        let client = try Fixture.client(server)
        client.connect()
        #expect(await client.reaches(.connected))
        let id = try #require(server.connections.first?.id)
        server.disconnect(.connection(id), reason: "bye", reconnect: false)
        #expect(await client.reaches(.stopped(reason: .server("bye"))))
        #expect(await server.connectionCount.first(within: 5) { $0 == 0 } == 0)
        #expect(server.requests.count == 1)
    }

    @Test("the connection rule sees tokens in the query and headers; unauthorized stops the client")
    func connectionRule() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions())
        server.connectionRule = { request in
            request.queryValue("token") == "tok-alice" || request.header("Authorization") == "Bearer tok-bob"
                ? .accept : .unauthorized
        }
        let alice = try Fixture.client(server, url: server.url(query: "token=tok-alice"))
        let bob = try Fixture.client(server) { request in
            request.setHeader("Authorization", "Bearer tok-bob")
        }
        let mallory = try Fixture.client(server, url: server.url(query: "token=nope"))
        for client in [alice, bob, mallory] { client.connect() }
        #expect(await alice.reaches(.connected))
        #expect(await bob.reaches(.connected))
        #expect(await mallory.reaches(.stopped(reason: .unauthorized(serverReason: "unauthorized"))))
        let requests = server.requests
        #expect(requests.contains { $0.queryValue("token") == "tok-alice" })
        #expect(requests.contains { $0.header("authorization") == "Bearer tok-bob" })
        #expect(requests.allSatisfy { $0.status == 101 })
    }

    @Test("an upgrade rejected with 401 reaches the client's onUnauthorized")
    func rejectStatus() async throws {
        let server = try LocalCableServer()
        server.connectionRule = { _ in .reject(status: 401) }
        let calls = Locked(0)
        // A long stale timeout: on a loaded machine a 3 s watchdog can fire before the 401 is read,
        // and the retry would count a second request.
        let client = try Fixture.client(
            server, staleTimeout: 30,
            onUnauthorized: {
                calls.withLock { $0 += 1 }
                return false
            })
        client.connect()
        #expect(await client.reaches(.stopped(reason: .unauthorized(serverReason: nil))))
        #expect(calls.withLock { $0 } == 1)
        #expect(server.requests.map(\.status) == [401])
        #expect(server.connectionCount.value == 0)
    }
}
