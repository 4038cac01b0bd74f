#if os(Linux) && canImport(CCableReactiveOpenSSL)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// Non-blocking TCP connect with Happy Eyeballs (RFC 8305): the resolved addresses are interleaved by
    /// family, and the next one is started whenever the connection-attempt delay passes or an attempt fails,
    /// while earlier attempts go on. One `poll` watches every pending socket and the connection's wake pipe,
    /// all within one deadline; no thread per address.
    ///
    /// So on a dual-stack host whose IPv6 route silently drops packets, IPv4 connects one attempt delay
    /// (250 ms by default) later instead of after the whole connect timeout.
    package enum TCPConnector {
        /// The connection-attempt delay that RFC 8305 §5 recommends, in seconds.
        package static let defaultAttemptDelay = 0.25
        /// The range RFC 8305 §5 allows for the delay: at least 10 ms, at most 2 s.
        package static let attemptDelayRange = 0.01...2.0

        /// `delay` clamped to ``attemptDelayRange``; a non-finite value counts as the default.
        package static func clampedAttemptDelay(_ delay: Double) -> Double {
            guard delay.isFinite else { return defaultAttemptDelay }
            return min(max(delay, attemptDelayRange.lowerBound), attemptDelayRange.upperBound)
        }

        /// Returns a connected, non-blocking, close-on-exec socket with `TCP_NODELAY` set. Every other socket
        /// it opened is closed before it returns or throws.
        ///
        /// - Parameters:
        ///   - addresses: in the resolver's order; they are tried in ``interleave(_:preferring:)`` order.
        ///   - attemptDelay: seconds between starting one address and the next while the earlier attempts are
        ///     still pending; clamped to ``attemptDelayRange``.
        ///   - onWake: called when the wake pipe becomes readable; throws to abandon the attempt.
        /// - Throws: `.timeout` when the deadline passes, `.connectionRefused` with the last `errno` when every
        ///   address failed.
        package static func connect(
            to addresses: [SocketAddress],
            deadline: Deadline,
            attemptDelay: Double = defaultAttemptDelay,
            wakeFD: Int32,
            onWake: () throws -> Void
        ) throws -> Int32 {
            let ordered = interleave(addresses)
            let delay = clampedAttemptDelay(attemptDelay)
            var attempts = Attempts()
            defer { attempts.closeAll() }
            var next = 0
            var nextStart = Deadline.now
            var lastError: Int32 = ECONNREFUSED
            var pollSet: [pollfd] = []
            while true {
                // Start addresses: the first at once, then one per delay, or at once after a failure.
                while next < ordered.count && (attempts.fds.isEmpty || !(Deadline.now < nextStart)) {
                    let address = ordered[next]
                    next += 1
                    switch try start(address) {
                    case .connected(let fd):
                        return finish(fd)
                    case .pending(let fd):
                        attempts.fds.append(fd)
                        nextStart = .after(seconds: delay)
                    case .failed(let code):
                        lastError = code
                    }
                }
                if attempts.fds.isEmpty {  // and nothing left to start
                    throw WebSocketError(.connectionRefused, detail: Syscall.describe(lastError))
                }
                let wakeAt = next < ordered.count ? min(nextStart, deadline) : deadline
                guard !deadline.hasPassed else { throw WebSocketError(.timeout, detail: "TCP connect") }
                pollSet.removeAll(keepingCapacity: true)
                for fd in attempts.fds { pollSet.append(pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)) }
                pollSet.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0))
                let count = nfds_t(pollSet.count)
                _ = try Syscall.call32("poll") { poll(&pollSet, count, wakeAt.pollTimeout) }
                if let wake = pollSet.last, wake.revents != 0 { try onWake() }
                var failed = false
                for entry in pollSet.dropLast() where entry.revents != 0 {
                    let code = socketError(entry.fd)
                    if code == 0 {
                        attempts.remove(entry.fd)
                        return finish(entry.fd)
                    }
                    lastError = code
                    attempts.remove(entry.fd)
                    Syscall.close(entry.fd)
                    failed = true
                }
                if failed { nextStart = Deadline.now }  // RFC 8305 §5: a failure starts the next address now
            }
        }

        /// `addresses` reordered as RFC 8305 §4 asks: `preferring`'s family first (IPv6 by default), then
        /// alternating families while both last, each family keeping the resolver's order (RFC 6724's ranking
        /// by `getaddrinfo`). When no address has the preferred family the order is the resolver's.
        package static func interleave(_ addresses: [SocketAddress], preferring family: Int32 = AF_INET6)
            -> [SocketAddress]
        {
            let preferred = addresses.filter { $0.family == family }
            let others = addresses.filter { $0.family != family }
            var result: [SocketAddress] = []
            result.reserveCapacity(addresses.count)
            for index in 0..<max(preferred.count, others.count) {
                if index < preferred.count { result.append(preferred[index]) }
                if index < others.count { result.append(others[index]) }
            }
            return result
        }

        /// The sockets of the attempts in flight.
        private struct Attempts {
            var fds: [Int32] = []

            mutating func remove(_ fd: Int32) {
                fds.removeAll { $0 == fd }
            }

            /// Closes every losing or abandoned attempt.
            mutating func closeAll() {
                for fd in fds { Syscall.close(fd) }
                fds = []
            }
        }

        private enum Start {
            case connected(Int32)
            case pending(Int32)
            /// The address failed outright, with this `errno`.
            case failed(Int32)
        }

        /// Opens a socket for `address` and starts connecting it.
        private static func start(_ address: SocketAddress) throws(WebSocketError) -> Start {
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            let opened: Int32?
            do {
                opened = try Syscall.call32("socket") { socket(address.family, type, 0) }
            } catch {
                // A family this host lacks (IPv6 disabled) fails only this address; running out of
                // descriptors or memory fails the attempt as before.
                if let code = error.kind.errno, code == EAFNOSUPPORT || code == EPROTONOSUPPORT {
                    return .failed(code)
                }
                throw error
            }
            guard let fd = opened else { return .failed(EAGAIN) }
            var storage = address.storage
            do {
                let started = try withUnsafePointer(to: &storage) { pointer throws(WebSocketError) in
                    try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        socketAddress throws(WebSocketError) in
                        try Syscall.call32("connect") { Glibc.connect(fd, socketAddress, address.length) }
                    }
                }
                return started != nil ? .connected(fd) : .pending(fd)
            } catch {
                Syscall.close(fd)
                guard let code = error.kind.errno else { throw error }
                return .failed(code)  // refused, unreachable, ...: this address failed outright
            }
        }

        /// The winner: sets `TCP_NODELAY` (best effort) and hands the socket over.
        private static func finish(_ fd: Int32) -> Int32 {
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            return fd
        }

        /// The pending error of a socket (`SO_ERROR`), 0 when none.
        private static func socketError(_ fd: Int32) -> Int32 {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &value, &length) == 0 else { return errno }
            return value
        }
    }
#endif
