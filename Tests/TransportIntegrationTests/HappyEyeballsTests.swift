#if os(Linux)
    import CableReactive
    import Dispatch
    import Foundation
    import Testing

    /// A loopback address whose TCP connects hang without an answer, as over an IPv6 route that drops packets:
    /// a listener with backlog 0 whose accept queue is filled first, so that the kernel drops every further
    /// SYN. On ::1 when the machine has IPv6 loopback, else on 127.0.0.2. Needs no privileges.
    final class BlackHole {
        let address: SocketAddress
        let port: UInt16
        let isIPv6: Bool
        private var fds: [Int32] = []

        init() throws {
            isIPv6 = ((try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8)) ?? "")
                .contains("00000000000000000000000000000001")
            let family = isIPv6 ? AF_INET6 : AF_INET
            let listener = socket(family, Int32(SOCK_STREAM.rawValue), 0)
            fds.append(listener)
            guard Self.withAddress(ipv6: isIPv6, port: 0, { bind(listener, $0, $1) == 0 }), listen(listener, 0) == 0
            else { throw PeerError("black hole: bind or listen failed, errno \(errno)") }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &storage) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) == 0 }
            }
            guard named else { throw PeerError("getsockname failed") }
            // sin_port and sin6_port are both bytes 2-3, in network order.
            let port = withUnsafeBytes(of: &storage) { UInt16($0[2]) << 8 | UInt16($0[3]) }
            self.port = port
            address = try #require(AddressResolver.literal(host: isIPv6 ? "::1" : "127.0.0.2", port: port)?.first)
            // Fill the accept queue: connect until a connect stays pending.
            var full = false
            for _ in 0..<8 where !full {
                let client = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
                fds.append(client)
                _ = Self.withAddress(ipv6: isIPv6, port: port) { connect(client, $0, $1) }
                var entry = pollfd(fd: client, events: Int16(POLLOUT), revents: 0)
                full = poll(&entry, 1, 300) == 0
            }
            guard full else { throw PeerError("black hole: the accept queue never filled") }
        }

        deinit { for fd in fds { close(fd) } }

        /// Connects still waiting for an answer from the black hole (`SYN_SENT`), from /proc/net.
        var pendingConnects: Int {
            let table =
                (try? String(contentsOfFile: isIPv6 ? "/proc/net/tcp6" : "/proc/net/tcp", encoding: .utf8)) ?? ""
            let remote = String(format: ":%04X", port)
            return table.split(separator: "\n").filter { line in
                let fields = line.split(separator: " ")
                return fields.count > 3 && fields[2].hasSuffix(remote) && fields[3] == "02"
            }.count
        }

        private static func withAddress<T>(ipv6: Bool, port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T)
            -> T
        {
            if ipv6 {
                var address = sockaddr_in6()
                address.sin6_family = sa_family_t(AF_INET6)
                address.sin6_addr = in6addr_loopback
                address.sin6_port = port.bigEndian
                return withUnsafePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                    }
                }
            }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0002).bigEndian
            address.sin_port = port.bigEndian
            return withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// The port `fd` is connected to.
    private func peerPort(_ fd: Int32) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    extension TransportIntegrationTests {
        @Test("Happy Eyeballs: a black-holed first address loses to a working IPv4 one an attempt delay later")
        func happyEyeballsBeatsBlackHole() throws {
            let peer = try Peers.plain.get()
            let hole = try BlackHole()
            let working = try #require(AddressResolver.literal(host: "127.0.0.1", port: UInt16(peer.port)))
            let pendingBefore = hole.pendingConnects
            let fdsBefore = Self.count("fd")
            let started = Date()
            let fd = try TCPConnector.connect(
                to: [hole.address] + working, deadline: Deadline.after(seconds: 10), wakeFD: -1, onWake: {})
            let elapsed = Date().timeIntervalSince(started)
            #expect(peerPort(fd) == peer.port)
            #expect(hole.pendingConnects == pendingBefore, "the black-holed attempt was closed")
            close(fd)
            #expect(elapsed >= 0.2 && elapsed < 1, "connected after \(elapsed) s")
            let (fdsAfter, _) = Self.settle(fds: fdsBefore, threads: Int.max)
            #expect(fdsAfter <= fdsBefore, "descriptors: \(fdsBefore) before, \(fdsAfter) after")
            print(
                "happy eyeballs: connected past the black hole (\(hole.isIPv6 ? "::1" : "127.0.0.2")) in \(elapsed) s")
        }

        @Test("Happy Eyeballs: a whole WebSocket handshake through SocketTransport past a black hole")
        func happyEyeballsThroughTransport() throws {
            let peer = try Peers.plain.get()
            let hole = try BlackHole()
            let working = try #require(AddressResolver.literal(host: "127.0.0.1", port: UInt16(peer.port)))
            var options = SocketTransport.Options()
            let addresses = [hole.address] + working
            options.resolver = { _, _ in addresses }
            let pendingBefore = hole.pendingConnects
            let started = Date()
            let (connection, recorder) = connect("ws://dual-stack.test:\(peer.port)/echo", options: options)
            #expect(recorder.waitOpened().first == .opened(protocol: nil))
            let elapsed = Date().timeIntervalSince(started)
            #expect(elapsed < 1, "opened after \(elapsed) s")
            #expect(hole.pendingConnects == pendingBefore, "the black-holed attempt was closed")
            #expect(connection.send(text: "through"))
            #expect(recorder.waitTexts(1) == ["through"])
            connection.close(code: .normalClosure, reason: "")
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
            print("happy eyeballs: WebSocket opened past the black hole in \(elapsed) s")
        }

        @Test("Happy Eyeballs: an address that fails outright starts the next at once")
        func refusedStartsNextAtOnce() throws {
            let peer = try Peers.plain.get()
            let refused = try #require(AddressResolver.literal(host: "::1", port: UInt16(try unusedPort())))
            let working = try #require(AddressResolver.literal(host: "127.0.0.1", port: UInt16(peer.port)))
            let started = Date()
            let fd = try TCPConnector.connect(
                to: refused + working, deadline: Deadline.after(seconds: 10), attemptDelay: 2, wakeFD: -1,
                onWake: {})
            defer { close(fd) }
            #expect(peerPort(fd) == peer.port)
            #expect(Date().timeIntervalSince(started) < 1)
        }

        @Test("Happy Eyeballs: every address refused is .connectionRefused")
        func everyAddressRefused() throws {
            let port = UInt16(try unusedPort())
            let addresses =
                try #require(AddressResolver.literal(host: "::1", port: port))
                + (try #require(AddressResolver.literal(host: "127.0.0.1", port: port)))
            #expect(throws: WebSocketError(.connectionRefused)) {
                try TCPConnector.connect(to: addresses, deadline: Deadline.after(seconds: 10), wakeFD: -1, onWake: {})
            }
        }

        @Test("Happy Eyeballs: only black holes time out at the deadline, and close their sockets")
        func blackHoleTimesOut() throws {
            let hole = try BlackHole()
            let pendingBefore = hole.pendingConnects
            let started = Date()
            #expect(throws: WebSocketError(.timeout)) {
                try TCPConnector.connect(
                    to: [hole.address, hole.address], deadline: Deadline.after(seconds: 0.4), wakeFD: -1, onWake: {})
            }
            let elapsed = Date().timeIntervalSince(started)
            #expect(elapsed >= 0.35 && elapsed < 1.5, "timed out after \(elapsed) s")
            #expect(hole.pendingConnects == pendingBefore)
        }

        @Test("a resolver that never answers fails the attempt at its deadline as a name resolution timeout")
        func hungResolverTimesOut() throws {
            let release = DispatchSemaphore(value: 0)
            defer { release.signal() }
            var options = SocketTransport.Options()
            options.connectTimeout = 0.3
            options.resolver = { _, _ throws(WebSocketError) in
                release.wait()
                throw WebSocketError(.dnsFailure, detail: "released")
            }
            let started = Date()
            let (_, recorder) = connect("ws://hung.test:1/", options: options)
            let closed = recorder.waitClosed()
            let elapsed = Date().timeIntervalSince(started)
            guard case .failed(let error) = closed else {
                Issue.record("expected a failure, got \(String(describing: closed))")
                return
            }
            #expect(error.kind == .timeout)
            #expect(error.detail == "name resolution")
            #expect(elapsed >= 0.25 && elapsed < 1, "failed after \(elapsed) s")
        }

        @Test("close() during a hung name resolution ends the attempt at once; the helper leaks nothing")
        func closeDuringHungResolution() throws {
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let (fds, threads) = Self.settle(fds: 0, threads: 0, timeout: 0)
            var options = SocketTransport.Options()
            options.resolver = { _, _ throws(WebSocketError) in
                entered.signal()
                release.wait()
                throw WebSocketError(.dnsFailure, detail: "released")
            }
            let (connection, recorder) = connect("ws://hung.test:1/", options: options)
            #expect(entered.wait(timeout: .now() + 10) == .success)
            let started = Date()
            connection.close(code: .goingAway, reason: "bye")
            #expect(recorder.waitClosed() == .closed(code: .goingAway, reason: "bye"))
            #expect(Date().timeIntervalSince(started) < 0.5)
            release.signal()  // the abandoned lookup returns; its thread must exit and hold nothing
            let (fdsAfter, threadsAfter) = Self.settle(fds: fds, threads: threads)
            #expect(fdsAfter <= fds, "descriptors: \(fds) before, \(fdsAfter) after")
            #expect(threadsAfter <= threads, "threads: \(threads) before, \(threadsAfter) after")
        }
    }
#endif
