import CableReactive
import Foundation
import Signals
import Testing

extension IntegrationTests {
    @Suite struct Scale {
        /// 100 clients in one process ride through a 5 s outage of their puma (stopped, then started again on
        /// the same port). Their sessions were healthy for more than 10 s, so each loss is followed by a
        /// random delay in [0, minReconnectDelay] before the first retry: the first failed retries spread
        /// over that window instead of arriving together.
        @Test func hundredClientsRideThroughAnOutage() async throws {
            let count = 100
            let minDelay = 1.0
            var server = try await RailsServer.start(["--env", "CABLE_BEAT_INTERVAL=1"])
            defer { server.stop() }
            let clients = try (0..<count).map { index in
                try makeClient(
                    server.cableURL, query: "token=tok-herd\(index)", options: .test(min: minDelay, max: 2))
            }
            defer { for client in clients { client.close() } }
            let subscriptions = try clients.map { try $0.subscribe(["channel": "EchoChannel", "stream": "herd"]) }
            for client in clients { client.connect() }
            for subscription in subscriptions {
                try await waitFor(subscription.state, 20, "confirmed") { $0 == .subscribed(confirmations: 1) }
            }
            let allConnected = monotonicNow()
            #expect(try await connectionCount(server.control) == count)
            let recorders = clients.map { Recorder($0.state) }

            // healthy for 10 s (the client's rule), plus a margin; this wait is the scenario, not a sync
            try await Task.sleep(nanoseconds: UInt64((10.5 - (monotonicNow() - allConnected)) * 1e9))
            #expect(clients.allSatisfy { $0.state.value == .connected })
            let outage = monotonicNow()
            server.stop()
            try await Task.sleep(nanoseconds: 5_000_000_000)
            let restarted = try await server.restarted()
            server = restarted
            let back = monotonicNow()
            for subscription in subscriptions {
                try await waitFor(subscription.state, 15, "confirmed after the outage") {
                    $0 == .subscribed(confirmations: 2)
                }
            }
            let recovered = monotonicNow()
            #expect(clients.allSatisfy { $0.state.value == .connected })
            try await eventually(5, "100 connections on the new puma") {
                try await connectionCount(restarted.control) == count
            }

            // the first failed retry of each client: connecting(attempt: 1)
            let firstRetries = recorders.compactMap { recorder in
                recorder.all.first { $0.time > outage && $0.value == .connecting(attempt: 1) }?.time
            }.map { $0 - outage }.sorted()
            #expect(firstRetries.count == count)
            // five equal parts of [0, minDelay]; a retry a little after minDelay (allowed below) counts in the last
            let buckets = Set(firstRetries.map { min(Int($0 / (minDelay / 5)), 4) })
            print(
                String(
                    format:
                        "herd: first retries %.3f…%.3f s after the outage, %d of 5 buckets; all back %.2f s after restart",
                    firstRetries.first ?? -1, firstRetries.last ?? -1, buckets.count, recovered - back))
            #expect((firstRetries.last ?? 99) <= minDelay + 0.3)
            #expect((firstRetries.first ?? 99) <= minDelay / 5)
            #expect(buckets.count >= 4)
            #expect(recovered - back <= 2 * 1.25 + 3)
            // nothing in this process ignores SIGPIPE: had a client written to a dead socket without
            // MSG_NOSIGNAL, the run would have ended here instead of passing
            #expect(sigpipeEndsTheProcess())
        }

        /// 500 × (create, connect, subscribe, close) against a real server: afterwards the server has no
        /// connections and this process has no more threads or descriptors than before.
        @Test func fiveHundredLifecyclesLeaveNothing() async throws {
            let server = try await RailsServer.start()
            defer { server.stop() }
            func lifecycle(_ index: Int) async throws {
                let client = try makeClient(server.cableURL, query: "token=tok-life\(index % 10)")
                let subscription = try client.subscribe(["channel": "EchoChannel", "stream": "life"])
                client.connect()
                try await waitFor(subscription.state, 10, "lifecycle \(index) confirmed", where: isSubscribed)
                client.close()
                // published on the callback queue, so after close() returns, not necessarily before
                try await waitFor(subscription.state, 5, "lifecycle \(index) unsubscribed") { $0 == .unsubscribed }
            }
            // warm up the runtime, URLSession and the transport's shared machinery, then take the baseline
            for index in 0..<10 { try await lifecycle(index) }
            try await eventually(10, "warm-up connections closed") { try await connectionCount(server.control) == 0 }
            let threads = taskCount()
            let fds = fdCount()

            let start = monotonicNow()
            for index in 0..<500 { try await lifecycle(index) }
            let elapsed = monotonicNow() - start

            try await eventually(10, "0 server connections") { try await connectionCount(server.control) == 0 }
            try await eventually(15, "threads ≤ \(threads) and fds ≤ \(fds)") {
                taskCount() <= threads && fdCount() <= fds
            }
            let total = try await HTTP.get(server.control + "/connections")
            print(
                "lifecycles: 500 in \(String(format: "%.1f", elapsed)) s; threads \(threads) → \(taskCount()), "
                    + "fds \(fds) → \(fdCount()); server total_connected \(total["total_connected"]?.intValue ?? -1)")
            #expect((total["total_connected"]?.intValue ?? 0) >= 510)
        }
    }
}
