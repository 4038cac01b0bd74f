#if os(Linux) && canImport(CCableReactiveOpenSSL)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// How the POSIX transport makes its socket calls (`socket`, `connect`, `poll`, `send`, `recv`) and
    /// closes descriptors: retries `EINTR`, reports `EAGAIN` as "would block" (`nil`), and turns any other
    /// failure into `WebSocketError(.io(errno:))`, so that callers handle every failure as one typed error.
    /// `close` is deliberately not retried (Linux releases the descriptor even when it fails).
    ///
    /// Calls whose failure is reported another way, or changes nothing, call POSIX directly: `getaddrinfo`
    /// (its own `EAI_` codes, in AddressResolver), `getsockopt(SO_ERROR)` and the best-effort `TCP_NODELAY`
    /// in TCPConnector, the wake socket pair in SocketConnection (`socketpair`, whose `errno` becomes the
    /// connection's setup error, and a non-blocking `read` and `write` that may find it empty or full),
    /// pthreads in IOThread, `clock_gettime` in Deadline and the I/O thread's `sched_yield` after a read
    /// (ConnectionWorker+Session). Outside the transport, the scheduler's clock, the logger's standard-error
    /// write, the foreign-transport wrapper's `pthread_self` and Signals' mutex call POSIX as well.
    package enum Syscall {
        /// Runs `body` until it does not fail with `EINTR`.
        ///
        /// - Returns: the non-negative result, or `nil` for `EAGAIN`/`EWOULDBLOCK`/`EINPROGRESS`.
        @inline(__always)
        static func call(_ name: StaticString, _ body: () -> Int) throws(WebSocketError) -> Int? {
            while true {
                let result = body()
                if result >= 0 { return result }
                let error = errno
                switch error {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK, EINPROGRESS: return nil
                default: throw WebSocketError(.io(errno: error), detail: "\(name) failed: \(describe(error))")
                }
            }
        }

        /// Runs an `Int32`-returning call; see ``call(_:_:)``.
        @inline(__always)
        static func call32(_ name: StaticString, _ body: () -> Int32) throws(WebSocketError) -> Int32? {
            try call(name) { Int(body()) }.map { Int32(truncatingIfNeeded: $0) }
        }

        /// Closes `fd` once, ignoring the result (retrying could close a descriptor another thread
        /// just received).
        package static func close(_ fd: Int32) {
            guard fd >= 0 else { return }
            _ = Glibc.close(fd)
        }

        /// `send` with `MSG_NOSIGNAL`, so a peer that reset the connection yields `EPIPE` instead of
        /// killing the process with SIGPIPE.
        static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(WebSocketError) -> Int? {
            try call("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
        }

        /// `recv` into `buffer`; `0` means the peer closed its side.
        static func recv(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws(WebSocketError) -> Int? {
            try call("recv") { Glibc.recv(fd, buffer.baseAddress, buffer.count, 0) }
        }

        /// The `strerror` text for `code`.
        static func describe(_ code: Int32) -> String {
            guard let text = strerror(code) else { return "errno \(code)" }
            return String(cString: text) + " (\(code))"
        }
    }
#endif
