import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

@Suite("LocalCableServer with ActionCableClient: faults, welcome and pings")
struct ServerFaultTests {
    let params: JSONValue = ["channel": "ChatChannel", "room": "lobby"]

    @Test("drop: the socket closes without a close frame and the client reconnects")
    func drop() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions())
        let client = try Fixture.client(server)
        let room = try client.subscribe(params)
        client.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        server.drop()
        #expect(server.connectionCount.value == 0)
        #expect(await room.reaches(.subscribed(confirmations: 2)))
        #expect(server.requests.count == 2)
        #expect(client.state.value == .connected)
    }

    @Test("stall: the client notices the silence within its stale timeout and connects again")
    func stall() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions(pingInterval: 0.1))
        let client = try Fixture.client(server, staleTimeout: 0.5)
        client.connect()
        #expect(await client.reaches(.connected))
        let first = try #require(server.connections.first?.id)
        server.stall(.connection(first))
        #expect(server.connections.first?.isStalled == true)
        let started = Date()
        // Every loss is published (a state observer that drains late may see only `.connected` again: a
        // loopback reconnect is quick).
        #expect(await client.lastDisconnect.first(within: 10) { $0?.kind == .stale } != nil)
        #expect(Date().timeIntervalSince(started) >= 0.3)
        #expect(await server.wait(timeout: 10) { $0.requests.count == 2 })
        #expect(await client.reaches(.connected))
        // The stalled socket stays open (and counted) until it is dropped.
        #expect(server.connections.map(\.id).contains(first))
        server.drop(.connection(first))
        #expect(await server.connectionCount.first(within: 5) { $0 == 1 } == 1)
    }

    @Test("refuse: new connections are refused at the TCP level and the client keeps retrying until accepted")
    func refuse() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions())
        let client = try Fixture.client(server)
        client.connect()
        #expect(await client.reaches(.connected))
        server.refuseConnections()
        server.refuseConnections()
        #expect(!server.snapshot.value.isAccepting)
        #expect(RawSocket.isRefused(port: server.port))
        #expect(server.connectionCount.value == 1)  // open connections stay
        server.drop()
        #expect(await client.reaches(10) { if case .connecting(let attempt) = $0 { attempt >= 3 } else { false } })
        #expect(server.requests.count == 1)
        try server.acceptConnections()
        try server.acceptConnections()
        #expect(server.snapshot.value.isAccepting)
        #expect(await client.reaches(.connected, within: 10))
        #expect(server.requests.count == 2)
    }

    @Test("a delayed welcome keeps the client connecting until it arrives")
    func delayedWelcome() async throws {
        var options = Fixture.serverOptions()
        options.welcome = .after(1)
        let server = try LocalCableServer(options: options)
        let client = try Fixture.client(server)
        let states = Locked<[CableState]>([])
        let observation = client.state.observe { state in states.withLock { $0.append(state) } }
        let started = Date()
        client.connect()
        #expect(await server.connectionCount.first(within: 5) { $0 == 1 } == 1)
        #expect(server.connections.first?.isWelcomed == false || Date().timeIntervalSince(started) >= 1)
        #expect(await client.reaches(.connected))
        #expect(Date().timeIntervalSince(started) >= 1)
        #expect(server.connections.first?.isWelcomed == true)
        // One attempt that waited: connecting, then connected, with nothing in between.
        #expect(
            states.withLock { Array($0.drop(while: { $0 == .disconnected })) } == [.connecting(attempt: 0), .connected])
        observation.cancel()
    }

    @Test("no welcome: the client stays connecting until sendWelcome; the policy can change at run time")
    func neverWelcome() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions())
        server.welcome = .never
        let client = try Fixture.client(server, staleTimeout: 10)
        client.connect()
        #expect(await server.connectionCount.first(within: 5) { $0 == 1 } == 1)
        // The scenario needs time to pass: the client must still be waiting after a while.
        #expect(await client.state.first(within: 0.3) { $0 != .connecting(attempt: 0) } == nil)
        #expect(client.state.value == .connecting(attempt: 0))
        #expect(server.connections.first?.isWelcomed == false)
        server.sendWelcome()
        #expect(await client.reaches(.connected))
        server.welcome = .immediately
        #expect(server.welcome == .immediately)
    }

    @Test("pings every interval keep a client with a short stale timeout connected on one connection")
    func pingsKeepAlive() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions(pingInterval: 0.1))
        let client = try Fixture.client(server, staleTimeout: 0.5)
        client.connect()
        #expect(await client.reaches(.connected))
        // The scenario is about time passing: three stale timeouts without a reconnect.
        #expect(await client.state.first(within: 1.5) { $0 != .connected } == nil)
        #expect(client.state.value == .connected)
        #expect(server.requests.count == 1)
    }

    @Test("without pings the same client goes stale and reconnects")
    func noPingsGoStale() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions(pingInterval: nil))
        let client = try Fixture.client(server, staleTimeout: 0.5)
        client.connect()
        #expect(await client.reaches(.connected))
        #expect(await server.wait(timeout: 10) { $0.requests.count >= 2 })
    }

    @Test("stop is idempotent, refuses new connections and leaves the client retrying; deinit stops too")
    func stop() async throws {
        var server: LocalCableServer? = try LocalCableServer(options: Fixture.serverOptions())
        let port = try #require(server?.port)
        let client = try Fixture.client(try #require(server))
        client.connect()
        #expect(await client.reaches(.connected))
        server?.stop()
        server?.stop()
        #expect(server?.connectionCount.value == 0)
        #expect(server?.snapshot.value.isAccepting == false)
        #expect(RawSocket.isRefused(port: port))
        #expect(await client.reaches(10) { if case .connecting(let attempt) = $0 { attempt >= 2 } else { false } })
        server?.broadcast(["late": true], to: "x")  // after stop: does nothing, returns at once
        #expect(throws: LocalCableServerError(.stopped)) { try server?.acceptConnections() }
        server = nil

        var other: LocalCableServer? = try LocalCableServer()
        let otherPort = try #require(other?.port)
        other = nil
        #expect(RawSocket.isRefused(port: otherPort))
    }
}
