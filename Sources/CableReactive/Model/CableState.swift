/// The connection state of an ``ActionCableClient``.
///
/// | state | meaning | what to show |
/// |---|---|---|
/// | `disconnected` | not connecting: before ``ActionCableClient/connect()``, after ``ActionCableClient/disconnect()``, or while `canConnect` is false | nothing, or "offline" |
/// | `connecting(attempt:)` | opening a connection or waiting to retry; `attempt` counts consecutive failures (0 = first try) | a spinner; "reconnecting" once `attempt > 0` |
/// | `connected` | the server's welcome arrived; subscriptions are (re)sent | live content |
/// | `stopped(reason:)` | gave up, for the ``CableStopReason`` given: the server said not to reconnect, credentials were refused, the attempts ran out, the server speaks none of our protocols, or the failure is permanent (a refused certificate); ``ActionCableClient/connect()`` starts again | an error with a retry button |
/// | `closed` | ``ActionCableClient/close()`` was called; terminal | nothing |
public enum CableState: Sendable, Hashable, CustomStringConvertible {
    /// Not connecting.
    case disconnected
    /// Connecting, or waiting to retry; `attempt` is the number of consecutive failures so far.
    case connecting(attempt: Int)
    /// Connected: the server welcomed us.
    case connected
    /// No automatic retries until ``ActionCableClient/connect()``; `reason` says who decided and why.
    case stopped(reason: CableStopReason)
    /// Closed for good.
    case closed

    /// A readable description, such as `connecting(attempt: 2)`. It includes a stop reason, which comes
    /// from the server; the client's own logs print only the state's name.
    public var description: String {
        switch self {
        case .disconnected: "disconnected"
        case .connecting(let attempt): "connecting(attempt: \(attempt))"
        case .connected: "connected"
        case .stopped(let reason): "stopped(reason: \(reason))"
        case .closed: "closed"
        }
    }

    /// Whether the client is connected (the server's welcome arrived): `state.value.isConnected`.
    public var isConnected: Bool { self == .connected }

    /// Why the client stopped, while ``stopped(reason:)``; `nil` in every other state. Reads the reason without
    /// a `case` pattern:
    ///
    /// ```swift
    /// if client.state.value.stopReason?.kind == .unauthorized { showLogin() }
    /// ```
    public var stopReason: CableStopReason? {
        if case .stopped(let reason) = self { return reason }
        return nil
    }

    /// The state's name without its payload, safe for logs.
    var name: String {
        switch self {
        case .disconnected: "disconnected"
        case .connecting: "connecting"
        case .connected: "connected"
        case .stopped: "stopped"
        case .closed: "closed"
        }
    }
}

/// Why a client stopped retrying (``CableState/stopped(reason:)``): the ``kind`` of stop, and the reason the
/// server sent when the stop came from a server `disconnect`.
///
/// The client's own decisions (``attemptsExhausted``, ``unsupportedProtocol``) can never be confused with a
/// reason string a server sends: a server that disconnects with `"max_reconnect_attempts"` yields
/// `.server("max_reconnect_attempts")`, not ``attemptsExhausted``.
///
/// ```swift
/// if case .stopped(let reason) = client.state.value {
///     switch reason.kind {
///     case .unauthorized: showLogin()
///     case .unsupportedProtocol: showUpdateRequired()
///     default: showRetryButton(reason.serverReason ?? "connection lost")
///     }
/// }
/// ```
public struct CableStopReason: Sendable, Hashable, CustomStringConvertible {
    /// What kind of stop this is. New kinds may be added in later versions, so a `switch` over them needs
    /// a `default`.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        package let name: String

        private init(_ name: String) { self.name = name }

        /// The server sent a `disconnect` with `reconnect: false`; its reason is ``CableStopReason/serverReason``.
        public static let serverDisconnect = Kind("server_disconnect")
        /// Credentials were refused (a disconnect with `unauthorized` or `token_expired`, or an upgrade
        /// answered 401 or 403) and `onUnauthorized` returned `false`, was not set, or the refreshed
        /// credentials were refused again.
        public static let unauthorized = Kind("unauthorized")
        /// ``CableOptions/maxReconnectAttempts`` consecutive attempts failed.
        public static let attemptsExhausted = Kind("attempts_exhausted")
        /// The connection failed in a way retrying cannot fix: the server's certificate was refused, App
        /// Transport Security blocked a `ws://` URL, the system's TLS library is missing, the URL cannot be
        /// used (the `WebSocketError` kinds `certificate`, `insecureConnectionBlocked`, `tlsUnavailable` and
        /// `invalidURL`), or the HTTP proxy (`SocketTransport`'s `proxy` option) cannot be used or refused us
        /// for good: `invalidProxy` (an unsupported scheme such as `https://` or `socks5://`, no host, a bad
        /// port, a user name with `:`), and `proxyRejected(status:)` with 407 (credentials missing or wrong),
        /// 401 (what some proxies answer to wrong credentials) or 403 (the proxy forbids the destination).
        /// Other proxy refusals (502, 503, 504, …) are retried.
        /// ``CableStopReason/error`` says which.
        public static let permanentFailure = Kind("permanent_failure")
        /// The server chose the `actioncable-unsupported` subprotocol: it understands none of the protocols
        /// we offered (for example a newer Action Cable), so retrying cannot help.
        public static let unsupportedProtocol = Kind("unsupported_protocol")

        /// The kind's name, as logged: `attempts_exhausted`, `unauthorized`, …
        public var description: String { name }
    }

    /// What kind of stop this is.
    public let kind: Kind
    /// The reason the server gave, when the stop follows a server `disconnect` (`nil` when it sent none, and
    /// for the client's own decisions). Server text: show it only if you trust the server's wording.
    public let serverReason: String?
    /// The transport's error, for ``Kind-swift.struct/permanentFailure`` (`nil` for the other kinds).
    public let error: WebSocketError?

    package init(kind: Kind, serverReason: String? = nil, error: WebSocketError? = nil) {
        self.kind = kind
        self.serverReason = serverReason
        self.error = error
    }

    /// The server said `disconnect` with `reconnect: false` and `reason`.
    public static func server(_ reason: String?) -> CableStopReason {
        CableStopReason(kind: .serverDisconnect, serverReason: reason)
    }

    /// Credentials were refused; `serverReason` is the disconnect's reason (`"unauthorized"`,
    /// `"token_expired"`), or `nil` for an upgrade answered 401 or 403.
    public static func unauthorized(serverReason: String?) -> CableStopReason {
        CableStopReason(kind: .unauthorized, serverReason: serverReason)
    }

    /// ``CableOptions/maxReconnectAttempts`` consecutive attempts failed.
    public static let attemptsExhausted = CableStopReason(kind: .attemptsExhausted)

    /// The server speaks none of the protocols we offered.
    public static let unsupportedProtocol = CableStopReason(kind: .unsupportedProtocol)

    /// The transport failed with `error`, whose kind retrying cannot fix (a refused certificate, for example).
    public static func permanentFailure(_ error: WebSocketError) -> CableStopReason {
        CableStopReason(kind: .permanentFailure, error: error)
    }

    /// For example `server_disconnect("maintenance")` or `attempts_exhausted`. It includes the server's
    /// reason text; the client's own logs print only the kind.
    public var description: String {
        if let error { return "\(kind.name)(\(error.kind))" }
        return serverReason.map { "\(kind.name)(\"\($0)\")" } ?? kind.name
    }
}

/// The state of one ``ChannelSubscription``.
///
/// | state | meaning |
/// |---|---|
/// | `pending` | waiting for the server's confirmation (also after every lost connection) |
/// | `subscribed(confirmations:)` | confirmed; `confirmations` counts confirmed connections. More than 1 means the subscription came back after a reconnect and messages may have been missed: refetch what you show |
/// | `rejected` | the server rejected it on this connection; it is sent again after the next welcome |
/// | `unsubscribed` | ``ChannelSubscription/unsubscribe()`` was called or the client closed; final |
public enum SubscriptionState: Sendable, Hashable, CustomStringConvertible {
    /// Waiting for the server's confirmation.
    case pending
    /// Confirmed; `confirmations` is the number of connections on which it was confirmed.
    case subscribed(confirmations: Int)
    /// Rejected by the server on the current connection.
    case rejected
    /// Ended for good.
    case unsubscribed

    /// Whether the server confirmed the subscription on the current connection, whatever the count: what enables
    /// a send button (``ChannelSubscription/perform(_:_:)-(String,JSONValue)`` needs it and a live connection).
    ///
    /// ```swift
    /// sendEnabled = room.state.value.isSubscribed
    /// ```
    public var isSubscribed: Bool {
        if case .subscribed = self { return true }
        return false
    }

    /// A readable description, such as `subscribed(confirmations: 1)`.
    public var description: String {
        switch self {
        case .pending: "pending"
        case .subscribed(let confirmations): "subscribed(confirmations: \(confirmations))"
        case .rejected: "rejected"
        case .unsubscribed: "unsubscribed"
        }
    }
}
