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
    /// and an unusable URL are permanent (the client stops); offline (`networkUnavailable`), lost, refused and
    /// timed-out connections are retried; an upgrade answered with a status other than 101 is
    /// `upgradeRejected(status:)`, read from the task's HTTP response, so 401 and 403 reach `onUnauthorized`; a
    /// message over ``maximumMessageSize`` is `messageTooBig(limit:)`. A failed receive that URLSession follows
    /// with no end within a few seconds ends the connection with the receive's error (the task is cancelled).
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
        /// The largest message accepted (`URLSessionWebSocketTask.maximumMessageSize`). Default 1 MiB. A bigger one
        /// ends the connection with 1009, as ``WebSocketError/Kind-swift.struct/messageTooBig(limit:)`` with this
        /// limit, as on Linux (and the client reconnects).
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
            connect(request: request, protocols: protocols, pong: {}, handler: handler)
        }

        /// The connection, whose pongs (answers to ``PingingConnection/sendPing()``) go to `pong`.
        private func connect(
            request: CableRequest, protocols: [String], pong: @escaping @Sendable () -> Void,
            handler: @escaping @Sendable (WebSocketEvent) -> Void
        ) -> URLSessionConnection {
            var request = URLRequest(request)
            request.timeoutInterval = ConfigurationTemplate.noTimeout
            if !protocols.isEmpty {
                request.setValue(protocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
            }
            let connection = URLSessionConnection(
                offering: protocols, maxPendingSendBytes: maxPendingSendBytes, maximumMessageSize: maximumMessageSize,
                trust: TrustOptions(caFile: tlsCAFilePath, pins: tlsPins), pong: pong, handler: handler)
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

    /// One `URLSessionWebSocketTask` behind the ``WebSocketConnection`` protocol: URLSession's calls and the
    /// delegate's reports, as plain values, to and from ``URLSessionConnectionCore`` (shared code, tested on Linux),
    /// which holds the state and makes every decision.
    ///
    /// `@unchecked Sendable`: the mutable state is in `core` (a lock), and the session and task in `handles`.
    final class URLSessionConnection: NSObject, PingingConnection, URLSessionWebSocketDelegate, @unchecked Sendable {
        /// The clock of the cores' end deadlines.
        private static let scheduler = DispatchScheduler()

        /// The session and the task, for the core's effects too.
        ///
        /// `@unchecked Sendable`: both are written once in `start`, before the task is resumed and before the
        /// connection is shared with another thread, and only read afterwards.
        private final class Handles: @unchecked Sendable {
            var session: URLSession?
            var task: URLSessionWebSocketTask?
        }

        /// The subprotocols offered in the request, the only ones the connection may report as opened.
        private let offeredProtocols: [String]
        private let trust: TrustOptions
        private let queue: OperationQueue
        private let handles: Handles
        private let core: URLSessionConnectionCore
        /// Where the answers to ``sendPing()`` go.
        private let pong: @Sendable () -> Void
        private var task: URLSessionWebSocketTask? { handles.task }

        init(
            offering protocols: [String], maxPendingSendBytes: Int, maximumMessageSize: Int, trust: TrustOptions,
            pong: @escaping @Sendable () -> Void, handler: @escaping @Sendable (WebSocketEvent) -> Void
        ) {
            offeredProtocols = protocols
            self.pong = pong
            self.trust = trust
            let queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            queue.name = "CableReactive.URLSessionTransport"
            self.queue = queue
            let handles = Handles()
            self.handles = handles
            let effects = URLSessionConnectionCore.Effects(
                onDelegateQueue: { work in queue.addOperation(work) },
                cancelTask: { cancel in Self.cancel(handles.task, cancel) },
                invalidate: { handles.session?.invalidateAndCancel() })
            core = URLSessionConnectionCore(
                maxPendingSendBytes: maxPendingSendBytes, maximumMessageSize: maximumMessageSize,
                scheduler: Self.scheduler, effects: effects, handler: handler)
        }

        func start(request: URLRequest, configuration: URLSessionConfiguration, maximumMessageSize: Int) {
            let session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
            let task = session.webSocketTask(with: request)
            task.maximumMessageSize = maximumMessageSize
            handles.session = session
            handles.task = task
            task.resume()
        }

        func send(text: String) -> Bool {
            let count = text.utf8.count
            guard let task, core.admitSend(byteCount: count) else { return false }
            task.send(.string(text)) { [core] _ in core.sendCompleted(byteCount: count) }
            return true
        }

        /// `URLSessionWebSocketTask.sendPing(pongReceiveHandler:)` (iOS 13); a pong is reported on the delegate
        /// queue, where the connection's events are delivered. Before the task exists nothing is sent.
        func sendPing() -> Bool {
            guard let task else { return false }
            task.sendPing { [queue, pong] error in
                guard error == nil else { return }  // no pong: the check that asked for it decides
                queue.addOperation { pong() }
            }
            return true
        }

        func close(code: WebSocketCloseCode, reason: String) {
            guard let task else { return }
            switch core.close(code: code, reason: reason) {
            case .none: return
            case .sendClose(let code, let reason):
                task.cancel(with: Self.closeCode(code), reason: Data(reason))
            case .cancelBeforeOpen:
                task.cancel()
                queue.addOperation { [core] in core.report(.cancelledBeforeOpen) }
            }
        }

        private static func cancel(_ task: URLSessionWebSocketTask?, _ cancel: URLSessionEndRace.TaskCancel) {
            switch cancel {
            case .closing(let code): task?.cancel(with: closeCode(Int(code.rawValue)), reason: nil)
            case .abort: task?.cancel()
            }
        }

        /// URLSession's close code for a number: `CloseCode(rawValue:)` takes any value (an imported C enum), so
        /// private codes (4000-4999) are sent as they are.
        private static func closeCode(_ code: Int) -> URLSessionWebSocketTask.CloseCode {
            URLSessionWebSocketTask.CloseCode(rawValue: code) ?? .normalClosure
        }

        // MARK: Delegate (all on `queue`)

        func urlSession(
            _ session: URLSession,
            webSocketTask: URLSessionWebSocketTask,
            didOpenWithProtocol protocol: String?
        ) {
            guard let handler = core.opened() else { return }
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
            // The raw value holds any code the frame had, private ones (4000-4999) included; 0 (`.invalid`) when
            // URLSession could not give one, which the core leaves to the completion (URLSessionEndRace).
            core.report(.closeFrameReceived(code: closeCode.rawValue, reason: reason.map { Array($0) }))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            core.report(.completed(end(of: task, error: error)))
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
                    core.refuseTrust(refusal)
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
                #if os(visionOS)
                    // visionOS has SecTrustCopyCertificateChain from 1.0, and deprecates the index functions there.
                    certificates = (SecTrustCopyCertificateChain(serverTrust) as? [SecCertificate]) ?? []
                #else
                    if #available(iOS 15, macOS 12, tvOS 15, watchOS 8, *) {
                        certificates = (SecTrustCopyCertificateChain(serverTrust) as? [SecCertificate]) ?? []
                    } else {
                        certificates = (0..<SecTrustGetCertificateCount(serverTrust)).compactMap {
                            SecTrustGetCertificateAtIndex(serverTrust, $0)
                        }
                    }
                #endif
                return certificates.map { Array(SecCertificateCopyData($0) as Data) }
            }
        #endif

        private func receiveNext(_ task: URLSessionWebSocketTask) {
            task.receive { [self] result in
                switch result {
                case .success(.string(let text)):
                    if core.deliver(.text(text)) { receiveNext(task) }  // not delivered: the end was
                case .success:
                    // Binary (or a future message kind): this protocol is text-only, as in SocketTransport. The
                    // core cancels the task with 1003.
                    core.report(.unsupportedMessageReceived)
                case .failure(let error):
                    // Settles the end only if the task already has its close code, or the message was too big:
                    // on a server close this can come before didCloseWith (see URLSessionEndRace), which then
                    // reports the close; if nothing does within URLSessionEndRace.endGrace, the core cancels the
                    // task and reports this error.
                    core.report(.receiveFailed(end(of: task, error: error)))
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
                httpStatus: (task.response as? HTTPURLResponse)?.statusCode, refusedTrust: core.refusedTrust)
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
    }
    /// Its connections deliver outside their lock and take `send` and `close` from any thread.
    extension URLSessionTransport: NativeTransport {
        package func connect(
            request: CableRequest, protocols: [String], receiver: TextReceiver,
            handler: @escaping @Sendable (WebSocketEvent) -> Void
        ) -> any WebSocketConnection {
            connect(request: request, protocols: protocols, pong: receiver.pong, handler: receiver.adapting(handler))
        }

        /// Its connections answer ``PingingConnection/sendPing()`` (`URLSessionWebSocketTask.sendPing`).
        package var pings: Bool { true }
    }
#endif
