/// What the last reconnect did to a subscription, from ``ChannelSubscription/lastReconnect``: whether
/// messages broadcast while the client was away may be missing.
///
/// ```swift
/// let watch = room.lastReconnect.observe { reconnect in
///     if let reconnect, reconnect.mayHaveMissedMessages { reloadHistory() }
/// }
/// ```
///
/// | value | what happened | missed messages |
/// |---|---|---|
/// | ``resubscribed`` | a new server subscription (plain Action Cable, or nothing to replay from) | lost: reload |
/// | ``restored`` | AnyCable restored the subscription, but it has seen no stream positions to replay from | lost: reload |
/// | ``recovering`` | AnyCable is replaying what was missed (restored or resubscribed) | wait for the next value |
/// | ``recovered`` | AnyCable replayed every stream since the last message seen: each message once, in order | none |
/// | ``recoveredWithGaps`` | AnyCable replayed, but some messages could not be delivered in order (counted in `droppedCount`) or were not in the replay | lost: reload |
/// | ``historyRejected`` | AnyCable could not replay (its history expired, or its epoch changed) | lost: reload |
///
/// Only ``CableWireProtocol/anyCableExtended`` sessions restore and replay; a subscription replays when it
/// has seen messages with stream positions (AnyCable with its broker on). New values may be added in later
/// versions, so a `switch` over them needs a `default`.
public struct SubscriptionReconnect: Sendable, Hashable, CustomStringConvertible {
    private let name: String

    private init(_ name: String) { self.name = name }

    /// The client sent `subscribe` again: a new server subscription (the count in
    /// ``SubscriptionState/subscribed(confirmations:)`` goes up once the server confirms it), and nothing to
    /// replay from. Whatever was broadcast while the client was away is lost.
    public static let resubscribed = SubscriptionReconnect("resubscribed")
    /// AnyCable restored the session with this subscription: no `subscribe` was sent and the count of
    /// confirmations stayed, but the subscription has seen no stream positions, so nothing is replayed.
    public static let restored = SubscriptionReconnect("restored")
    /// A replay of each stream since the last message seen was requested; ``recovered``, ``recoveredWithGaps`` or
    /// ``historyRejected`` follows. Live messages past a gap wait for it, so the order holds.
    public static let recovering = SubscriptionReconnect("recovering")
    /// AnyCable confirmed the replay: the missed messages were delivered, each once and in stream order.
    public static let recovered = SubscriptionReconnect("recovered")
    /// AnyCable confirmed the replay, but it skipped a gap: what waited for it passed its bound (4,096
    /// messages, or four buffers if more, and 8 MiB) and went out first, so replayed messages that came later
    /// were counted in ``CableMessages/droppedCount`` instead of delivered out of order; or the replay ended
    /// without messages the live ones had passed. Some messages are missing: reload.
    public static let recoveredWithGaps = SubscriptionReconnect("recovered_with_gaps")
    /// AnyCable rejected the replay (its history no longer reaches back that far, or its epoch changed):
    /// what was broadcast while the client was away is lost.
    public static let historyRejected = SubscriptionReconnect("history_rejected")

    /// Whether messages broadcast while the client was away may be missing: ``resubscribed``, ``restored``,
    /// ``recoveredWithGaps`` and ``historyRejected``. `false` for ``recovered``, and for ``recovering``, whose
    /// outcome follows.
    public var mayHaveMissedMessages: Bool { self != .recovered && self != .recovering }

    /// `resubscribed`, `restored`, `recovering`, `recovered`, `recovered_with_gaps` or `history_rejected`.
    public var description: String { name }
}
