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

        /// Failover between two servers of one cluster (one redis). A client's URL names one server, so choosing
        /// another is the app's job, in `onRequest`, which runs before every connection attempt: here it takes
        /// the next server of a list on every attempt (round robin, as a client of a server list would do).
        /// The client is on A, where a broadcast made on B reaches it. A is killed (SIGKILL: no close frame, no
        /// goodbye); the very next attempt goes to B, where the client is resubscribed, and its broadcast
        /// reaches an observer that was on B all along.
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
            let ports = [first.port, second.port]
            let targets = Locked<[Int]>([])  // the port of every attempt, in order
            let user = unique("failover")
            let client = try makeClient(first.cableURL) { request in
                let port = targets.withLock { targets in
                    targets.append(ports[targets.count % ports.count])
                    return targets[targets.count - 1]
                }
                guard var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
                else { throw Failure("no request URL") }
                components.port = port
                guard let target = components.url else { throw Failure("bad URL \(components)") }
                request.url = target
                request.setQueryItem("token", "tok-\(user)")
            }
            defer { client.close() }
            let observer = try makeClient(second.cableURL, query: "token=tok-\(unique("observer"))")
            defer { observer.close() }
            client.connect()
            observer.connect()
            let stream = unique("fo-stream")
            let subscription = try await echoSubscription(client, stream: stream)
            let watching = try await echoSubscription(observer, stream: stream)
            #expect(try await connectionCount(first.control, user: user) == 1)
            try await HTTP.post(second.control + "/broadcast?stream=\(stream)", body: #"{"from":"B before"}"#)
            try await nextMessage(subscription, 5, "a broadcast on B at the client on A") {
                $0["from"]?.stringValue == "B before"
            }

            try await first.kill()
            try await waitFor(subscription.state, 10, "confirmed on B") { $0 == .subscribed(confirmations: 2) }
            #expect(client.state.value == .connected)
            #expect(targets.withLock { $0 } == ports, "the first attempt after the loss went to B")
            #expect(try await connectionCount(second.control, user: user) == 1)
            #expect(subscription.perform("broadcast", ["from": "client on B"]))
            try await nextMessage(watching, 5, "the failed-over client's broadcast at the observer") {
                $0["from"]?.stringValue == "client on B"
            }
            try await nextMessage(subscription, 5, "its own broadcast back") {
                $0["from"]?.stringValue == "client on B"
            }
            #expect(observer.state.value == .connected)
        }
    }
}
