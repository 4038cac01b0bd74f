/// The connection state of an ``ActionCableClient``.
///
/// | state | meaning | what to show |
/// |---|---|---|
/// | `disconnected` | not connecting: before ``ActionCableClient/connect()``, after ``ActionCableClient/disconnect()``, or while `canConnect` is false | nothing, or "offline" |
/// | `connecting(attempt:)` | opening a connection or waiting to retry; `attempt` counts consecutive failures (0 = first try) | a spinner; "reconnecting" once `attempt > 0` |
/// | `connected` | the server's welcome arrived; subscriptions are (re)sent | live content |
/// | `stopped(reason:)` | gave up: the server said not to reconnect, authorization failed, or the attempts ran out; ``ActionCableClient/connect()`` starts again | an error with a retry button |
/// | `closed` | ``ActionCableClient/close()`` was called; terminal | nothing |
public enum CableState: Sendable, Hashable, CustomStringConvertible {
    /// Not connecting.
    case disconnected
    /// Connecting, or waiting to retry; `attempt` is the number of consecutive failures so far.
    case connecting(attempt: Int)
    /// Connected: the server welcomed us.
    case connected
    /// No automatic retries until ``ActionCableClient/connect()``. `reason` is the server's disconnect reason
    /// (`nil` when it sent none), `"unauthorized"`/`"token_expired"`, or `"max_reconnect_attempts"`.
    case stopped(reason: String?)
    /// Closed for good.
    case closed

    /// A readable description, such as `connecting(attempt: 2)`. It includes a stop reason, which comes
    /// from the server; the client's own logs print only the state's name.
    public var description: String {
        switch self {
        case .disconnected: "disconnected"
        case .connecting(let attempt): "connecting(attempt: \(attempt))"
        case .connected: "connected"
        case .stopped(let reason): "stopped(reason: \(reason ?? "nil"))"
        case .closed: "closed"
        }
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
