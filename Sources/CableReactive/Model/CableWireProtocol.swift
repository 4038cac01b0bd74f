/// The Action Cable wire protocol a client offers in `Sec-WebSocket-Protocol`.
///
/// - ``actionCable`` (the default): `actioncable-v1-json`, what Rails and AnyCable speak, plus the
///   `actioncable-unsupported` sentinel the Rails JS client offers last. A server that picks the sentinel
///   knows none of our protocols, and the client stops (``CableStopReason/unsupportedProtocol``).
/// - ``anyCableExtended``: AnyCable's `actioncable-v1-ext-json` (AnyCable 1.4 and later), offered alone,
///   because AnyCable walks its own list (plain first) and would pick the plain protocol from an offer of
///   both. On a session that negotiated it, the client keeps the session id from the welcome and presents it
///   on the next attempt (`X-AnyCable-Restore-SID`), so the server can restore the session and its
///   subscriptions without a `subscribe` each, and it answers every ping with a pong, so the server can tell a
///   dead client. A server that answers with no protocol (Rails, which knows none of the offer) or with
///   the plain one gets a plain Action Cable session: nothing is restored, everything is resubscribed.
///
/// ```swift
/// var options = CableOptions()
/// options.wireProtocol = .anyCableExtended
/// let client = try ActionCableClient(url: url, options: options)
/// ```
///
/// Whether a subscription was restored or subscribed again after a reconnect is
/// ``ChannelSubscription/lastReconnect``.
public struct CableWireProtocol: Sendable, Hashable, CustomStringConvertible {
    /// The subprotocol's name: `actioncable-v1-json` or `actioncable-v1-ext-json`.
    public let name: String

    private init(_ name: String) { self.name = name }

    /// `actioncable-v1-json`: Rails Action Cable and AnyCable.
    public static let actionCable = CableWireProtocol("actioncable-v1-json")
    /// `actioncable-v1-ext-json`: AnyCable's extended protocol (session recovery, pongs).
    public static let anyCableExtended = CableWireProtocol("actioncable-v1-ext-json")

    /// What the server picks when it knows none of the protocols offered (the Rails JS client's sentinel).
    static let unsupportedSentinel = "actioncable-unsupported"

    /// The `Sec-WebSocket-Protocol` offer, in order of preference.
    var offer: [String] {
        self == .actionCable ? [name, Self.unsupportedSentinel] : [name]
    }

    /// The protocol's name.
    public var description: String { name }
}
