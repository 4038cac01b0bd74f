// Apple platforms only. On Linux the library never links Foundation's networking (libcurl and its
// libraries); `Scripts/check-foundation` type-checks this file there with `-DCABLE_FULL_FOUNDATION`.
#if canImport(Darwin) || CABLE_FULL_FOUNDATION
    import Foundation
    import Signals

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    /// WebSockets through `URLSessionWebSocketTask`: the default transport on Apple platforms.
    ///
    /// Each connection has its own `URLSession` whose delegate queue is serial, so the handler receives
    /// events one at a time, in order, on that queue's thread (never the main thread).
    /// Subprotocols are offered through the `Sec-WebSocket-Protocol` request header.
    ///
    /// **Lifetime.** The session keeps the connection alive until `.closed` has been delivered; then the
    /// session is invalidated and the handler released.
    ///
    /// ```swift
    /// let transport = URLSessionTransport()
    /// let connection = transport.connect(request: CableRequest(url: url), protocols: ["actioncable-v1-json"]) {
    ///     print($0)  // .opened(protocol:), .text(_), then .closed(_)
    /// }
    /// ```
    public struct URLSessionTransport: WebSocketTransport {
        /// The largest message accepted (`URLSessionWebSocketTask.maximumMessageSize`). Default 1 MiB.
        public var maximumMessageSize: Int
        /// The most bytes of text that may wait to be sent (handed to `send` and not yet reported written by the
        /// task). A `send` that would pass it returns `false`; once the task has written more, `send` succeeds
        /// again. Default 8 MiB, as the Linux transport's.
        public var maxPendingSendBytes: Int

        /// Creates a transport; see ``maximumMessageSize`` and ``maxPendingSendBytes``.
        public init(maximumMessageSize: Int = 1 << 20, maxPendingSendBytes: Int = 8 << 20) {
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
            if !protocols.isEmpty {
                request.setValue(protocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
            }
            let connection = URLSessionConnection(maxPendingSendBytes: maxPendingSendBytes, handler: handler)
            connection.start(request: request, maximumMessageSize: maximumMessageSize)
            return connection
        }
    }

    /// One `URLSessionWebSocketTask` behind the ``WebSocketConnection`` protocol.
    ///
    /// `@unchecked Sendable`: the mutable state is in `state` (a lock); `session` and `task` are written
    /// once in `start`, before the task is resumed and before the object is shared with another thread.
    final class URLSessionConnection: NSObject, WebSocketConnection, URLSessionWebSocketDelegate, @unchecked Sendable {
        private struct State {
            var isOpen = false
            var isClosed = false
            var closeRequest: (code: WebSocketCloseCode, reason: String)?
            var handler: (@Sendable (WebSocketEvent) -> Void)?
            /// Text bytes handed to the task whose send has not completed.
            var unsentBytes = 0
        }

        private let state: Locked<State>
        private let maxPendingSendBytes: Int
        private let queue: OperationQueue
        private var session: URLSession?
        private var task: URLSessionWebSocketTask?

        init(maxPendingSendBytes: Int, handler: @escaping @Sendable (WebSocketEvent) -> Void) {
            state = Locked(State(handler: handler))
            self.maxPendingSendBytes = maxPendingSendBytes
            queue = OperationQueue()
            queue.maxConcurrentOperationCount = 1
            queue.name = "CableReactive.URLSessionTransport"
        }

        func start(request: URLRequest, maximumMessageSize: Int) {
            let session = URLSession(configuration: .default, delegate: self, delegateQueue: queue)
            let task = session.webSocketTask(with: request)
            task.maximumMessageSize = maximumMessageSize
            self.session = session
            self.task = task
            task.resume()
        }

        func send(text: String) -> Bool {
            let count = text.utf8.count
            let admitted = state.withLock { state -> Bool in
                guard state.isOpen, !state.isClosed, state.closeRequest == nil,
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
                guard !state.isClosed, state.closeRequest == nil else { return nil }
                state.closeRequest = (code, reason)
                return state.isOpen
            }
            guard let wasOpen, let task else { return }
            if wasOpen {
                let closeCode = URLSessionWebSocketTask.CloseCode(rawValue: Int(code.rawValue)) ?? .normalClosure
                task.cancel(with: closeCode, reason: Data(reason.utf8.prefix(123)))
            } else {
                task.cancel()
                queue.addOperation { [self] in finish(.closed(code: code, reason: reason)) }
            }
        }

        // MARK: Delegate (all on `queue`)

        func urlSession(
            _ session: URLSession,
            webSocketTask: URLSessionWebSocketTask,
            didOpenWithProtocol protocol: String?
        ) {
            let handler = state.withLock { state -> (@Sendable (WebSocketEvent) -> Void)? in
                guard !state.isClosed, state.closeRequest == nil else { return nil }
                state.isOpen = true
                return state.handler
            }
            guard let handler else { return }
            handler(.opened(protocol: `protocol`))
            receiveNext(webSocketTask)
        }

        func urlSession(
            _ session: URLSession,
            webSocketTask: URLSessionWebSocketTask,
            didCloseWith closeCode: URLSessionWebSocketTask.CloseCode,
            reason: Data?
        ) {
            if let request = state.withLock({ $0.closeRequest }) {
                finish(.closed(code: request.code, reason: request.reason))  // we closed first: report ours
                return
            }
            let code = WebSocketCloseCode(rawValue: UInt16(clamping: closeCode.rawValue))
            finish(.closed(code: code, reason: reason.map { String(decoding: $0, as: UTF8.self) } ?? ""))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            finish(closeInfo(for: error, task: task))
        }

        private func receiveNext(_ task: URLSessionWebSocketTask) {
            task.receive { [self] result in
                switch result {
                case .success(.string(let text)):
                    let handler = state.withLock { $0.isClosed ? nil : $0.handler }
                    handler?(.text(text))
                    receiveNext(task)
                case .success:
                    // Binary (or a future message kind): this protocol is text-only, as in SocketTransport.
                    task.cancel(with: .unsupportedData, reason: nil)
                    finish(.failed(WebSocketError(.protocolViolation(closeCode: .unsupportedData))))
                case .failure(let error):
                    finish(closeInfo(for: error, task: task))
                }
            }
        }

        /// How the task ended: our own close, the peer's close code, an HTTP rejection, or a failure.
        private func closeInfo(for error: Error?, task: URLSessionTask) -> WebSocketCloseInfo {
            if let request = state.withLock({ $0.closeRequest }) {
                return .closed(code: request.code, reason: request.reason)
            }
            if let webSocketTask = task as? URLSessionWebSocketTask, webSocketTask.closeCode != .invalid {
                let code = WebSocketCloseCode(rawValue: UInt16(clamping: webSocketTask.closeCode.rawValue))
                let reason = webSocketTask.closeReason.map { String(decoding: $0, as: UTF8.self) } ?? ""
                return .closed(code: code, reason: reason)
            }
            if let response = task.response as? HTTPURLResponse, response.statusCode != 101 {
                return .failed(WebSocketError(.upgradeRejected(status: response.statusCode)))
            }
            guard let error else { return .failed(WebSocketError(.abnormalClosure)) }
            let kind: WebSocketError.Kind
            switch (error as? URLError)?.code {
            case .timedOut?: kind = .timeout
            case .cannotFindHost?, .dnsLookupFailed?: kind = .dnsFailure
            case .cannotConnectToHost?: kind = .connectionRefused
            case .secureConnectionFailed?, .serverCertificateUntrusted?, .serverCertificateHasBadDate?,
                .serverCertificateNotYetValid?, .serverCertificateHasUnknownRoot?:
                kind = .tls
            case .badServerResponse?: kind = .invalidHandshake
            case .badURL?, .unsupportedURL?: kind = .invalidURL
            default: kind = .abnormalClosure
            }
            // The URLError's description can hold the URL; keep only the code.
            return .failed(WebSocketError(kind, detail: "URLError \((error as? URLError)?.errorCode ?? 0)"))
        }

        /// Delivers `.closed` once, then releases the handler and the session (which holds us).
        private func finish(_ info: WebSocketCloseInfo) {
            let handler = state.withLock { state -> (@Sendable (WebSocketEvent) -> Void)? in
                guard !state.isClosed else { return nil }
                state.isClosed = true
                defer { state.handler = nil }
                return state.handler
            }
            guard let handler else { return }
            handler(.closed(info))
            session?.invalidateAndCancel()
        }
    }
#endif
