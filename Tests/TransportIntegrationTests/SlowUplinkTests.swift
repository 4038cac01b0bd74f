#if os(Linux)
    import CableReactive
    import CableTesting
    import Foundation
    import Signals
    import Testing

    /// A client whose performs cannot leave as fast as it makes them (a phone on a bad uplink sending large
    /// performs), against a LocalCableServer that reads it at 64 KiB/s and pings it every 0.5 s. In this
    /// serialized suite, so that the megabytes it pushes do not slow down other suites' deadline tests.
    extension TransportIntegrationTests {
        static let uplinkBodySize = 16 << 10
        static let uplinkRate = 64 << 10

        @Test("a slow uplink: the session stays up, perform turns false at the byte limit and true once drained")
        func slowUplink() async throws {
            var serverOptions = LocalCableServer.Options()
            serverOptions.pingInterval = 0.5
            serverOptions.closeTimeout = 0.3
            let server = try LocalCableServer(options: serverOptions)
            let received = Locked<[Int]>([])
            server.onPerform("speak") { call in
                if let n = call.data["n"]?.intValue { received.withLock { $0.append(n) } }
            }
            let limit = SocketTransport.Options().maxPendingSendBytes
            var options = CableOptions()
            options.staleTimeout = 2
            let client = try ActionCableClient(url: server.url, options: options, transport: SocketTransport())
            defer { client.close() }
            let states = Locked<[CableState]>([])
            let stateLog = client.state.observe { state in states.withLock { $0.append(state) } }
            defer { stateLog.cancel() }
            let room = try client.subscribe(["channel": "ChatChannel"])
            client.connect()
            #expect(await room.state.first(within: 5) { $0 == .subscribed(confirmations: 1) } != nil)
            let connected = states.withLock { $0.count }

            server.throttleReading(bytesPerSecond: Self.uplinkRate)
            let body = JSONValue.string(String(repeating: "x", count: Self.uplinkBodySize))
            var accepted = 0
            let cap = 4 * limit / Self.uplinkBodySize
            while accepted < cap, room.perform("speak", ["n": .int(accepted), "body": body]) { accepted += 1 }
            // Refused once the limit is reached: what waits is bounded by it plus the kernel's socket buffers.
            #expect(accepted < cap)
            #expect(accepted * Self.uplinkBodySize >= limit / 2)
            #expect(!room.perform("speak", ["n": -1, "body": body]))

            // Three stale timeouts (the server reads 24 × 16 KiB at 64 KiB/s in 6 s): the pings keep arriving,
            // so the client never declares the session stale.
            let readSlowly = await eventually(seconds: 30) { received.withLock { $0.count } >= 24 }
            #expect(readSlowly)
            #expect(states.withLock { Array($0.dropFirst(connected)) } == [])
            #expect(client.state.value == .connected)
            #expect(server.requests.count == 1)

            // Full speed again: every perform that returned true arrives, once and in order, and perform
            // succeeds again.
            server.throttleReading(bytesPerSecond: nil)
            let drained = await eventually(seconds: 30) { received.withLock { $0.count } >= accepted }
            #expect(drained)
            #expect(received.withLock { $0 } == Array(0..<accepted))
            #expect(room.perform("speak", ["n": .int(accepted), "body": body]))
            #expect(await eventually(seconds: 10) { received.withLock { $0.last } == accepted })
            #expect(server.requests.count == 1)
        }

        /// Polls `condition` every 10 ms until it holds or `seconds` pass.
        func eventually(seconds: Double, _ condition: () -> Bool) async -> Bool {
            let deadline = Date(timeIntervalSinceNow: seconds)
            while Date() < deadline {
                if condition() { return true }
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
            return condition()
        }
    }
#endif
