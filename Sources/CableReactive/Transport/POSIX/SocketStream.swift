#if os(Linux) && canImport(CCableReactiveOpenSSL)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// A connected non-blocking socket, optionally with TLS, as the I/O loop sees it: plaintext in,
    /// plaintext out, a bounded-by-caller outbound queue, and `poll` on {socket, wake pipe}.
    ///
    /// Owned by one connection's I/O thread; not thread-safe.
    final class SocketStream {
        let fd: Int32
        private let wakeFD: Int32
        var tls: TLSSession?
        /// Bytes for the socket (ciphertext under TLS); `outboundStart` of them are already sent.
        private var outbound: [UInt8] = []
        private var outboundStart = 0
        private var readBuffer = SocketStream.readSpace()
        private var plainBuffer: [UInt8] = []
        /// The socket and the wake pipe, for `poll`: kept, so that a wait (one per message at an app's
        /// rates) allocates nothing.
        private var pollSet = [pollfd](repeating: pollfd(), count: 2)

        /// 64 KiB to read into, not zero-filled: filling it would make every connection's whole buffer
        /// resident at once, most of an idle client's memory, while unwritten pages of fresh memory cost
        /// nothing until a read reaches them. `UInt8` is trivial and only the bytes a read reports are ever
        /// looked at.
        private static func readSpace() -> [UInt8] {
            [UInt8](unsafeUninitializedCapacity: 64 * 1024) { _, count in count = 64 * 1024 }
        }

        /// What `wait` saw.
        struct Readiness {
            var readable = false
            var writable = false
            var woken = false
        }

        init(fd: Int32, wakeFD: Int32) {
            self.fd = fd
            self.wakeFD = wakeFD
        }

        deinit { Syscall.close(fd) }

        /// Bytes queued but not yet accepted by the kernel.
        var pendingOutput: Int { outbound.count - outboundStart }

        /// Queues plaintext, encrypting it first under TLS.
        func queue(_ bytes: [UInt8]) throws {
            guard !bytes.isEmpty else { return }
            if let tls {
                try bytes.withUnsafeBytes { buffer throws in try tls.write(buffer) }
                tls.drainCiphertext(into: &outbound)
            } else {
                outbound.append(contentsOf: bytes)
            }
        }

        /// Moves TLS output produced without a write (handshake records, alerts) to the queue.
        func collectTLSOutput() {
            tls?.drainCiphertext(into: &outbound)
        }

        /// Sends as much as the kernel takes. Returns `true` when the queue is empty.
        @discardableResult
        func flush() throws -> Bool {
            while outboundStart < outbound.count {
                let start = outboundStart
                let sent = try outbound.withUnsafeBytes { buffer throws in
                    try Syscall.send(fd, UnsafeRawBufferPointer(rebasing: buffer[start...]))
                }
                guard let sent, sent > 0 else {
                    // Drop the sent prefix once it is at least half the buffer (amortized O(1) per byte), or
                    // a peer that always lags a little would let it grow for ever while `pendingOutput` stays
                    // small.
                    if outboundStart >= 1 << 16 && outboundStart >= outbound.count / 2 {
                        outbound.removeSubrange(0..<outboundStart)
                        outboundStart = 0
                    }
                    return false
                }
                outboundStart += sent
            }
            outbound.removeAll(keepingCapacity: outbound.capacity <= 1 << 20)
            outboundStart = 0
            return true
        }

        /// Reads what the socket has (up to a few buffers, to stay fair to writes) and passes each
        /// plaintext chunk to `consume`. Returns `false` once the peer has closed the stream.
        ///
        /// A small read (under a quarter of the buffer) took all the kernel had, so the loop stops there instead
        /// of asking again to hear "would block": at an app's rates every message arrives alone, and that extra
        /// `recv` was one of the five system calls each cost. Bytes that arrive meanwhile make the next `poll`
        /// return at once. A big read means a stream is flowing, and the next `recv` usually finds what came
        /// while this one was handled; a `poll` before it cost 10–15% of the throughput at 64-byte messages.
        /// (Under TLS this holds too: the ciphertext goes to OpenSSL's memory buffer, and `drainTLS` takes out
        /// every whole record before the loop looks at the count.)
        func readAvailable(_ consume: (inout ArraySlice<UInt8>) -> Void) throws -> Bool {
            for _ in 0..<16 {
                let received = try readBuffer.withUnsafeMutableBytes { buffer throws in
                    try Syscall.recv(fd, buffer)
                }
                guard let received else { return true }  // would block
                if let tls {
                    readBuffer.withUnsafeBytes { buffer in
                        tls.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<received]))
                    }
                    if try !drainTLS(tls, consume) || received == 0 { return false }
                } else {
                    if received == 0 { return false }
                    var chunk = readBuffer[0..<received]
                    consume(&chunk)
                }
                if received < readBuffer.count / 4 { return true }  // drained: see above
            }
            return true
        }

        /// During the TLS handshake: feeds what the socket has to OpenSSL without decrypting.
        /// Returns `false` once the peer has closed the stream.
        func receiveCiphertext() throws -> Bool {
            guard let tls else { return true }
            while true {
                let received = try readBuffer.withUnsafeMutableBytes { buffer in try Syscall.recv(fd, buffer) }
                guard let received else { return true }
                if received == 0 { return false }
                readBuffer.withUnsafeBytes { buffer in
                    tls.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<received]))
                }
            }
        }

        /// Decrypts everything buffered in `tls`. Returns `false` when TLS reported the end.
        private func drainTLS(_ tls: TLSSession, _ consume: (inout ArraySlice<UInt8>) -> Void) throws
            -> Bool
        {
            if plainBuffer.isEmpty { plainBuffer = Self.readSpace() }
            defer { tls.drainCiphertext(into: &outbound) }
            while true {
                let result = try plainBuffer.withUnsafeMutableBytes { buffer throws in
                    try tls.read(into: buffer)
                }
                switch result {
                case .bytes(let count):
                    var chunk = plainBuffer[0..<count]
                    consume(&chunk)
                case .wantMore: return true
                case .closed: return false
                }
            }
        }

        /// Waits until the socket is readable (when `read`), writable (when `write`), the wake pipe
        /// is readable, or `deadline` passes (`nil`: no deadline).
        func wait(read: Bool, write: Bool, deadline: Deadline?) throws -> Readiness {
            var events: Int16 = 0
            if read { events |= Int16(POLLIN) }
            if write { events |= Int16(POLLOUT) }
            pollSet[0] = pollfd(fd: fd, events: events, revents: 0)
            pollSet[1] = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
            let timeout = deadline?.pollTimeout ?? -1
            _ = try Syscall.call32("poll") { poll(&pollSet, nfds_t(pollSet.count), timeout) }
            var readiness = Readiness()
            let failed = pollSet[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0
            readiness.readable = pollSet[0].revents & Int16(POLLIN) != 0 || (read && failed)
            readiness.writable = pollSet[0].revents & Int16(POLLOUT) != 0 || (write && failed)
            readiness.woken = pollSet[1].revents != 0
            return readiness
        }
    }
#endif
