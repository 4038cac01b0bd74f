#if os(Linux) && canImport(CCableReactiveOpenSSL)
    import CCableReactiveOpenSSL
    #if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
        import FoundationEssentials
    #else
        import Foundation
    #endif
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// The I/O thread of one ``SocketTransport`` connection: resolves, connects, runs TLS and the
    /// upgrade, then the frame loop, and delivers every event to the handler on this thread.
    ///
    /// Created and used only on its own thread, so none of its state needs a lock; it talks to callers
    /// through ``SocketConnection``.
    final class ConnectionWorker {
        /// The caller called `close` before the connection opened.
        struct Abandoned: Error {
            var code: WebSocketCloseCode
            var reason: String
        }

        let connection: SocketConnection
        let request: CableRequest
        let protocols: [String]
        let options: SocketTransport.Options
        private var handler: (@Sendable (WebSocketEvent) -> Void)?
        /// Takes text messages as bytes instead of `.text` events; see ``NativeTransport``.
        let receiver: TextReceiver?
        /// Messages the receiver reported handed over since this thread last yielded (``ReadDelivery``).
        var handedSinceYield = 0
        private var random: any RandomNumberGenerator
        private var stream: SocketStream?

        init(
            connection: SocketConnection,
            request: CableRequest,
            protocols: [String],
            options: SocketTransport.Options,
            receiver: TextReceiver?,
            handler: @escaping @Sendable (WebSocketEvent) -> Void
        ) {
            self.connection = connection
            self.request = request
            self.protocols = protocols
            self.options = options
            self.handler = handler
            self.receiver = receiver
            random = options.makeRandomNumberGenerator()
        }

        /// Runs the connection to its end, then delivers `.closed` and releases the handler.
        func run() {
            let outcome: WebSocketCloseInfo
            do {
                outcome = try establishAndRun()
            } catch let abandoned as Abandoned {
                outcome = .closed(code: abandoned.code, reason: abandoned.reason)
            } catch let error as WebSocketError {
                outcome = .failed(error)
            } catch {
                outcome = .failed(WebSocketError(.io(errno: 0), detail: "\(type(of: error))"))
            }
            stream = nil  // closes the socket and frees the TLS session
            connection.markClosed()
            deliver(.closed(outcome))
            handler = nil
            // This thread's malloc arena keeps the pages its connection freed (read buffers, TLS state, the
            // messages of a burst) after the thread ends, and the next connection's thread may be given another
            // arena: a client that reconnects for days would hold the high-water mark of every arena. Give the
            // free pages back to the kernel now; once per connection, it costs well under a millisecond.
            cr_malloc_trim()
        }

        func deliver(_ event: WebSocketEvent) {
            handler?(event)
        }

        private func establishAndRun() throws -> WebSocketCloseInfo {
            guard connection.setupError == 0 else {
                throw WebSocketError(.io(errno: connection.setupError), detail: "wake socket pair")
            }
            let endpoint = try WebSocketEndpoint(url: request.url)
            let deadline = Deadline.after(seconds: options.connectTimeout)
            let route = try options.proxy.decision(for: endpoint)
            receiver?.routed(route.route)  // the client logs it; the transport has no logger
            let proxy = route.proxy
            try checkAbandoned()
            let stream = try open(
                host: proxy?.host ?? endpoint.host, port: proxy?.port ?? endpoint.port, deadline: deadline)
            // What the server sent through the tunnel with the proxy's answer (nothing, for a server that
            // waits for the client as TLS and WebSocket servers do): the start of the next stage's input.
            var early: ArraySlice<UInt8> = []
            if let proxy { early = try openTunnel(stream, through: proxy, to: endpoint, deadline: deadline) }
            if endpoint.isSecure {
                try checkAbandoned()  // an attempt closed while connecting does not start TLS
                let tls = try TLSSession(
                    host: endpoint.host, isIPLiteral: endpoint.isIPLiteral, caFile: options.tlsCAFilePath,
                    pins: options.tlsPins)
                early.withUnsafeBytes { tls.feed($0) }
                early = []
                stream.tls = tls
                try handshakeTLS(stream, deadline: deadline)
            }
            let (result, leftover) = try upgrade(stream, endpoint: endpoint, early: early, deadline: deadline)
            return try runSession(stream, handshake: result, leftover: leftover)
        }

        /// Resolves `host` and connects to it: the server, or the proxy in front of it.
        private func open(host: String, port: UInt16, deadline: Deadline) throws -> SocketStream {
            try checkAbandoned()
            let addresses = try resolve(host: host, port: port, deadline: deadline)
            try checkAbandoned()
            if deadline.hasPassed { throw WebSocketError(.timeout, detail: "name resolution") }
            let wakeFD = connection.wakeReadFD
            let fd = try TCPConnector.connect(
                to: addresses, deadline: deadline, attemptDelay: options.connectionAttemptDelay, wakeFD: wakeFD
            ) {
                connection.drainWake()
                try checkAbandoned()
            }
            let stream = SocketStream(fd: fd, wakeFD: wakeFD)
            self.stream = stream
            return stream
        }

        /// Asks the proxy for a tunnel to `endpoint` and waits for its answer. Returns the bytes that came
        /// after the answer's head, which are the server's.
        ///
        /// - Throws: `.proxyRejected(status:)` when the proxy refuses, `.timeout` ("proxy CONNECT") at the
        ///   deadline, `.invalidHandshake` for an answer that is not HTTP or a proxy that hangs up.
        private func openTunnel(
            _ stream: SocketStream,
            through proxy: SocketTransport.HTTPProxy,
            to endpoint: WebSocketEndpoint,
            deadline: Deadline
        ) throws -> ArraySlice<UInt8> {
            try stream.queue(ProxyTunnel.request(to: endpoint, through: proxy))
            try stream.flush()
            var reader = ProxyTunnel.ResponseReader()
            var tunnel: ArraySlice<UInt8>?
            var failure: WebSocketError?
            while tunnel == nil {
                try waitDuringSetup(stream, read: true, deadline: deadline, step: "proxy CONNECT")
                let open = try stream.readAvailable { chunk in
                    defer { chunk = chunk[chunk.endIndex...] }
                    guard failure == nil else { return }
                    if let early = tunnel {
                        tunnel = early + chunk
                        return
                    }
                    do throws(WebSocketError) {
                        tunnel = try reader.append(chunk)
                    } catch {
                        failure = error
                    }
                }
                if let failure { throw failure }
                if tunnel == nil && !open {
                    throw WebSocketError(
                        .invalidHandshake, detail: "proxy closed the connection before answering CONNECT")
                }
            }
            return tunnel ?? []
        }

        /// The addresses of `host`: an IP literal at once, a name through ``SocketTransport/Options-swift.struct/resolver``
        /// on a helper thread (``PendingLookup``) while this thread waits on the wake pipe, so that neither the
        /// deadline nor `close` waits for a resolver that does not answer.
        ///
        /// - Throws: `.timeout` ("name resolution") at the deadline, ``Abandoned`` on `close`, or the
        ///   resolver's error.
        private func resolve(host: String, port: UInt16, deadline: Deadline) throws -> [SocketAddress] {
            if let literal = AddressResolver.literal(host: host, port: port) { return literal }
            let (lookup, started) = PendingLookup.start(
                host: host, port: port, resolver: options.resolver, connection: connection)
            guard started == 0 else {
                throw WebSocketError(.io(errno: started), detail: "pthread_create failed (name resolution)")
            }
            var wake = pollfd(fd: connection.wakeReadFD, events: Int16(POLLIN), revents: 0)
            while true {
                try checkAbandoned()
                if let result = lookup.result { return try result.get() }
                let timeout = deadline.pollTimeout
                guard timeout > 0 else { throw WebSocketError(.timeout, detail: "name resolution") }
                wake.revents = 0
                _ = try Syscall.call32("poll") { poll(&wake, 1, timeout) }
                if wake.revents != 0 { connection.drainWake() }  // before looking in the box again
            }
        }

        /// Throws ``Abandoned`` when the caller has asked to close.
        func checkAbandoned() throws {
            if let request = connection.closeRequest {
                throw Abandoned(code: request.code, reason: request.reason)
            }
        }

        /// Waits for the socket (or a wake-up, or the deadline) during connection setup.
        private func waitDuringSetup(_ stream: SocketStream, read: Bool, deadline: Deadline, step: String) throws {
            guard !deadline.hasPassed else { throw WebSocketError(.timeout, detail: step) }
            let readiness = try stream.wait(read: read, write: stream.pendingOutput > 0, deadline: deadline)
            if readiness.woken {
                connection.drainWake()
                try checkAbandoned()
            }
            if readiness.writable { try stream.flush() }
        }

        private func handshakeTLS(_ stream: SocketStream, deadline: Deadline) throws {
            guard let tls = stream.tls else { return }
            while true {
                let done = try tls.handshake()
                stream.collectTLSOutput()
                try stream.flush()
                if done { return }
                try waitDuringSetup(stream, read: true, deadline: deadline, step: "TLS handshake")
                guard try stream.receiveCiphertext() else {
                    throw WebSocketError(.tls, detail: "peer closed during the TLS handshake")
                }
            }
        }

        private func upgrade(
            _ stream: SocketStream,
            endpoint: WebSocketEndpoint,
            early: ArraySlice<UInt8>,
            deadline: Deadline
        ) throws -> (HandshakeResult, ArraySlice<UInt8>) {
            var nonce: [UInt8] = []
            for _ in 0..<2 {
                let word = random.next()
                for shift in stride(from: 0, to: 64, by: 8) { nonce.append(UInt8(truncatingIfNeeded: word >> shift)) }
            }
            let handshake = HandshakeRequest(
                endpoint: endpoint,
                protocols: protocols,
                headers: request.headers,
                offerDeflate: options.enablePerMessageDeflate,
                nonce: nonce
            )
            try stream.queue(handshake.bytes)
            try stream.flush()
            var reader = HandshakeResponseReader()
            var response = early.isEmpty ? nil : try reader.append(early)
            var failure: WebSocketError?
            while response == nil {
                try waitDuringSetup(stream, read: true, deadline: deadline, step: "HTTP upgrade")
                let open = try stream.readAvailable { chunk in
                    guard failure == nil else { return }
                    if let head = response {
                        // Frames that arrived in a later read of the same batch belong after the rest.
                        response = (head.head, ArraySlice(head.rest + chunk))
                        chunk = chunk[chunk.endIndex...]
                        return
                    }
                    do throws(WebSocketError) {
                        response = try reader.append(chunk)
                    } catch {
                        failure = error
                    }
                    chunk = chunk[chunk.endIndex...]
                }
                if let failure { throw failure }
                if response == nil && !open {
                    throw WebSocketError(.invalidHandshake, detail: "connection closed during the upgrade")
                }
            }
            guard let response else { throw WebSocketError(.invalidHandshake) }
            let result = try HandshakeValidator.validate(
                head: response.head,
                expectedAccept: AcceptKey.compute(forKey: handshake.key),
                offeredProtocols: handshake.offeredProtocols,
                offeredDeflate: options.enablePerMessageDeflate
            )
            return (result, response.rest)
        }
    }
#endif
