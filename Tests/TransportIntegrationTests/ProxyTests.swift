#if os(Linux)
    import CableReactive
    import CableTesting
    import Foundation
    import Testing

    /// SocketTransport through an HTTP CONNECT proxy: Debian's tinyproxy for the real tunnels and refusals,
    /// a raw peer for the answers tinyproxy does not give (502, silence).
    extension TransportIntegrationTests {
        private func through(
            _ proxy: SocketTransport.HTTPProxy, _ base: SocketTransport.Options = SocketTransport.Options()
        ) -> SocketTransport.Options {
            var options = base
            options.proxy = .http(proxy)
            return options
        }

        private func local(_ port: Int, username: String? = nil, password: String? = nil) -> SocketTransport.HTTPProxy {
            SocketTransport.HTTPProxy(host: "127.0.0.1", port: UInt16(port), username: username, password: password)
        }

        @Test("ws:// goes through the proxy's CONNECT tunnel and messages flow both ways")
        func tunnelsWS() throws {
            let peer = try Peers.plain.get()
            let proxy = try TinyProxy()
            let (connection, recorder) = connect(
                "ws://127.0.0.1:\(peer.port)/echo", options: through(local(proxy.port)))
            #expect(recorder.waitOpened().first == .opened(protocol: nil))
            #expect(connection.send(text: "through the tunnel"))
            #expect(recorder.waitTexts(1) == ["through the tunnel"])
            #expect(proxy.waitLog(contains: "CONNECT 127.0.0.1:\(peer.port)"))
            connection.close(code: .normalClosure, reason: "")
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
        }

        @Test("wss:// speaks TLS to the server through the tunnel: its name is sent and its certificate checked")
        func tunnelsWSS() throws {
            let peer = try Peers.tls.get()
            let proxy = try TinyProxy()
            let (connection, recorder) = connect(
                "wss://localhost:\(peer.port)/sni", options: through(local(proxy.port), try tlsOptions()))
            #expect(recorder.waitTexts(1) == ["localhost"])  // the SNI the server saw
            #expect(proxy.waitLog(contains: "CONNECT localhost:\(peer.port)"))
            #expect(connection.send(text: "secret"))
            #expect(recorder.waitTexts(2).last == "secret")
            connection.close(code: .normalClosure, reason: "")
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))

            // Through the same proxy, a certificate the system does not trust is still refused.
            let (_, untrusted) = connect("wss://localhost:\(peer.port)/sni", options: through(local(proxy.port)))
            #expect(untrusted.waitClosed()?.failureKind == .certificate)
        }

        @Test("a proxy that wants credentials answers 407 without them, 401 to wrong ones, and tunnels with them")
        func proxyCredentials() throws {
            let peer = try Peers.plain.get()
            let proxy = try TinyProxy(settings: ["BasicAuth alice s3cret"])
            let url = "ws://127.0.0.1:\(peer.port)/echo"
            // tinyproxy answers 407 to a request without credentials and 401 to wrong ones; both stop a client.
            let cases: [(String?, String?, Int)] = [
                (nil, nil, 407), ("alice", "wrong", 401), ("mallory", "s3cret", 401),
            ]
            for (username, password, status) in cases {
                let options = through(local(proxy.port, username: username, password: password))
                let (_, recorder) = connect(url, options: options)
                let info = recorder.waitClosed()
                #expect(info?.failureKind == .proxyRejected(status: status))
                let text = "\(String(describing: info))"
                #expect(!text.contains("wrong") && !text.contains("s3cret") && !text.contains("alice"))
            }
            let options = through(local(proxy.port, username: "alice", password: "s3cret"))
            let (connection, recorder) = connect(url, options: options)
            #expect(recorder.waitOpened().first == .opened(protocol: nil))
            connection.close(code: .normalClosure, reason: "")
            _ = recorder.waitClosed()
        }

        @Test("a proxy that forbids the destination answers 403; one that cannot reach it answers 500")
        func proxyForbidsOrFails() throws {
            let peer = try Peers.plain.get()
            let strict = try TinyProxy(settings: ["ConnectPort 443"])
            let (_, forbidden) = connect("ws://127.0.0.1:\(peer.port)/echo", options: through(local(strict.port)))
            #expect(forbidden.waitClosed()?.failureKind == .proxyRejected(status: 403))

            let open = try TinyProxy()
            let closedPort = try unusedPort()
            let (_, unreachable) = connect("ws://127.0.0.1:\(closedPort)/", options: through(local(open.port)))
            #expect(unreachable.waitClosed()?.failureKind == .proxyRejected(status: 500))
        }

        @Test("the CONNECT request names the server and carries Basic credentials; a 502 is proxyRejected(502)")
        func proxyBadGateway() throws {
            let fake = try RawPeer { _ in Array("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 4\r\n\r\nnope".utf8) }
            let (_, recorder) = connect(
                "wss://cable.example.test/cable?token=x",
                options: through(local(fake.port, username: "alice", password: "s3cret")))
            #expect(recorder.waitClosed()?.failureKind == .proxyRejected(status: 502))
            let head = fake.waitRequestHead()
            let basic = Data("alice:s3cret".utf8).base64EncodedString()
            #expect(
                head
                    == "CONNECT cable.example.test:443 HTTP/1.1\r\nHost: cable.example.test:443\r\n"
                    + "Proxy-Authorization: Basic \(basic)\r\n\r\n")
        }

        @Test("a proxy that never answers fails the attempt at the connect timeout, and close() ends the wait at once")
        func proxyNeverAnswers() throws {
            let silent = try RawPeer { _ in [] }
            var options = through(local(silent.port))
            options.connectTimeout = 0.5
            let started = Date()
            let (_, recorder) = connect("ws://example.test/cable", options: options)
            let info = recorder.waitClosed()
            #expect(info?.failureKind == .timeout)
            #expect(Date().timeIntervalSince(started) < 5)

            let silentAgain = try RawPeer { _ in [] }
            options = through(local(silentAgain.port))
            let (connection, waiting) = connect("ws://example.test/cable", options: options)
            #expect(silentAgain.waitForRequestHead().hasPrefix("CONNECT example.test:80 HTTP/1.1\r\n"))
            let closing = Date()
            connection.close(code: .normalClosure, reason: "")
            #expect(waiting.waitClosed() == .closed(code: .normalClosure, reason: ""))
            #expect(Date().timeIntervalSince(closing) < 2)
        }

        @Test("a proxy that is not listening is connectionRefused; a host on the bypass list is reached directly")
        func proxyRefusedOrBypassed() throws {
            let peer = try Peers.plain.get()
            let closedPort = try unusedPort()
            let (_, refused) = connect("ws://127.0.0.1:\(peer.port)/echo", options: through(local(closedPort)))
            #expect(refused.waitClosed()?.failureKind == .connectionRefused)

            var bypassing = local(closedPort)
            bypassing.bypass = "localhost, 127.0.0.0/8"
            let (connection, direct) = connect("ws://127.0.0.1:\(peer.port)/echo", options: through(bypassing))
            #expect(direct.waitOpened().first == .opened(protocol: nil))
            connection.close(code: .normalClosure, reason: "")
            _ = direct.waitClosed()
        }

        @Test("a client behind a proxy: 407 stops it with the proxy's status in lastDisconnect; credentials connect it")
        func clientThroughProxy() async throws {
            let server = try LocalCableServer()
            let proxy = try TinyProxy(settings: ["BasicAuth alice s3cret"])
            let refused = try ActionCableClient(
                url: server.url, transport: SocketTransport(options: through(local(proxy.port))))
            defer { refused.close() }
            refused.connect()
            let stopped = await refused.state.first(within: 10) { if case .stopped = $0 { true } else { false } }
            #expect(stopped == .stopped(reason: .permanentFailure(WebSocketError(.proxyRejected(status: 407)))))
            let last = refused.lastDisconnect.value
            #expect(last?.error?.kind == .proxyRejected(status: 407))
            #expect(last?.httpStatus == nil)  // the server was never asked
            #expect(server.requests.isEmpty)

            let options = through(local(proxy.port, username: "alice", password: "s3cret"))
            let client = try ActionCableClient(url: server.url, transport: SocketTransport(options: options))
            defer { client.close() }
            let room = try client.subscribe(["channel": "ChatChannel"])
            client.connect()
            #expect(await room.state.first(within: 10) { $0 == .subscribed(confirmations: 1) } != nil)
            #expect(proxy.waitLog(contains: "CONNECT 127.0.0.1:"))
            #expect(server.requests.count == 1)
        }
    }
#endif
