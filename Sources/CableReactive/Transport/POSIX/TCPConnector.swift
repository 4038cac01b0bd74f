#if os(Linux) && canImport(CCableReactiveOpenSSL)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// Non-blocking TCP connect that tries every resolved address in turn, within one deadline, and
    /// can be interrupted through the connection's wake pipe.
    package enum TCPConnector {
        /// Returns a connected, non-blocking, close-on-exec socket with `TCP_NODELAY` set.
        ///
        /// - Parameters:
        ///   - onWake: called when the wake pipe becomes readable; throws to abandon the attempt.
        /// - Throws: `.timeout` when the deadline passes, `.connectionRefused` when every address failed.
        package static func connect(
            to addresses: [SocketAddress],
            deadline: Deadline,
            wakeFD: Int32,
            onWake: () throws -> Void
        ) throws -> Int32 {
            var lastError: Int32 = ECONNREFUSED
            for address in addresses {
                let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
                guard let fd = try Syscall.call32("socket", { socket(address.family, type, 0) }) else { continue }
                do {
                    if try attempt(fd: fd, address: address, deadline: deadline, wakeFD: wakeFD, onWake: onWake) {
                        var one: Int32 = 1
                        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                        return fd
                    }
                    lastError = socketError(fd)
                    Syscall.close(fd)
                } catch {
                    Syscall.close(fd)
                    if let error = error as? WebSocketError, let code = error.kind.errno {
                        lastError = code  // this address failed outright; try the next
                        continue
                    }
                    throw error
                }
            }
            throw WebSocketError(.connectionRefused, detail: Syscall.describe(lastError))
        }

        /// Connects `fd`; `true` when connected, `false` when this address failed.
        private static func attempt(
            fd: Int32,
            address: SocketAddress,
            deadline: Deadline,
            wakeFD: Int32,
            onWake: () throws -> Void
        ) throws -> Bool {
            var storage = address.storage
            let started = try withUnsafePointer(to: &storage) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    try Syscall.call32("connect") { Glibc.connect(fd, socketAddress, address.length) }
                }
            }
            if started != nil { return true }
            while true {
                var fds = [
                    pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
                    pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
                ]
                let timeout = deadline.pollTimeout
                guard timeout > 0 else { throw WebSocketError(.timeout, detail: "TCP connect") }
                _ = try Syscall.call32("poll") { poll(&fds, nfds_t(fds.count), timeout) }
                if fds[1].revents != 0 { try onWake() }
                if fds[0].revents != 0 { return socketError(fd) == 0 }
            }
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
