#if os(Linux) && canImport(CCableReactiveOpenSSL)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif
    import Signals

    /// The caller's side of a ``SocketTransport`` connection: queues messages and close requests for
    /// the I/O thread and wakes it through a pipe.
    ///
    /// Every member is safe from any thread: all mutable state sits in one `Locked` value, and the
    /// lock is never held while user code or blocking I/O runs.
    final class SocketConnection: PingingConnection {
        /// Where the connection is, as far as senders are concerned.
        enum Phase {
            case connecting
            case open
            case closed
        }

        /// What the I/O thread picks up.
        struct Commands {
            var messages: [[UInt8]] = []
            var close: (code: WebSocketCloseCode, reason: String)?
            /// A ping frame is wanted (after the messages).
            var ping = false
        }

        struct Shared {
            var phase = Phase.connecting
            var messages: [[UInt8]] = []
            /// The text bytes in `messages`.
            var pendingBytes = 0
            /// Bytes the I/O thread holds that the socket has not accepted yet, as of its last report (frames,
            /// and TLS records under TLS), plus the text it has taken since.
            var unsentBytes = 0
            var closeRequest: (code: WebSocketCloseCode, reason: String)?
            /// ``sendPing()`` was called since the I/O thread last took the commands.
            var pingRequested = false
            /// The wake pipe; -1 once the I/O thread has closed it.
            var wakeRead: Int32 = -1
            var wakeWrite: Int32 = -1
            /// A byte is in the pipe and not yet drained: no need to write another.
            var wakeSignalled = false
        }

        private let shared: Locked<Shared>
        private let maxPendingBytes: Int
        /// `errno` when the wake pipe could not be created; the I/O thread then fails at once.
        let setupError: Int32

        init(maxPendingBytes: Int) {
            self.maxPendingBytes = maxPendingBytes
            var fds: [Int32] = [-1, -1]
            // A socket pair rather than pipe(): it is created non-blocking and close-on-exec atomically
            // (pipe2 is not in the Glibc module), so a concurrent fork/exec cannot inherit it.
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            let status = socketpair(AF_UNIX, type, 0, &fds)
            setupError = status == 0 ? 0 : errno
            var state = Shared()
            if status == 0 {
                state.wakeRead = fds[0]
                state.wakeWrite = fds[1]
            }
            shared = Locked(state)
        }

        /// The read end of the wake pipe. Only the I/O thread reads it, and only it closes it.
        var wakeReadFD: Int32 { shared.withLock { $0.wakeRead } }

        /// Queues `text` unless the connection is not open, a close was requested, or the bytes waiting to be
        /// sent (queued text plus what the socket has not accepted yet) would pass `maxPendingBytes`.
        func send(text: String) -> Bool {
            let bytes = Array(text.utf8)
            return shared.withLock { state in
                guard state.phase == .open, state.closeRequest == nil,
                    bytes.count <= maxPendingBytes - state.pendingBytes - state.unsentBytes
                else { return false }
                state.messages.append(bytes)
                state.pendingBytes += bytes.count
                Self.wake(&state)
                return true
            }
        }

        /// Queues a ping frame unless the connection is not open or a close was requested; the peer's pong is
        /// reported to the receiver. Pings asked for before the I/O thread takes them are sent as one.
        func sendPing() -> Bool {
            shared.withLock { state in
                guard state.phase == .open, state.closeRequest == nil else { return false }
                state.pingRequested = true
                Self.wake(&state)
                return true
            }
        }

        func close(code: WebSocketCloseCode, reason: String) {
            shared.withLock { state in
                guard state.phase != .closed, state.closeRequest == nil else { return }
                state.closeRequest = (code, reason)
                Self.wake(&state)
            }
        }

        // MARK: I/O thread side

        /// Whether `close` was called.
        var closeRequested: Bool { shared.withLock { $0.closeRequest != nil } }

        /// The close request, if any: the caller's code and reason.
        var closeRequest: (code: WebSocketCloseCode, reason: String)? { shared.withLock { $0.closeRequest } }

        /// Marks the connection open unless a close was requested first. Returns whether it opened.
        func markOpen() -> Bool {
            shared.withLock { state in
                guard state.closeRequest == nil else { return false }
                state.phase = .open
                return true
            }
        }

        /// Empties the wake socket and clears the "signalled" flag, atomically under the lock:
        /// senders write only under the same lock, so a byte is never drained after the flag was
        /// cleared for it (which would leave the flag set with an empty socket, and no one to wake
        /// the loop again). Call before ``takeCommands(unsentBytes:)``.
        func drainWake() {
            shared.withLock { state in
                var scratch = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
                while withUnsafeMutableBytes(of: &scratch, { read(state.wakeRead, $0.baseAddress, $0.count) }) > 0 {}
                state.wakeSignalled = false
            }
        }

        /// Takes the queued messages and the close request, and records that `unsentBytes` bytes are still
        /// waiting for the socket (the stream's queue after the I/O thread's last flush). The taken text counts
        /// as unsent until the next report, so senders are never told there is more room than there is.
        func takeCommands(unsentBytes: Int) -> Commands {
            shared.withLock { state in
                var commands = Commands()
                commands.messages = state.messages
                commands.close = state.closeRequest
                commands.ping = state.pingRequested
                state.pingRequested = false
                state.messages = []
                state.unsentBytes = unsentBytes + state.pendingBytes
                state.pendingBytes = 0
                return commands
            }
        }

        /// Refuses further sends, closes the wake pipe and drops queued messages. Called once by the
        /// I/O thread, before it delivers `.closed`.
        func markClosed() {
            shared.withLock { state in
                state.phase = .closed
                state.messages = []
                state.pendingBytes = 0
                state.unsentBytes = 0
                Syscall.close(state.wakeRead)
                Syscall.close(state.wakeWrite)
                state.wakeRead = -1
                state.wakeWrite = -1
            }
        }

        /// Wakes the I/O thread (unless a wake-up is already pending or the pipe is closed); a name lookup's
        /// helper thread calls it when it has answered (``PendingLookup``).
        func wake() {
            shared.withLock { Self.wake(&$0) }
        }

        private static func wake(_ state: inout Shared) {
            guard !state.wakeSignalled, state.wakeWrite >= 0 else { return }
            var byte: UInt8 = 1
            // The pipe is non-blocking; if it is full, the I/O thread is awake anyway.
            _ = write(state.wakeWrite, &byte, 1)
            state.wakeSignalled = true
        }
    }
#endif
