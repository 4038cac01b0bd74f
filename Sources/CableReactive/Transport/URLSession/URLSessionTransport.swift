// Apple platforms only. On Linux the library never links Foundation's networking (libcurl and its
// libraries); `Scripts/check-foundation` type-checks this file there with `-DCABLE_FULL_FOUNDATION`.
#if canImport(Darwin) || CABLE_FULL_FOUNDATION
    import Foundation
    import Signals

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    #if canImport(Security)
        import Security
    #endif

    /// WebSockets through `URLSessionWebSocketTask`: the default transport on Apple platforms.
    ///
    /// Each connection has its own `URLSession`, made from a copy of ``init(configuration:tlsCAFilePath:tlsPins:maximumMessageSize:maxPendingSendBytes:)``'s
    /// configuration, whose delegate queue is serial: the handler receives events one at a time, in order, on
    /// that queue's thread (never the main thread). Subprotocols are offered in the `Sec-WebSocket-Protocol`
    /// request header (``CableRequest/anyCableToken``'s `anycable-token.<token>` first, when the client has one);
    /// the one reported as opened is the delegate's, or else the response's header, and only ever one that was
    /// offered, never the token (`URLSessionSubprotocol`).
    ///
    /// **Isolation from the app's other requests.** The default configuration is `.ephemeral`: no cookies,
    /// caches or credentials are shared with `URLSession.shared` or kept after the connection. Pass your own
    /// configuration to share them (for example `.default`, for cookies your app's login set). A session of
    /// your own cannot be passed: before iOS 15 a WebSocket task reports its events to its session's delegate
    /// only, and that delegate must be this transport's.
    ///
    /// **No background configuration.** A background session (`URLSessionConfiguration.background(withIdentifier:)`)
    /// does not support WebSocket tasks (Apple DTS's table of task types per session type, forums thread 746759), so
    /// such a configuration is refused when the transport is made (a precondition: it is a programming error, found on
    /// the first run). In the background, the system suspends the app, and the connection with it, unless a
    /// background mode keeps the app running.
    ///
    /// **One set of timers.** The client's welcome deadline and stale watchdog decide when an attempt or a
    /// connection is dead, so the copy's request and resource timeouts are set beyond any session's life, and
    /// `waitsForConnectivity` is off: an attempt made offline fails at once and the client's backoff retries it.
    ///
    /// **The same failures as on Linux.** A refused certificate, App Transport Security's refusal of `ws://`
    /// and an unusable URL are permanent (the client stops); offline, lost, refused and timed-out connections
    /// are retried; an upgrade answered with a status other than 101 is `upgradeRejected(status:)`, read from
    /// the task's HTTP response, so 401 and 403 reach `onUnauthorized`.
    ///
    /// **Lifetime.** The session keeps the connection alive until `.closed` has been delivered; then the
    /// session is invalidated and the handler released.
    ///
    /// ```swift
    /// var transport = URLSessionTransport()
    /// transport.tlsPins = [try CertificatePin("sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")]
    /// let client = try ActionCableClient(url: url, transport: transport)
    /// ```
    public struct URLSessionTransport: WebSocketTransport {
        /// The largest message accepted (`URLSessionWebSocketTask.maximumMessageSize`). Default 1 MiB.
        public var maximumMessageSize: Int
        /// The most bytes of text that may wait to be sent (handed to `send` and not yet reported written by the
        /// task). A `send` that would pass it returns `false`; once the task has written more, `send` succeeds
        /// again. Default 8 MiB, as the Linux transport's.
        public var maxPendingSendBytes: Int
        /// A PEM file of extra trusted CAs (a private CA, a test server), trusted in addition to the system's,
        /// as `SocketTransport`'s option of the same name. A file that cannot be read, or holds no certificate,
        /// fails every connection with `.certificate`. Default `nil`.
        public var tlsCAFilePath: String?
        /// Public keys the server must present, in addition to a certificate that verifies: the connection
        /// fails with `.certificate` unless some certificate in the server's chain has one of these keys. Pin a
        /// backup key too, or a key rotation locks every client out. Default empty: no pinning.
        public var tlsPins: Set<CertificatePin>
        private let configuration: ConfigurationTemplate

        /// Creates a transport; see the properties for each option.
        ///
        /// - Parameter configuration: the configuration each connection's session is made from (copied now,
        ///   and again for every connection; its timeouts and `waitsForConnectivity` are overridden, see the
        ///   type's discussion). Default `.ephemeral`. A background configuration (one with an `identifier`) is
        ///   API misuse and stops the app with a precondition failure.
        public init(
            configuration: URLSessionConfiguration = .ephemeral,
            tlsCAFilePath: String? = nil,
            tlsPins: Set<CertificatePin> = [],
            maximumMessageSize: Int = 1 << 20,
            maxPendingSendBytes: Int = 8 << 20
        ) {
            precondition(
                configuration.identifier == nil,
                "API misuse: URLSessionTransport needs a foreground URLSessionConfiguration; a background session "
                    + "runs no WebSocket task")
            self.configuration = ConfigurationTemplate(configuration)
            self.tlsCAFilePath = tlsCAFilePath
            self.tlsPins = tlsPins
            self.maximumMessageSize = maximumMessageSize
            self.maxPendingSendBytes = maxPendingSendBytes
        }

        /// Starts the task and returns at once; events follow on the connection's delegate queue.
        public func connect(
            request: CableRequest,
            protocols: [String],
            handler: @escaping @Sendable (WebSocketEvent) -> Void
        ) -> any WebSocketConnection {
            var request = URLRequest(request)
            request.timeoutInterval = ConfigurationTemplate.noTimeout
            if !protocols.isEmpty {
                request.setValue(protocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
            }
            let connection = URLSessionConnection(
                offering: protocols, maxPendingSendBytes: maxPendingSendBytes,
                trust: TrustOptions(caFile: tlsCAFilePath, pins: tlsPins), handler: handler)
            connection.start(
                request: request, configuration: configuration.make(), maximumMessageSize: maximumMessageSize)
            return connection
        }
    }

    /// The app's configuration, kept as a private copy that is never mutated; every connection gets a copy of
    /// its own with the client's timer rules applied.
    ///
    /// `@unchecked Sendable`: `template` is a copy no one else holds, written only in `init` and only read
    /// (copied) afterwards.
    private final class ConfigurationTemplate: @unchecked Sendable {
        /// Longer than any session: the client's own deadlines end attempts and connections.
        static let noTimeout: TimeInterval = 365 * 24 * 3600

        private let template: URLSessionConfiguration

        init(_ configuration: URLSessionConfiguration) {
            template = Self.copy(configuration)
        }

        func make() -> URLSessionConfiguration {
            let configuration = Self.copy(template)
            configuration.timeoutIntervalForRequest = Self.noTimeout
            configuration.timeoutIntervalForResource = Self.noTimeout
            #if canImport(Darwin)
                configuration.waitsForConnectivity = false  // (read-only in swift-corelibs-foundation)
            #endif
            return configuration
        }

        private static func copy(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
            configuration.copy() as? URLSessionConfiguration ?? .ephemeral
        }
    }

    /// What the session delegate checks the server's certificate against.
    struct TrustOptions: Sendable {
        var caFile: String?
        var pins: Set<CertificatePin>
        /// Whether the system's default evaluation is all there is to do.
        var isDefault: Bool { caFile == nil && pins.isEmpty }
    }

    /// One `URLSessionWebSocketTask` behind the ``WebSocketConnection`` protocol.
    ///
    /// `@unchecked Sendable`: the mutable state is in `state` (a lock); `session` and `task` are written
    /// once in `start`, before the task is resumed and before the object is shared with another thread.
    final class URLSessionConnection: NSObject, WebSocketConnection, URLSessionWebSocketDelegate, @unchecked Sendable {
        private struct State {
            var isOpen = false
            /// The app's close and which of the task's end reports is delivered (shared code, tested on Linux).
            var end = URLSessionEndRace()
            var handler: (@Sendable (WebSocketEvent) -> Void)?
            /// Text bytes handed to the task whose send has not completed.
            var unsentBytes = 0
            /// Why the delegate refused the server's certificate, if it did.
            var refusedTrust: String?
        }

        private let state: Locked<State>
        /// The subprotocols offered in the request, the only ones the connection may report as opened.
        private let offeredProtocols: [String]
        private let maxPendingSendBytes: Int
        private let trust: TrustOptions
        private let queue: OperationQueue
        private var session: URLSession?
        private var task: URLSessionWebSocketTask?

        init(
            offering protocols: [String], maxPendingSendBytes: Int, trust: TrustOptions,
            handler: @escaping @Sendable (WebSocketEvent) -> Void
        ) {
            state = Locked(State(handler: handler))
            offeredProtocols = protocols
            self.maxPendingSendBytes = maxPendingSendBytes
            self.trust = trust
            queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            queue.name = "CableReactive.URLSessionTransport"
        }

        func start(request: URLRequest, configuration: URLSessionConfiguration, maximumMessageSize: Int) {
            let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
            let task = session.webSocketTask(with: request)
            task.maximumMessageSize = maximumMessageSize
            self.session = session
            self.task = task
            task.resume()
        }

        func send(text: String) -> Bool {
            let count = text.utf8.count
            let admitted = state.withLock { state -> Bool in
                guard state.isOpen, !state.end.hasEnded, state.end.closeRequest == nil,
                    count <= maxPendingSendBytes - state.unsentBytes
                else { return false }
                state.unsentBytes += count
                return true
            }
            guard admitted, let task else { return false }
            task.send(.string(text)) { [state] _ in
                // A failed send also fails the task; the close is reported from there.
                state.withLock { $0.unsentBytes -= count }
            }
            return true
        }

        func close(code: WebSocketCloseCode, reason: String) {
            let wasOpen: Bool? = state.withLock { state in
                guard state.end.requestClose(code: code, reason: reason) else { return nil }
                return state.isOpen
            }
            guard let wasOpen, let task else { return }
            if wasOpen {
                // Codes that may not be sent become 1000, the reason is cut on a character boundary, as on Linux.
                let payload = ClosePayload(sending: code.rawValue, reason: reason)
                let wire = Int(payload.code ?? WebSocketCloseCode.normalClosure.rawValue)
                let closeCode = URLSessionWebSocketTask.CloseCode(rawValue: wire) ?? .normalClosure
                task.cancel(with: closeCode, reason: Data(payload.encodedReason))
            } else {
                task.cancel()
                queue.addOperation { [self] in finish(.cancelledBeforeOpen) }
            }
        }

        // MARK: Delegate (all on `queue`)

        func urlSession(
            _ session: URLSession,
            webSocketTask: URLSessionWebSocketTask,
            didOpenWithProtocol protocol: String?
        ) {
            let handler = state.withLock { state -> (@Sendable (WebSocketEvent) -> Void)? in
                guard !state.end.hasEnded, state.end.closeRequest == nil else { return nil }
                state.isOpen = true
                return state.handler
            }
            guard let handler else { return }
            // Nil for a protocol offered by header (as ours are) falls back to the response's header.
            let chosen = URLSessionSubprotocol.chosen(
                reported: `protocol`, responseHeaders: Self.headers(of: webSocketTask.response),
                offered: offeredProtocols)
            handler(.opened(protocol: chosen))
            receiveNext(webSocketTask)
        }

        /// The header fields of the upgrade's HTTP response, if it is one, with their names as URLSession gives them.
        private static func headers(of response: URLResponse?) -> [String: String] {
            guard let response = response as? HTTPURLResponse else { return [:] }
            var headers: [String: String] = [:]
            for case (let name as String, let value as String) in response.allHeaderFields { headers[name] = value }
            return headers
        }

        func urlSession(
            _ session: URLSession,
            webSocketTask: URLSessionWebSocketTask,
            didCloseWith closeCode: URLSessionWebSocketTask.CloseCode,
            reason: Data?
        ) {
            finish(.closeFrameReceived(code: closeCode.rawValue, reason: reason.map { Array($0) }))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            finish(.completed(end(of: task, error: error)))
        }

        #if canImport(Security)
            // Server trust needs the Security framework: swift-corelibs-foundation leaves this out, so the
            // Linux type-check cannot see it; Scripts/check-availability lists its APIs.
            func urlSession(
                _ session: URLSession,
                didReceive challenge: URLAuthenticationChallenge,
                completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
            ) {
                guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
                    !trust.isDefault, let serverTrust = challenge.protectionSpace.serverTrust
                else { return completionHandler(.performDefaultHandling, nil) }
                if let refusal = evaluate(serverTrust) {
                    state.withLock { $0.refusedTrust = refusal }
                    completionHandler(.cancelAuthenticationChallenge, nil)
                } else {
                    completionHandler(.useCredential, URLCredential(trust: serverTrust))
                }
            }

            /// Why the server's chain is refused, or nil: the system's evaluation (for the host name), with the
            /// CA file's certificates as extra anchors, then ``TrustDecision`` (shared with the Linux transport).
            private func evaluate(_ serverTrust: SecTrust) -> String? {
                if let caFile = trust.caFile {
                    let pem = (try? Data(contentsOf: URL(fileURLWithPath: caFile))).map {
                        String(decoding: $0, as: UTF8.self)
                    }
                    let anchors = PEM.certificates(in: pem ?? "").compactMap {
                        SecCertificateCreateWithData(nil, Data($0) as CFData)
                    }
                    guard !anchors.isEmpty else { return "cannot load the CA file" }
                    SecTrustSetAnchorCertificates(serverTrust, anchors as CFArray)
                    SecTrustSetAnchorCertificatesOnly(serverTrust, false)  // the system's CAs stay trusted
                }
                let verified = SecTrustEvaluateWithError(serverTrust, nil)
                return TrustDecision.refusal(verified: verified, chain: Self.chain(of: serverTrust), pins: trust.pins)
            }

            /// The DER certificates of an evaluated trust, the server's own first.
            private static func chain(of serverTrust: SecTrust) -> [[UInt8]] {
                let certificates: [SecCertificate]
                if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) {
                    certificates = (SecTrustCopyCertificateChain(serverTrust) as? [SecCertificate]) ?? []
                } else {
                    certificates = (0..<SecTrustGetCertificateCount(serverTrust)).compactMap {
                        SecTrustGetCertificateAtIndex(serverTrust, $0)
                    }
                }
                return certificates.map { Array(SecCertificateCopyData($0) as Data) }
            }
        #endif

        private func receiveNext(_ task: URLSessionWebSocketTask) {
            task.receive { [self] result in
                switch result {
                case .success(.string(let text)):
                    let handler = state.withLock { $0.handler }  // nil once the end is delivered
                    handler?(.text(text))
                    receiveNext(task)
                case .success:
                    // Binary (or a future message kind): this protocol is text-only, as in SocketTransport.
                    task.cancel(with: .unsupportedData, reason: nil)
                    finish(.unsupportedMessageReceived)
                case .failure(let error):
                    // Settles the end only if the task already has its close code: on a server close this can
                    // come before didCloseWith (see URLSessionEndRace), which then reports the close.
                    finish(.receiveFailed(end(of: task, error: error)))
                }
            }
        }

        /// What the task holds now, and the error it reported, as plain values for ``URLSessionEndRace``.
        ///
        /// `task.response` is the upgrade's HTTP response: URLSession sets it when the response's head arrives,
        /// before it fails a task whose status is not 101, and does not change it afterwards. So when the error
        /// (`badServerResponse`) is reported, the status that caused it can be read; it is nil only when no
        /// response arrived at all (the connection or TLS failed), and then the error alone is classified.
        private func end(of task: URLSessionTask, error: Error?) -> URLSessionTaskEnd {
            var end = URLSessionTaskEnd(
                httpStatus: (task.response as? HTTPURLResponse)?.statusCode,
                refusedTrust: state.withLock { $0.refusedTrust })
            if let webSocketTask = task as? URLSessionWebSocketTask {
                end.closeCode = webSocketTask.closeCode.rawValue
                end.closeReason = webSocketTask.closeReason.map { Array($0) }
            }
            if let error = error as NSError? {
                end.errorDomain = error.domain
                end.errorCode = error.code
            }
            return end
        }

        /// Hands `report` to the race; when it settles the end, delivers `.closed` (once), then releases the
        /// handler and the session (which holds us).
        private func finish(_ report: URLSessionEndRace.Report) {
            let delivery = state.withLock { state -> (WebSocketCloseInfo, @Sendable (WebSocketEvent) -> Void)? in
                guard let info = state.end.settle(report), let handler = state.handler else { return nil }
                state.handler = nil
                return (info, handler)
            }
            guard let (info, handler) = delivery else { return }
            handler(.closed(info))
            session?.invalidateAndCancel()
        }
    }
    /// Its connections deliver outside their lock and take `send` and `close` from any thread.
    extension URLSessionTransport: NativeTransport {
        package func connect(
            request: CableRequest, protocols: [String], receiver: TextReceiver,
            handler: @escaping @Sendable (WebSocketEvent) -> Void
        ) -> any WebSocketConnection {
            connect(request: request, protocols: protocols, handler: receiver.adapting(handler))
        }
    }
#endif
