/// What the last reconnect did to a subscription: subscribed it again, or found it restored by the server.
///
/// Read it from ``ChannelSubscription/lastReconnect`` when the subscription's state becomes
/// ``SubscriptionState/subscribed(confirmations:)`` again:
///
/// ```swift
/// room.state.observe { state in
///     guard case .subscribed = state, let reconnect = room.lastReconnect else { return }
///     if reconnect == .resubscribed { reloadHistory() }  // messages sent while we were away are lost
/// }
/// ```
///
/// New values may be added in later versions (stream history will add seamless ones), so a `switch` over
/// them needs a `default`.
public struct SubscriptionReconnect: Sendable, Hashable, CustomStringConvertible {
    private let name: String

    private init(_ name: String) { self.name = name }

    /// The client sent `subscribe` again and the server confirmed it: a new server subscription. Whatever was
    /// broadcast while the client was away is lost; refetch what the app shows. Also the count in
    /// ``SubscriptionState/subscribed(confirmations:)`` went up.
    public static let resubscribed = SubscriptionReconnect("resubscribed")
    /// AnyCable restored the session with this subscription (``CableWireProtocol/anyCableExtended``): no
    /// `subscribe` was sent and the count of confirmations stayed. The server kept the subscription's state,
    /// but broadcasts sent while the client was away are not replayed (that takes AnyCable's stream history,
    /// which this client does not request yet): refetch unless nothing can have been sent.
    public static let restored = SubscriptionReconnect("restored")

    /// `resubscribed` or `restored`.
    public var description: String { name }
}
