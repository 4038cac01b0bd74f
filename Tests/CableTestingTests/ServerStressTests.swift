import CableReactive
import CableTesting
import Dispatch
import Foundation
import Signals
import Testing

@Suite("LocalCableServer: concurrent control")
struct ServerStressTests {
    @Test("eight threads drive broadcasts, disconnects, faults and rules while clients come and go")
    func eightThreads() async throws {
        var options = LocalCableServer.Options()
        options.pingInterval = 0.02
        options.closeTimeout = 0.2
        let server = try LocalCableServer(options: options)
        let calls = Locked<[LocalCableServer.PerformCall]>([])
        server.onPerform("echo") { call in
            calls.withLock { $0.append(call) }
            call.reply(call.data)
            call.broadcast(["from": .int(call.connection.rawValue)])
        }
        let clients = try (0..<6).map { _ in try Fixture.client(server, staleTimeout: 1) }
        let rooms = try clients.map { try $0.subscribe(["channel": "Room", "n": 1]) }
        for client in clients { client.connect() }
        for room in rooms { #expect(await room.reaches(.subscribed(confirmations: 1), within: 10)) }

        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var random = SeededRandom(seed: UInt64(thread))
            for _ in 0..<150 {
                let id = LocalCableServer.ConnectionID(Int.random(in: 1...12, using: &random))
                switch Int.random(in: 0..<10, using: &random) {
                case 0: server.broadcast(["n": 1], to: rooms[0].identifier)
                case 1: server.broadcast(["n": 2]) { $0["channel"] == "Room" }
                case 2: server.disconnect(.connection(id), reason: "shuffle", reconnect: true)
                case 3: server.drop(.connection(id))
                case 4: server.sendWelcome()
                case 5: server.welcome = Bool.random(using: &random) ? .immediately : .after(0.01)
                case 6: server.subscriptionRule = { _, _ in .confirm }
                case 7: _ = rooms[thread % rooms.count].perform("echo", ["t": .int(thread)])
                case 8: _ = server.snapshot.value.connections.map(\.subscriptions)
                default: _ = server.connectionCount.value
                }
            }
        }
        // After the storm every client finds its way back and its subscription is confirmed again.
        server.welcome = .immediately
        for client in clients { #expect(await client.reaches(.connected, within: 10)) }
        #expect(await server.wait(timeout: 10) { $0.connections.count == 6 })
        server.stop()
        #expect(server.connectionCount.value == 0)
        // Calls kept past the server's life do nothing.
        for call in calls.withLock({ $0 }) { call.reply(["late": true]) }
        for client in clients { client.close() }
    }
}
