#if os(Linux) && canImport(Glibc)
    @testable import CableReactive
    import CableTesting
    import Foundation
    import Signals
    import Testing

    /// SocketTransport's `transport_route` line: whether a connection goes through a proxy, and which.
    @Suite("SocketTransport: the route log line")
    struct TransportRouteLogTests {
        private typealias HTTPProxy = SocketTransport.HTTPProxy

        /// Collects a client's log lines as `LEVEL line`.
        private final class Lines: Sendable {
            private let lines = Locked<[String]>([])
            var logger: CableLogger {
                CableLogger(minimumLevel: .debug) { [lines] level, line in
                    lines.withLock { $0.append("\(level) \(line)") }
                }
            }
            var all: [String] { lines.withLock { $0 } }
            var routes: [String] { all.filter { $0.contains("transport_route") } }
        }

        private func endpoint(_ url: String) throws -> WebSocketEndpoint {
            try WebSocketEndpoint(url: #require(URL(string: url)))
        }

        /// A loopback port nothing listens on (a stopped server's): connecting to it is refused at once.
        private func closedPort() throws -> UInt16 {
            let server = try LocalCableServer()
            let port = server.port
            server.stop()
            return port
        }

        // MARK: The line

        @Test("the route's line: the proxy's host:port at INFO, or proxy=none; never its credentials")
        func lines() throws {
            let proxy = try HTTPProxy(url: "http://alice:s3cret@proxy.corp:3128")
            #expect(ProxyDecision.proxy(proxy).route == .proxy(host: "proxy.corp", port: 3128))
            let through = LogEvent.route(ProxyDecision.proxy(proxy).route)
            #expect(through.level == .info)
            #expect(through.render(host: "cable.test") == "transport_route host=cable.test proxy=proxy.corp:3128")
            let ipv6 = ProxyDecision.proxy(HTTPProxy(host: "::1", port: 8080, username: "u", password: "p")).route
            #expect(
                LogEvent.route(ipv6).render(host: "h", label: "chat")
                    == "transport_route host=h client=chat proxy=[::1]:8080")
            #expect(ProxyDecision.direct.route == .direct)
            #expect(LogEvent.route(.direct).level == .debug)
            #expect(LogEvent.route(.direct).render(host: "h") == "transport_route host=h proxy=none")
            #expect(ProxyDecision.bypassed.route == .bypassed)
            #expect(LogEvent.route(.bypassed).level == .info)
            #expect(LogEvent.route(.bypassed).render(host: "h") == "transport_route host=h proxy=none bypassed=true")
            // A host that would break the line's key=value shape is reduced to safe characters.
            #expect(
                LogEvent.route(.proxy(host: "evil=x&y", port: 1)).render(host: "h")
                    == "transport_route host=h proxy=evil?x?y:1")
        }

        @Test("the decision tells a host the bypass list names from one no proxy applies to")
        func decisions() throws {
            let wss = try endpoint("wss://api.internal.corp/cable")
            let proxied = ["https_proxy": "http://alice:s3cret@proxy:3128"]
            #expect(try SocketTransport.Proxy.environment.decision(for: wss, environment: [:]) == .direct)
            #expect(
                try SocketTransport.Proxy.environment.decision(
                    for: wss, environment: proxied.merging(["no_proxy": ".corp"]) { $1 }) == .bypassed)
            #expect(
                try SocketTransport.Proxy.environment.decision(for: wss, environment: proxied)
                    == .proxy(HTTPProxy(host: "proxy", port: 3128, username: "alice", password: "s3cret")))
            #expect(try SocketTransport.Proxy.direct.decision(for: wss) == .direct)
            let configured = SocketTransport.Proxy.http(
                HTTPProxy(host: "proxy", port: 3128, bypass: "internal.corp"))
            #expect(try configured.decision(for: wss) == .bypassed)
            #expect(try configured.decision(for: endpoint("wss://example.com/")).proxy?.host == "proxy")
        }

        @Test("a transport used on its own reports the route to its receiver, once, before it connects")
        func reportsRoute() async throws {
            let port = try closedPort()
            let routes = Locked<[ConnectionRoute]>([])
            let proxy = try HTTPProxy(url: "http://alice:s3cret@127.0.0.1:\(port)")
            let receiver = TextReceiver(
                text: { _ in }, batchEnded: { ReadDelivery() },
                routed: { route in routes.withLock { $0.append(route) } })
            let request = CableRequest(url: try #require(URL(string: "ws://cable.test/cable")))
            let closed: WebSocketCloseInfo = await withCheckedContinuation { continuation in
                let connection = SocketTransport(options: .init(proxy: .http(proxy))).connect(
                    request: request, protocols: [], receiver: receiver
                ) { event in
                    if case .closed(let info) = event { continuation.resume(returning: info) }
                }
                _ = connection
            }
            #expect(closed == .failed(WebSocketError(.connectionRefused)))
            #expect(routes.withLock { $0 } == [.proxy(host: "127.0.0.1", port: port)])
        }

        // MARK: Through a client

        @Test(
            "a client through a proxy logs the proxy's host:port with its own host and label, nothing else"
        )
        func clientThroughProxy() async throws {
            let port = try closedPort()
            let lines = Lines()
            var options = CableOptions()
            options.logLabel = "chat"
            let proxy = try HTTPProxy(url: "http://alice:pw-S3CR3T@127.0.0.1:\(port)")
            let client = try ActionCableClient(
                url: #require(URL(string: "ws://cable.test:3000/cable/path-S3CR3T?token=query-S3CR3T")),
                options: options, transport: SocketTransport(options: .init(proxy: .http(proxy))),
                logger: lines.logger)
            client.connect()
            let last = await client.lastDisconnect.first(within: 10) { $0 != nil }
            client.close()
            #expect(last??.error?.kind == .connectionRefused)  // the proxy's port, not the server's name
            #expect(
                lines.routes.first
                    == "INFO transport_route host=cable.test:3000 client=chat proxy=127.0.0.1:\(port)")
            for line in lines.all {
                #expect(
                    !line.contains("S3CR3T") && !line.contains("alice") && !line.contains("/cable"), "\(line)"
                )
            }
        }

        @Test(
            "a direct connection logs proxy=none at DEBUG; one the bypass list sends directly says so at INFO"
        )
        func clientDirectAndBypassed() async throws {
            let server = try LocalCableServer()
            let direct = Lines()
            let client = try ActionCableClient(
                url: server.url, transport: SocketTransport(), logger: direct.logger)
            client.connect()
            #expect(await client.state.first(within: 10) { $0 == .connected } != nil)
            client.close()
            #expect(direct.routes == ["DEBUG transport_route host=127.0.0.1:\(server.port) proxy=none"])

            let bypassed = Lines()
            let proxy = HTTPProxy(host: "127.0.0.1", port: try closedPort(), bypass: "127.0.0.0/8")
            let viaBypass = try ActionCableClient(
                url: server.url, transport: SocketTransport(options: .init(proxy: .http(proxy))),
                logger: bypassed.logger)
            viaBypass.connect()
            #expect(await viaBypass.state.first(within: 10) { $0 == .connected } != nil)
            viaBypass.close()
            #expect(
                bypassed.routes == [
                    "INFO transport_route host=127.0.0.1:\(server.port) proxy=none bypassed=true"
                ])
        }
    }
#endif
