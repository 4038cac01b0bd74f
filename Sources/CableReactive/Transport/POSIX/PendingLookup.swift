#if os(Linux) && canImport(CCableReactiveOpenSSL)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif
    import Signals

    /// One name resolution that a connection can abandon: `getaddrinfo` blocks for as long as the system
    /// resolver takes and cannot be interrupted, so it runs on a detached helper thread, never on the I/O
    /// thread.
    ///
    /// The helper stores its answer in this box (under its lock) and then wakes the connection through
    /// ``SocketConnection/wake()``, which writes to the wake pipe only under the connection's lock and only
    /// while the pipe is open, so a helper that answers after the connection ended writes to no descriptor
    /// at all. Meanwhile the I/O thread waits in `poll` on the wake pipe until the deadline: it drains the
    /// pipe, then looks in the box (so an answer stored before a drained wake-up is always seen), and gives
    /// up with `.timeout` at the deadline or ``ConnectionWorker/Abandoned`` on `close`. A helper left behind
    /// owns no descriptor and holds only this box and the connection object; both are released when its
    /// resolver returns and the thread exits.
    final class PendingLookup: Sendable {
        private let answer = Locked<Result<[SocketAddress], WebSocketError>?>(nil)

        /// The resolver's answer, once it has one.
        var result: Result<[SocketAddress], WebSocketError>? { answer.withLock { $0 } }

        /// Starts `resolver` for `host` and `port` on a new detached thread that wakes `connection` when it
        /// answers.
        ///
        /// - Returns: 0, or the `errno` of `pthread_create`; then no lookup runs.
        static func start(
            host: String,
            port: UInt16,
            resolver: @escaping @Sendable (String, UInt16) throws(WebSocketError) -> [SocketAddress],
            connection: SocketConnection
        ) -> (PendingLookup, Int32) {
            let lookup = PendingLookup()
            let started = IOThread.start {
                let result = Result { () throws(WebSocketError) in try resolver(host, port) }
                lookup.answer.withLock { $0 = result }
                connection.wake()
            }
            return (lookup, started)
        }
    }
#endif
