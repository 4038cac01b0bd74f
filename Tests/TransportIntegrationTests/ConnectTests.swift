#if os(Linux)
    import CableReactive
    import Foundation
    import Testing

    extension TransportIntegrationTests {
        @Test("tries every resolved address until one accepts")
        func triesEveryAddress() throws {
            let peer = try Peers.plain.get()
            let refused = try AddressResolver.resolve(host: "127.0.0.1", port: UInt16(try unusedPort()))
            let listening = try AddressResolver.resolve(host: "127.0.0.1", port: UInt16(peer.port))
            let fd = try TCPConnector.connect(
                to: refused + listening, deadline: Deadline.after(seconds: 5), wakeFD: -1, onWake: {})
            defer { Syscall.close(fd) }
            var address = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let named = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) == 0 }
            }
            #expect(named)
            #expect(Int(UInt16(bigEndian: address.sin_port)) == peer.port)
        }

        @Test("resolves literals and localhost, and reports an unknown host as a DNS failure")
        func resolvesLiterals() throws {
            #expect(try AddressResolver.resolve(host: "::1", port: 80).map(\.family) == [AF_INET6])
            #expect(try AddressResolver.resolve(host: "localhost", port: 80).isEmpty == false)
            #expect(throws: WebSocketError(.dnsFailure)) {
                try AddressResolver.resolve(host: "no-such-host.invalid", port: 80)
            }
        }

        @Test("times out when the server accepts TCP but never speaks TLS")
        func tlsHandshakeTimeout() throws {
            let peer = try RawPeer { _ in [] }  // waits for an HTTP head that a ClientHello never contains
            var options = try tlsOptions()
            options.connectTimeout = 0.3
            let (_, recorder) = connect("wss://127.0.0.1:\(peer.port)/", options: options)
            #expect(recorder.waitClosed()?.failureKind == .timeout)
        }

        @Test("passes the caller's headers on the upgrade request")
        func sendsCallerHeaders() throws {
            let peer = try RawPeer { key in RawPeer.switching(key: key) + [0x88, 0x02, 0x03, 0xE8] }
            let (_, recorder) = connect(
                "ws://127.0.0.1:\(peer.port)/cable?x=1", headers: ["Origin": "https://example.com", "X-Token": "t"])
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
            let head = peer.waitRequestHead()
            #expect(head.hasPrefix("GET /cable?x=1 HTTP/1.1\r\nHost: 127.0.0.1:\(peer.port)\r\n"))
            #expect(head.contains("\r\nOrigin: https://example.com\r\n"))
            #expect(head.contains("\r\nX-Token: t\r\n"))
            #expect(head.contains("\r\nSec-WebSocket-Version: 13\r\n"))
        }
    }
#endif
