import Signals

/// One server subscription as delivery sees it: its identity, and the handles that share it.
///
/// What the I/O thread delivers a subscription's messages to, from the ``SubscriptionTable``'s published
/// routes. Immutable: when a handle joins or leaves, the table makes a new route and publishes it, so the I/O
/// thread reads a route's handles without a lock. A read that staged messages for the old route hands them to
/// the old set of handles: a handle that joined meanwhile starts with the next read, and one that left is
/// already finished.
final class DeliveryRoute: Sendable {
    let serial: Int
    let identifier: String
    let context: SubscriptionContext
    var bufferSize: Int { context.bufferSize }
    var log: LogContext { context.log }
    var handOverThreshold: Int { context.handOverThreshold }
    /// The handles, in the order they subscribed.
    let sinks: [HandleSink]
    /// Their message streams, what ``deliver(_:wakes:)`` sends to: one pointer hop fewer per hand-over than
    /// through each sink, since with many subscriptions taking turns each hop is a likely cache miss.
    private let messageStorages: [StreamStorage<MessageJSON>]
    /// The positioned streams of the handles that asked for them (``ChannelSubscription/messagesWithPositions``).
    private let positionedStorages: [StreamStorage<PositionedMessage>]
    /// Whether a handle reads positions: only then are messages staged with them as well.
    let wantsPositions: Bool
    /// Whether a handle has (or had) a consumer that reads ``JSONValue``s, or reads positions: only then is a
    /// message parsed into a value on the I/O thread; for typed consumers alone it stays text (``MessageJSON``).
    let wantsValues: Bool

    init(serial: Int, identifier: String, context: SubscriptionContext, sinks: [HandleSink] = []) {
        self.serial = serial
        self.identifier = identifier
        self.context = context
        self.sinks = sinks
        messageStorages = sinks.map(\.messages)
        positionedStorages = sinks.compactMap(\.positioned)
        wantsPositions = !positionedStorages.isEmpty
        wantsValues = wantsPositions || sinks.contains { $0.readsValues }
    }

    /// This route as its handles now are (one of them asked for positions, or started reading values).
    func refreshed() -> DeliveryRoute {
        DeliveryRoute(serial: serial, identifier: identifier, context: context, sinks: sinks)
    }

    /// This route with `sink` added.
    func adding(_ sink: HandleSink) -> DeliveryRoute {
        DeliveryRoute(serial: serial, identifier: identifier, context: context, sinks: sinks + [sink])
    }

    /// Stages `message` (from a frame of `size` bytes) for the handles, through the stream sequencer when it
    /// carries a position: a repeat is dropped, a message past a gap waits while a history replay is awaited,
    /// and one that came after its gap was skipped is counted in every handle's `droppedCount`.
    func stage(_ message: MessageJSON, at position: StreamPosition?, size: Int, in batch: DeliveryBatch) {
        guard let position else { return batch.stage(message, at: nil, for: self) }
        let (ready, dropped) = context.withSequencer(of: serial) { sequencer in
            (sequencer.accept(message, at: position, size: size), sequencer.takeDropped())
        }
        if dropped > 0 {
            for storage in messageStorages { storage.countDropped(dropped) }
        }
        for message in ready {
            batch.stage(message.value, at: message.position, for: self)
        }
    }

    /// This route without the handle `id`, and that handle; nil if it is not (or no longer) here.
    func removing(sink id: UInt64) -> (route: DeliveryRoute, removed: HandleSink)? {
        guard let index = sinks.firstIndex(where: { $0.id == id }) else { return nil }
        var rest = sinks
        let removed = rest.remove(at: index)
        let route = DeliveryRoute(serial: serial, identifier: identifier, context: context, sinks: rest)
        return (route, removed)
    }

    func contains(sink id: UInt64) -> Bool { sinks.contains { $0.id == id } }

    /// Hands `messages` to every handle, in order, and the same messages with their positions (`positioned`,
    /// empty unless ``wantsPositions``) to the handles that read positions. Runs in the delivery turn.
    ///
    /// - Returns: how many messages the handles' consumers dropped (summed over the handles).
    @discardableResult
    func deliver(
        _ messages: some Collection<MessageJSON>, positioned: some Collection<PositionedMessage>, wakes: inout WakeList
    ) -> Int {
        var dropped = 0
        var received = false
        for storage in messageStorages {
            guard let count = storage.send(contentsOf: messages, wakes: &wakes) else { continue }  // it ended
            dropped += count
            received = true
        }
        if !positioned.isEmpty {
            for storage in positionedStorages { _ = storage.send(contentsOf: positioned, wakes: &wakes) }
        }
        // Every handle ended after this read loaded the route: if the subscription lingers, its spare (or the
        // handle that took it over) gets what the read staged, after what it got before.
        if !received, let heir = context.heir(of: serial) {
            dropped += heir.messages.send(contentsOf: messages, wakes: &wakes) ?? 0
            if !positioned.isEmpty { _ = heir.positioned?.send(contentsOf: positioned, wakes: &wakes) }
        }
        return dropped
    }

    /// Logs that a hand-over to this subscription dropped `count` messages (never their payloads).
    func logOverflow(_ count: Int) {
        log.emit(LogEvent(level: .warn, name: "buffer_overflow", fields: [.subscription(serial), .count(count)]))
    }
}
