#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// Tuning for an ``ActionCableClient``. The defaults suit Rails and AnyCable servers.
///
/// | option | default | meaning |
/// |---|---|---|
/// | ``staleTimeout`` | 15 s | deadline for the server's welcome, and the longest silence after it (Rails pings every 3 s) |
/// | ``minReconnectDelay`` | 1 s | the first backoff step |
/// | ``maxReconnectDelay`` | 30 s | the backoff ceiling |
/// | ``maxReconnectAttempts`` | `nil` (unlimited) | retries after the first attempt; N allows N + 1 tries |
/// | ``messageBufferSize`` | 128 | messages buffered per consumer of a subscription; the oldest are dropped beyond it |
/// | ``subscribeRetryDelays`` | 5, 10, 20, 30 s | when an unanswered subscribe is sent again (the last step repeats) |
/// | ``unsubscribeDelay`` | 0.3 s | how long the server subscription outlives its last handle, for a new handle on equal params to take over |
/// | ``maxOutgoingMessageSize`` | 64 KiB | the largest command `perform` and `whisper` send; bigger ones return `false` |
/// | ``logLabel`` | `nil` | a name for this client in its log lines (`client=…`) |
/// | ``wireProtocol`` | ``CableWireProtocol/actionCable`` | the protocol offered; ``CableWireProtocol/anyCableExtended`` for AnyCable's session recovery |
/// | ``coding`` | ISO 8601 dates with milliseconds, keys as declared | how `Codable` params, `perform` data and typed messages are encoded and decoded; see ``CableCoding`` |
///
/// Set the options you need in the initializer, or on a variable:
///
/// ```swift
/// let options = CableOptions(staleTimeout: 30, maxReconnectAttempts: 5)  // the rest are the defaults
///
/// var tuned = CableOptions()
/// tuned.staleTimeout = 10
/// tuned.coding.keys = .snakeCase
/// ```
public struct CableOptions: Sendable, Hashable {
    /// Seconds allowed for the welcome after an attempt starts, and the longest silence after the welcome.
    public var staleTimeout: TimeInterval = 15
    /// The first backoff step, in seconds; later steps double up to ``maxReconnectDelay``, each ±25%.
    public var minReconnectDelay: TimeInterval = 1
    /// The longest backoff delay, in seconds.
    public var maxReconnectDelay: TimeInterval = 30
    /// How many retries follow the first attempt before the client stops with `"max_reconnect_attempts"`;
    /// `nil` retries forever.
    public var maxReconnectAttempts: Int?
    /// How many undelivered messages each consumer of a subscription keeps (and how many are held while it
    /// has none); when full, the oldest is dropped and counted.
    public var messageBufferSize: Int = 128
    /// When a subscribe the server has not answered is sent again on the same connection: the n-th re-send
    /// waits the n-th delay (the last one for every later re-send), ±25%. Empty: never re-send (a reconnect
    /// still sends every subscription again). A subscription is never given up on: it stays
    /// ``SubscriptionState/pending`` until the server answers.
    public var subscribeRetryDelays: [TimeInterval] = [5, 10, 20, 30]
    /// Seconds the server subscription stays after its last handle is released (or unsubscribed), in case the
    /// app subscribes to equal params again: a SwiftUI screen whose `.task` restarts, a tab switch, a push
    /// and pop. A handle made within the delay takes the subscription over with the messages that arrived
    /// meanwhile (up to ``messageBufferSize``, the oldest dropped and counted in its `droppedCount`), and
    /// nothing goes on the wire. Otherwise `unsubscribe` goes out when the delay ends.
    ///
    /// The released handle itself ends at once, and its presence join leaves at once. A subscription lingers
    /// only on a live connection the server subscribed on; a disconnect ends it. Without the delay, Rails
    /// (which runs a connection's commands on a worker pool) can take a `subscribe` sent right after an
    /// `unsubscribe` first and drop it, so the new screen waits for the re-send (rails/rails#58698). 0 turns
    /// the linger off. AnyCable's Turbo Streams adapter waits 300 ms too.
    public var unsubscribeDelay: TimeInterval = 0.3
    /// The largest command, in bytes of JSON, that ``ChannelSubscription/perform(_:_:)-(String,JSONValue)``,
    /// ``ChannelSubscription/whisper(_:)-(JSONValue)`` send: a bigger one is not sent, the call
    /// returns `false` and logs `perform_too_big` at WARN with the size and the limit. AnyCable closes a
    /// connection whose client sends more than 64 KiB (its `max_message_size`), which would cost the session and
    /// every subscription on it; Rails has no limit of its own. Inbound messages have the transport's limit
    /// (1 MiB; a bigger one ends the connection as ``CableDisconnect/Kind-swift.struct/messageTooBig(limit:)``).
    public var maxOutgoingMessageSize = 64 << 10
    /// A name for this client in its log lines (`client=chat`), so that two clients' lines can be told apart.
    /// Only ASCII letters, digits, `.`, `_` and `-` are kept (others print as `?`), up to 32 characters.
    public var logLabel: String?
    /// The wire protocol offered: plain Action Cable (the default), or AnyCable's extended protocol, which
    /// restores the session and its subscriptions after a reconnect; see ``CableWireProtocol``.
    public var wireProtocol: CableWireProtocol = .actionCable
    /// How the client encodes `Encodable` params and `perform` data and decodes typed messages: ISO 8601 dates
    /// with milliseconds (`2026-12-02T00:52:17.123Z`, as Rails writes them) and keys as your types declare
    /// them, unless you change it; see ``CableCoding``. A call's own `encoder:` or `decoder:` replaces it.
    public var coding = CableCoding()

    /// The default options: the table in the type's documentation.
    public init() {}

    /// Options with the values given and the defaults (the table in the type's documentation) for the rest.
    ///
    /// ```swift
    /// let options = CableOptions(staleTimeout: 30, maxReconnectAttempts: 5)
    /// let client = try ActionCableClient(url: url, options: options)
    /// ```
    ///
    /// Nothing is checked here: the client's initializer checks every option and throws ``CableError``
    /// `invalidOption` naming the first bad one.
    public init(
        staleTimeout: TimeInterval = 15,
        minReconnectDelay: TimeInterval = 1,
        maxReconnectDelay: TimeInterval = 30,
        maxReconnectAttempts: Int? = nil,
        messageBufferSize: Int = 128,
        subscribeRetryDelays: [TimeInterval] = [5, 10, 20, 30],
        logLabel: String? = nil,
        wireProtocol: CableWireProtocol = .actionCable,
        coding: CableCoding = CableCoding()
    ) {
        self.staleTimeout = staleTimeout
        self.minReconnectDelay = minReconnectDelay
        self.maxReconnectDelay = maxReconnectDelay
        self.maxReconnectAttempts = maxReconnectAttempts
        self.messageBufferSize = messageBufferSize
        self.subscribeRetryDelays = subscribeRetryDelays
        self.logLabel = logLabel
        self.wireProtocol = wireProtocol
        self.coding = coding
    }

    /// Checks every option; construction of a client calls this.
    ///
    /// - Throws: ``CableError`` with code `invalidOption` naming the first bad option.
    package func validate() throws(CableError) {
        func check(_ ok: Bool, _ name: String) throws(CableError) {
            if !ok { throw CableError.invalidOption(name) }
        }
        try check(staleTimeout.isFinite && staleTimeout > 0, "staleTimeout")
        try check(minReconnectDelay.isFinite && minReconnectDelay > 0, "minReconnectDelay")
        try check(maxReconnectDelay.isFinite && maxReconnectDelay > 0, "maxReconnectDelay")
        try check(minReconnectDelay <= maxReconnectDelay, "minReconnectDelay")
        try check((maxReconnectAttempts ?? 0) >= 0, "maxReconnectAttempts")
        try check(messageBufferSize >= 1, "messageBufferSize")
        try check(subscribeRetryDelays.allSatisfy { $0.isFinite && $0 > 0 }, "subscribeRetryDelays")
        try check(unsubscribeDelay.isFinite && unsubscribeDelay >= 0, "unsubscribeDelay")
        try check(maxOutgoingMessageSize >= 1, "maxOutgoingMessageSize")
    }
}
