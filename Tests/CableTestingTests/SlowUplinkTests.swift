#if os(Linux)
    import CableReactive
    import CableTesting
    import Foundation
    import Signals
    import Testing

    /// A client whose performs cannot leave as fast as it makes them (a phone on a bad uplink sending large
    /// performs), against a server that reads it at 64 KiB/s and pings it every 0.5 s.
    @Suite("Slow uplink: reading goes on while writes wait")
    struct SlowUplinkTests {
        static let bodySize = 16 << 10
        static let rate = 64 << 10

        @Test("the session stays up, perform turns false at the byte limit and true once the queue drains")
        func slowUplink() async throws {
            let server = try LocalCableServer(options: Fixture.serverOptions(pingInterval: 0.5))
            let received = Locked<[Int]>([])
            server.onPerform("speak") { call in
                if let n = call.data["n"]?.intValue { received.withLock { $0.append(n) } }
            }
            let limit = SocketTransport.Options().maxPendingSendBytes
            let client = try ActionCableClient(
                url: server.url, options: Fixture.options(staleTimeout: 2), transport: SocketTransport())
            defer { client.close() }
            let states = Locked<[CableState]>([])
            let stateLog = client.state.observe { state in states.withLock { $0.append(state) } }
            defer { stateLog.cancel() }
            let room = try client.subscribe(["channel": "ChatChannel"])
            client.connect()
            #expect(await room.reaches(.subscribed(confirmations: 1)))
            let connected = states.withLock { $0.count }

            server.throttleReading(bytesPerSecond: Self.rate)
            let body = JSONValue.string(String(repeating: "x", count: Self.bodySize))
            var accepted = 0
            let cap = 4 * limit / Self.bodySize
            while accepted < cap, room.perform("speak", ["n": .int(accepted), "body": body]) { accepted += 1 }
            // Refused once the limit is reached: what waits is bounded by it plus the kernel's socket buffers.
            #expect(accepted < cap)
            #expect(accepted * Self.bodySize >= limit / 2)
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
        private func eventually(seconds: Double, _ condition: () -> Bool) async -> Bool {
            let deadline = Date(timeIntervalSinceNow: seconds)
            while Date() < deadline {
                if condition() { return true }
                try? await Task.sleep(nanoseconds: 10_000_000)
            }
            return condition()
        }
    }
#endif
