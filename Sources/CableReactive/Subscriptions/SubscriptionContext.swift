import Signals

/// What every subscription of one client shares, held once by the client instead of in each handle and route:
/// the buffer size, the log, the callback queue, the coders, and a weak reference to the engine (a handle must
/// not keep its client alive).
final class SubscriptionContext: Sendable {
    let bufferSize: Int
    /// The largest command a handle sends (``CableOptions/maxOutgoingMessageSize``).
    let maxOutgoingMessageSize: Int
    /// The client's encoder and decoder, made from ``CableOptions/coding``: what `perform` and
    /// `messages(as:)` use when the call passes none.
    let coders: CableCoders
    /// How many messages a ``DeliveryBatch`` stages for one subscription before handing them over: half the
    /// buffer, so that staging never costs a drop while the consumers keep up.
    let handOverThreshold: Int
    let log: LogContext
    let callbacks: CallbackExecutor
    /// The client's scheduler, for `info()` timeouts; nil for a closed client's handles.
    let scheduler: (any CableScheduler)?
    private let ownerRef = Locked(WeakOwner())
    /// The stream positions (AnyCable) of this client's subscriptions, by serial, so that every route that
    /// replaces another keeps its sequencer; the ``SubscriptionTable`` makes and forgets them, the I/O thread
    /// sequences messages here. One lock for all, and only a subscription that saw a positioned message or
    /// awaits a replay has an entry: a Rails subscription pays for no lock of its own.
    private let sequencers = Locked<[Int: StreamSequencer]>([:])
    /// The spare handle of each lingering subscription, by serial (``CableOptions/unsubscribeDelay``): where
    /// messages go that a read staged for the released handles, whose route it loaded before the release.
    private let heirs = Locked<[Int: HandleSink]>([:])
    /// The client's engine; nil once it is gone, and for the handles a closed client gives out.
    var owner: (any SubscriptionOwner)? { ownerRef.withLock { $0.owner } }

    init(
        bufferSize: Int, log: LogContext, callbacks: CallbackExecutor, coders: CableCoders = .standard,
        scheduler: (any CableScheduler)? = nil, maxOutgoingMessageSize: Int = 64 << 10
    ) {
        self.bufferSize = bufferSize
        self.maxOutgoingMessageSize = maxOutgoingMessageSize
        self.scheduler = scheduler
        self.coders = coders
        handOverThreshold = max(1, bufferSize / 2)
        self.log = log
        self.callbacks = callbacks
    }

    /// Runs `body` on subscription `serial`'s sequencer, made if it has none.
    func withSequencer<R>(of serial: Int, _ body: (inout StreamSequencer) -> R) -> R {
        sequencers.withLock { body(&$0[serial, default: StreamSequencer(limits: .forBuffer(bufferSize))]) }
    }

    /// Subscription `serial`'s last delivered position in each stream, by stream name.
    func positions(of serial: Int) -> [StreamPosition] {
        sequencers.withLock { $0[serial]?.positions ?? [] }.sorted { $0.stream < $1.stream }
    }

    /// Whether subscription `serial` has seen stream positions.
    func hasStreamPositions(_ serial: Int) -> Bool {
        sequencers.withLock { $0[serial].map { !$0.marks.isEmpty } ?? false }
    }

    /// Ends the awaited replay of subscription `serial`: what waited for it, in stream order.
    func historyEnded(_ serial: Int) -> [StreamSequencer.Ready] {
        sequencers.withLock { $0[serial]?.historyEnded() ?? [] }
    }

    /// The session ended: every sequencer stops waiting for what it asked.
    func sessionEnded() {
        sequencers.withLock { table in
            for index in table.indices { table.values[index].sessionEnded() }
        }
    }

    /// How many subscriptions have a sequencer (for tests).
    var sequencerCount: Int { sequencers.withLock { $0.count } }

    /// Forgets subscription `serial`'s positions and heir: it ended.
    func forget(_ serial: Int) {
        _ = sequencers.withLock { $0.removeValue(forKey: serial) }
        _ = heirs.withLock { $0.removeValue(forKey: serial) }
    }

    /// Makes `spare` the heir of subscription `serial`'s released handles (it lingers).
    func setHeir(_ spare: HandleSink, of serial: Int) {
        heirs.withLock { $0[serial] = spare }
    }

    /// The handle that inherits what reaches subscription `serial`'s ended handles, if it lingered.
    func heir(of serial: Int) -> HandleSink? { heirs.withLock { $0[serial] } }

    /// Called once, by the engine that owns this context, at the end of its init.
    func attach(_ owner: any SubscriptionOwner) {
        ownerRef.withLock { $0.owner = owner }
    }
}

/// What a handle asks of its client, through a weak reference (a handle must not keep its client alive).
protocol SubscriptionOwner: AnyObject, Sendable {
    /// Ends the handle `sink` of subscription `serial`; the last handle's release ends the server subscription.
    func release(identifier: String, serial: Int, sink: UInt64)
    /// Sends the command `text` if the subscription is confirmed on the live connection and `sink` shares it.
    func send(_ text: String, identifier: String, sink: UInt64) -> Bool
    /// How many `subscribe` commands for `identifier` went out on the live connection.
    func subscribesSent(identifier: String) -> Int
    /// Handle `sink`'s messages with their positions, routed from now on; nil when it has ended.
    func positionedMessages(identifier: String, sink: UInt64) -> StreamStorage<PositionedMessage>?
    /// Handle `sink` has a consumer of its untyped messages (see ``DeliveryRoute/wantsValues``).
    func readValues(identifier: String, sink: UInt64)
    /// Handle `sink`'s presence, made on first use; nil when it has ended.
    func presence(identifier: String, sink: UInt64) -> PresenceSink?
    /// Joins `identifier`'s presence set as `member` through handle `sink`.
    func join(identifier: String, sink: UInt64, as member: PresenceMember)
    /// Leaves `identifier`'s presence set through handle `sink`.
    func leave(identifier: String, sink: UInt64)
    /// Asks for `identifier`'s presence set; false when the subscription is not live (nothing sent).
    func requestPresence(identifier: String, sink: UInt64) -> Bool
}

/// A weak reference to the client's engine.
struct WeakOwner {
    weak var owner: (any SubscriptionOwner)?
}
