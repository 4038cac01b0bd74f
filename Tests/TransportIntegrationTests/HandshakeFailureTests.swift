#if os(Linux)
    import CableReactive
    import Foundation
    import Testing

    extension TransportIntegrationTests {
        @Test("reports the HTTP status when the server refuses the upgrade", arguments: [401, 403, 404])
        func refusedUpgrade(status: Int) throws {
            let peer = try Peers.plain.get()
            let (_, recorder) = connect("ws://127.0.0.1:\(peer.port)/status/\(status)")
            let info = recorder.waitClosed()
            #expect(info?.failureKind == .upgradeRejected(status: status))
            #expect(!"\(String(describing: info))".contains("secret"))
            #expect(recorder.events.count == 1)
        }

        @Test("times out when the server never finishes the handshake")
        func timesOut() throws {
            let peer = try Peers.plain.get()
            var options = SocketTransport.Options()
            options.connectTimeout = 0.3
            let (_, recorder) = connect("ws://127.0.0.1:\(peer.port)/hang", options: options)
            #expect(recorder.waitClosed()?.failureKind == .timeout)
        }

        @Test("rejects a wrong Sec-WebSocket-Accept")
        func rejectsWrongAccept() throws {
            let peer = try Peers.plain.get()
            let (_, recorder) = connect("ws://127.0.0.1:\(peer.port)/bad-accept")
            #expect(recorder.waitClosed()?.failureKind == .invalidHandshake)
        }

        @Test("rejects a subprotocol the client did not offer")
        func rejectsUnofferedSubprotocol() throws {
            let peer = try Peers.plain.get()
            let (_, recorder) = connect("ws://127.0.0.1:\(peer.port)/bogus-subprotocol", protocols: ["chat"])
            #expect(recorder.waitClosed()?.failureKind == .invalidHandshake)
        }

        @Test("reports connection refused when nothing listens")
        func refusesClosedPort() throws {
            // Bind a port and close it again, so nothing listens there.
            let port = try unusedPort()
            let (_, recorder) = connect("ws://127.0.0.1:\(port)/")
            #expect(recorder.waitClosed()?.failureKind == .connectionRefused)
        }

        @Test("rejects URLs that are not ws or wss", arguments: ["http2://x/", "ws://", "ws://host:0/", "file:///tmp"])
        func rejectsBadURL(url: String) {
            let (_, recorder) = connect(url)
            #expect(recorder.waitClosed()?.failureKind == .invalidURL)
        }

        @Test("fails TLS for a certificate issued to another host")
        func rejectsWrongHostCertificate() throws {
            let peer = try Peers.wrongHost.get()
            let (_, recorder) = connect("wss://localhost:\(peer.port)/echo", options: try tlsOptions())
            let info = recorder.waitClosed()
            #expect(info?.failureKind == .certificate)
            #expect("\(String(describing: info))".contains("hostname mismatch"))
        }

        @Test("fails TLS for a certificate from an unknown CA")
        func rejectsUnknownCA() throws {
            let peer = try Peers.tls.get()
            let (_, recorder) = connect("wss://localhost:\(peer.port)/echo")
            #expect(recorder.waitClosed()?.failureKind == .certificate)
        }

        @Test("verifies an IPv6 literal against the certificate's IP address")
        func verifiesIPv6Literal() throws {
            let peer = try Peers.tlsIPv6.get()
            let (connection, recorder) = connect("wss://[::1]:\(peer.port)/echo", options: try tlsOptions())
            #expect(recorder.waitOpened().first == .opened(protocol: nil))
            #expect(connection.send(text: "over TLS on v6"))
            #expect(recorder.waitTexts(1) == ["over TLS on v6"])
            connection.close(code: .normalClosure, reason: "")
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
        }

        @Test(
            "sends SNI for host names only, never for IP literals",
            arguments: [("localhost", "localhost"), ("127.0.0.1", "None")])
        func sendsSNIForNamesOnly(host: String, expected: String) throws {
            let peer = try Peers.tls.get()
            let (connection, recorder) = connect("wss://\(host):\(peer.port)/sni", options: try tlsOptions())
            #expect(recorder.waitTexts(1) == [expected])
            connection.close(code: .normalClosure, reason: "")
            _ = recorder.waitClosed()
        }

        @Test("verifies an IP literal against the certificate's IP address")
        func verifiesIPLiteral() throws {
            let peer = try Peers.tls.get()
            let (connection, recorder) = connect("wss://127.0.0.1:\(peer.port)/echo", options: try tlsOptions())
            #expect(recorder.waitOpened().first == .opened(protocol: nil))
            connection.close(code: .normalClosure, reason: "")
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
        }
    }

    /// A loopback port that nothing listens on (bound, then closed).
    func unusedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else { throw PeerError("bind failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
#endif
