#if os(Linux) && canImport(CCableReactiveOpenSSL)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    extension ConnectionWorker {
        /// Unsent bytes above which pongs are held (only the newest is kept) until the socket takes more: a peer
        /// that pings but does not read cannot grow the queue. Reading never stops, so pings, data and close
        /// frames keep arriving (and the client's stale watchdog keeps seeing them) however slow the uplink.
        /// What callers may queue is bounded by ``SocketTransport/Options-swift.struct/maxPendingSendBytes``.
        private static let pongHighWater = 64 << 10

        /// The open connection: marks it open, delivers `.opened`, then pumps frames until the
        /// session ends. Returns how it ended.
        func runSession(
            _ stream: SocketStream,
            handshake: HandshakeResult,
            leftover: ArraySlice<UInt8>
        ) throws -> WebSocketCloseInfo {
            let deflater = try handshake.deflate.map { parameters throws(FrameError) in
                try MessageDeflater(parameters: parameters)
            }
            var session = WebSocketSession(
                maxFrameSize: options.maxFrameSize,
                maxMessageSize: options.maxMessageSize,
                deflater: deflater,
                random: options.makeRandomNumberGenerator()
            )
            guard connection.markOpen() else {
                try checkAbandoned()
                throw WebSocketError(.io(errno: 0), detail: "closed before opening")
            }
            deliver(.opened(protocol: handshake.subprotocol))

            var output: [UInt8] = []
            var input = leftover
            receive(&input, into: &session, output: &output)
            var closeDeadline: Deadline?
            do {
                while session.outcome == nil {
                    let commands = connection.takeCommands(unsentBytes: stream.pendingOutput)
                    for message in commands.messages { session.send(text: message, output: &output) }
                    if commands.ping { session.ping(output: &output) }
                    if let close = commands.close, closeDeadline == nil {
                        session.close(code: close.code, reason: close.reason, output: &output)
                        closeDeadline = Deadline.after(seconds: options.closeTimeout)
                    }
                    try stream.queue(output)
                    output.removeAll(keepingCapacity: true)
                    try stream.flush()
                    session.holdsPongs = stream.pendingOutput >= Self.pongHighWater
                    if !session.holdsPongs {
                        session.releaseHeldPong(into: &output)
                        try stream.queue(output)
                        output.removeAll(keepingCapacity: true)
                    }
                    if let closeDeadline, closeDeadline.hasPassed {
                        session.connectionLost(WebSocketError(.timeout, detail: "no close frame from the peer"))
                        break
                    }
                    let readiness = try stream.wait(
                        read: true, write: stream.pendingOutput > 0, deadline: closeDeadline)
                    if readiness.woken { connection.drainWake() }
                    if readiness.writable { try stream.flush() }
                    if readiness.readable {
                        let open = try stream.readAvailable { chunk in
                            receive(&chunk, into: &session, output: &output)
                        }
                        if !open { session.connectionLost() }
                    }
                }
            } catch let error as WebSocketError {
                session.connectionLost(Self.classify(error))
            }
            finish(stream, output: output)
            return session.outcome ?? .failed(WebSocketError(.abnormalClosure))
        }

        /// Passes `input` to `session` and its text messages to the receiver (as bytes, then the end of the
        /// batch) or to the handler (as `.text` events).
        private func receive(
            _ input: inout ArraySlice<UInt8>, into session: inout WebSocketSession, output: inout [UInt8]
        ) {
            guard let receiver else {
                session.receive(&input, output: &output) { (text: String) in deliver(.text(text)) }
                return
            }
            session.receive(&input, output: &output) { (utf8: UnsafeBufferPointer<UInt8>) in receiver.text(utf8) }
            if session.takePong() { receiver.pong() }
            if receiver.batchEnded().shouldYield(since: &handedSinceYield) { sched_yield() }
        }

        /// Best effort: sends our last frames (a close reply) and a TLS close_notify, for at most a second.
        private func finish(_ stream: SocketStream, output: [UInt8]) {
            let deadline = Deadline.after(seconds: min(1, options.closeTimeout))
            do {
                try stream.queue(output)
                stream.tls?.shutdown()
                stream.collectTLSOutput()
                while try !stream.flush() && !deadline.hasPassed {
                    _ = try stream.wait(read: false, write: true, deadline: deadline)
                }
            } catch {
                // The peer is gone; nothing more to tell it.
            }
        }

        /// A reset or broken pipe is the peer vanishing without a close frame.
        private static func classify(_ error: WebSocketError) -> WebSocketError {
            if let code = error.kind.errno, code == ECONNRESET || code == EPIPE {
                return WebSocketError(.abnormalClosure, detail: error.detail)
            }
            return error
        }
    }
#endif
