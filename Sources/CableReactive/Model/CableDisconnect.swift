/// Why the last connection or attempt ended, as the app can show it: ``ActionCableClient/lastDisconnect``.
///
/// Set each time a welcomed session is lost or an attempt fails, before the client retries or stops, and
/// never for the app's own `disconnect()`, `close()` or a closed `canConnect` gate. It holds no URL, header or
/// payload: the server's disconnect reason (the words of the app's own server), a close code, or the typed
/// transport error, with its HTTP status when the upgrade was answered with one.
///
/// In a `@MainActor` view model (a healthy reconnect keeps it: show it only while not connected):
///
/// ```swift
/// token = client.lastDisconnect.observe(on: .main) { [weak self] last in
///     guard let self, let last else { return }
///     switch last.kind {
///     case .failed where last.httpStatus == 404: banner = "Server refused the connection (check the Origin)"
///     case .failed, .welcomeTimeout: banner = "Can't reach the server"
///     case .stale, .checkFailed: banner = "Connection lost; reconnecting"
///     case .serverDisconnect: banner = last.serverReason == "server_restart" ? "Server restarting" : "Disconnected"
///     default: banner = "Reconnecting"
///     }
/// }
/// ```
public struct CableDisconnect: Sendable, Hashable, CustomStringConvertible {
    /// What ended it. New kinds may be added in later versions, so a `switch` over them needs a `default`.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        package let name: String
        /// The size limit in bytes, for ``messageTooBig(limit:)``.
        public let limit: Int?

        private init(_ name: String, limit: Int? = nil) {
            self.name = name
            self.limit = limit
        }

        /// The server sent a `disconnect` frame: ``CableDisconnect/serverReason`` and
        /// ``CableDisconnect/reconnect`` say what it said.
        public static let serverDisconnect = Kind("server_disconnect")
        /// A close frame ended the connection: ``CableDisconnect/closeCode``.
        public static let closed = Kind("closed")
        /// The connection failed or dropped without a close frame: ``CableDisconnect/error`` (DNS, refused,
        /// TLS, an upgrade answered with an HTTP status, a broken frame, an abnormal end).
        public static let failed = Kind("failed")
        /// No welcome within ``CableOptions/staleTimeout`` of starting the attempt.
        public static let welcomeTimeout = Kind("welcome_timeout")
        /// The welcomed session received nothing (not even a ping) for ``CableOptions/staleTimeout``.
        public static let stale = Kind("stale")
        /// The welcomed session failed a check: after the network path changed, the app came back to the
        /// foreground or the device woke (or ``ActionCableClient/networkChanged()``), it sent nothing in time to
        /// show it was alive. The client replaced it at once, at attempt 0.
        public static let checkFailed = Kind("check_failed")
        /// The server sent a message larger than the transport accepts, `limit` bytes (1 MiB by default; see
        /// ``WebSocketError/Kind-swift.struct/messageTooBig(limit:)``): the client closed with 1009 and retries.
        /// ``CableDisconnect/error`` has the transport's error. Logged at WARN as `message_too_big limit=…`.
        ///
        /// ```swift
        /// if let limit = client.lastDisconnect.value?.kind.limit {
        ///     print("the server sent a message over \(limit) bytes")  // kind == .messageTooBig(limit: limit)
        /// }
        /// ```
        public static func messageTooBig(limit: Int) -> Kind { Kind("message_too_big", limit: limit) }
        /// `onRequest` threw.
        public static let requestFailed = Kind("request_failed")
        /// The upgrade succeeded but the server chose the `actioncable-unsupported` subprotocol: it speaks none
        /// of ours, and the client stops (``CableStopReason/unsupportedProtocol``) right after publishing this.
        public static let unsupportedProtocol = Kind("unsupported_protocol")

        /// The kind's name, as logged: `server_disconnect`, `failed`, … (`message_too_big(limit: 1048576)` with
        /// its limit).
        public var description: String { limit.map { "\(name)(limit: \($0))" } ?? name }
    }

    /// What ended it.
    public let kind: Kind
    /// The attempt that ended (as in ``CableState/connecting(attempt:)``).
    public let attempt: Int
    /// Whether the session had been welcomed: a lost connection (`true`) or a failed attempt (`false`).
    public let wasConnected: Bool
    /// The reason of a server `disconnect` (`server_restart`, `remote`, a custom reason), if it sent one.
    public let serverReason: String?
    /// Whether a server `disconnect` asked the client to reconnect, if it said.
    public let reconnect: Bool?
    /// The close code, for ``Kind/closed``.
    public let closeCode: WebSocketCloseCode?
    /// The transport's error, for ``Kind/failed``.
    public let error: WebSocketError?

    /// The HTTP status the upgrade was answered with, when it was refused (Rails answers 404 to a wrong Origin).
    public var httpStatus: Int? { error?.httpStatus }

    package init(
        kind: Kind, attempt: Int, wasConnected: Bool, serverReason: String? = nil, reconnect: Bool? = nil,
        closeCode: WebSocketCloseCode? = nil, error: WebSocketError? = nil
    ) {
        self.kind = kind
        self.attempt = attempt
        self.wasConnected = wasConnected
        self.serverReason = serverReason
        self.reconnect = reconnect
        self.closeCode = closeCode
        self.error = error
    }

    /// For example `failed(upgradeRejected(status: 404)) attempt=2`.
    public var description: String {
        var text = kind.name
        if let serverReason { text += "(\"\(serverReason)\")" }
        if let closeCode { text += "(\(closeCode.rawValue))" }
        if let error { text += "(\(error.kind))" }
        return text + " attempt=\(attempt)"
    }
}
