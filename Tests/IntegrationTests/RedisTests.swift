import CableReactive
import Foundation
import Signals
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension IntegrationTests {
    /// Two pumas on one redis-server (Rails' redis adapter).
    @Suite struct Redis {
        /// A broadcast on A (over HTTP and from a client's perform) reaches a client of B.
        @Test func broadcastAcrossServers() async throws {
            let a = try Env.redisA()
            let b = try Env.redisB()
            let stream = unique("xsrv")
            let onA = try makeClient(a, query: "token=tok-\(unique("a"))")
            let onB = try makeClient(b, query: "token=tok-\(unique("b"))")
            defer {
                onA.close()
                onB.close()
            }
            onA.connect()
            onB.connect()
            let subA = try await echoSubscription(onA, stream: stream)
            let subB = try await echoSubscription(onB, stream: stream)

            try await HTTP.post(controlURL(of: a) + "/broadcast?stream=\(stream)", body: #"{"from":"http on A"}"#)
            try await nextMessage(subB, 5, "HTTP broadcast on A at B") { $0["from"]?.stringValue == "http on A" }

            #expect(subA.perform("broadcast", ["from": "client on A"]))
            try await nextMessage(subB, 5, "perform broadcast on A at B") {
                $0["from"]?.stringValue == "client on A"
            }
        }

        /// onRequest picks the next server of a list on every attempt; when A is killed the client ends up on
        /// B, resubscribed, and still gets broadcasts (made on B).
        @Test func failoverToTheOtherServer() async throws {
            let redis = try Env.redisURL()
            let prefix = unique("fo")
            let first = try await RailsServer.start([
                "--redis", redis, "--prefix", prefix, "--env", "CABLE_BEAT_INTERVAL=1",
            ])
            defer { first.stop() }
            let second = try await RailsServer.start([
                "--redis", redis, "--prefix", prefix, "--env", "CABLE_BEAT_INTERVAL=1",
            ])
            defer { second.stop() }
            let servers = [first.port, second.port]
            let attempts = Locked(0)
            let client = try makeClient(first.cableURL) { request in
                let index = attempts.withLock { n in
                    defer { n += 1 }
                    return n
                }
                var components = URLComponents(url: request.url!, resolvingAgainstBaseURL: false)!
                components.port = servers[index % servers.count]
                components.query = "token=tok-failover"
                request.url = components.url
            }
            defer { client.close() }
            client.connect()
            let stream = unique("fo-stream")
            let subscription = try await echoSubscription(client, stream: stream)
            #expect(try await connectionCount(first.control, user: "failover") == 1)

            try await first.kill()
            try await waitFor(subscription.state, 10, "confirmed on B") { $0 == .subscribed(confirmations: 2) }
            #expect(client.state.value == .connected)
            #expect(try await connectionCount(second.control, user: "failover") == 1)
            try await HTTP.post(second.control + "/broadcast?stream=\(stream)", body: #"{"from":"B"}"#)
            try await nextMessage(subscription, 5, "broadcast on B") { $0["from"]?.stringValue == "B" }
        }
    }
}
