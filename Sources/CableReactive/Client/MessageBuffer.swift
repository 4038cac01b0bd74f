import Dispatch
import Signals

/// One subscription's bounded message buffer: filled by the client's network thread, emptied by one consumer
/// at a time (an async loop or an observer). Pushing never blocks; when full, the oldest message is dropped
/// and counted.
@usableFromInline
final class MessageBuffer: Sendable {
    private struct State {
        var buffer: MessageRing
        var finished = false
        var waiter: CheckedContinuation<JSONValue?, Never>?
        var consumer: UInt64?
        var nextConsumer: UInt64 = 0
        var observer: Observer?
        var overflowing = false
        var episodeDrops = 0
        /// Messages handed to the consumer, kept (one reference) until the network thread's next push
        /// releases them: see ``push(contentsOf:)``. At most as many as the buffer held since that push.
        var consumed: [JSONValue] = []

        /// Takes the oldest message for the consumer.
        mutating func take() -> JSONValue? {
            guard let message = buffer.popFirst() else { return nil }
            if !finished { consumed.append(message) }  // after the end no push comes to release it
            return message
        }
    }

    private struct Observer: Sendable {
        let id: UInt64
        let executor: CallbackExecutor
        let deliver: @Sendable (JSONValue) -> Void
        let finish: @Sendable () -> Void
        var draining = false
    }

    private let state: Locked<State>
    let serial: Int
    let host: String
    /// How many messages a ``DeliveryBatch`` stages before handing them over: half the buffer, so that
    /// staging never costs a drop while the consumer keeps up.
    let handOverThreshold: Int

    init(capacity: Int, serial: Int, host: String) {
        state = Locked(State(buffer: MessageRing(limit: capacity)))
        self.serial = serial
        self.host = host
        handOverThreshold = max(1, capacity / 2)
    }

    var droppedCount: Int { state.withLock { $0.buffer.droppedCount } }

    /// How many consumed messages wait for the network thread's next push to release them (for tests).
    var consumedAwaitingRelease: Int { state.withLock { $0.consumed.count } }

    /// Whether a consumer is suspended waiting for a message (for tests).
    var hasWaiter: Bool { state.withLock { $0.waiter != nil } }

    /// Adds a message. Runs on the network thread; never blocks.
    func push(_ message: JSONValue) {
        push(contentsOf: CollectionOfOne(message))
    }

    /// Adds messages in order, under one lock, and wakes the consumer once. When full, each new message
    /// drops the oldest; an overflow episode logs one WARN. Runs on the network thread; never blocks.
    func push(contentsOf messages: some Collection<JSONValue>) {
        var warn = false
        // The messages the consumer is done with are released here, on the thread that allocated them:
        // glibc frees another thread's memory under that thread's arena lock, and a consumer on another
        // core freeing every message contended with this thread's allocations (an unpinned CableBench ran at
        // half speed and buffered hundreds of MB).
        var retired: [JSONValue] = []  // released after the lock
        let action = state.withLock { state -> PushAction in
            if state.consumed.count > 8 {
                swap(&retired, &state.consumed)
            } else {
                state.consumed.removeAll(keepingCapacity: true)  // a few: not worth a new array
            }
            guard !state.finished else { return .none }
            for message in messages where state.buffer.push(message) {
                state.episodeDrops += 1
                if !state.overflowing {
                    state.overflowing = true
                    warn = true
                }
            }
            if let waiter = state.waiter, let first = state.take() {
                state.waiter = nil
                return .resume(waiter, first)
            }
            return Self.claimObserverDrain(&state)
        }
        if warn {
            CableLog.emit(LogEvent(level: .warn, name: "buffer_overflow", fields: [.subscription(serial)]), host: host)
        }
        run(action)
    }

    /// Ends the stream: the consumer gets what is buffered, then the end.
    func finish() {
        var retired: [JSONValue] = []  // released after the lock
        let action = state.withLock { state -> PushAction in
            guard !state.finished else { return .none }
            state.finished = true
            swap(&retired, &state.consumed)  // no more pushes will release them
            if let waiter = state.waiter {
                state.waiter = nil
                return .resume(waiter, state.take())
            }
            return Self.claimObserverDrain(&state)
        }
        run(action)
    }

    private enum PushAction {
        case none
        case resume(CheckedContinuation<JSONValue?, Never>, JSONValue?)
        case drain(Observer)
    }

    private static func claimObserverDrain(_ state: inout State) -> PushAction {
        guard var observer = state.observer, !observer.draining else { return .none }
        observer.draining = true
        state.observer = observer
        return .drain(observer)
    }

    private func run(_ action: PushAction) {
        switch action {
        case .none: break
        case .resume(let waiter, let message): waiter.resume(returning: message)
        case .drain(let observer): observer.executor.run { self.drain(observer.id) }
        }
    }

    private func drain(_ id: UInt64) {
        while true {
            let step = state.withLock { state -> (Observer, JSONValue?)? in
                guard var observer = state.observer, observer.id == id else { return nil }
                if let message = state.take() { return (observer, message) }
                endEpisodeIfCaughtUp(&state)
                if state.finished {
                    state.observer = nil
                    state.consumer = nil
                    return (observer, nil)
                }
                observer.draining = false
                state.observer = observer
                return nil
            }
            guard let (observer, message) = step else { return }
            if let message { observer.deliver(message) } else { return observer.finish() }
        }
    }

    private func endEpisodeIfCaughtUp(_ state: inout State) {
        guard state.overflowing, state.buffer.isEmpty else { return }
        state.overflowing = false
        state.episodeDrops = 0
    }

    // MARK: consumers

    /// Claims the single consumer slot; nil if another consumer holds it.
    func claim() -> UInt64? {
        let claimed = state.withLock { state -> UInt64? in
            guard state.consumer == nil else { return nil }
            state.nextConsumer += 1
            state.consumer = state.nextConsumer
            return state.nextConsumer
        }
        if claimed == nil {
            CableLog.emit(
                LogEvent(level: .warn, name: "concurrent_collection", fields: [.subscription(serial)]), host: host)
        }
        return claimed
    }

    func release(_ consumer: UInt64) {
        let waiter = state.withLock { state -> CheckedContinuation<JSONValue?, Never>? in
            guard state.consumer == consumer else { return nil }
            state.consumer = nil
            if state.observer?.id == consumer { state.observer = nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next message for `consumer`, waiting if none is buffered; nil at the end or on cancellation.
    @usableFromInline
    func next(for consumer: UInt64) async -> JSONValue? {
        if let ready = poll(consumer) { return ready.message }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Poll? in
                    if let polled = Self.poll(&state, consumer) { return polled }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready.message) }
            }
        } onCancel: {
            release(consumer)
        }
    }

    /// A message taken without waiting; `message` is nil at the end.
    @usableFromInline
    struct Poll {
        @usableFromInline var message: JSONValue?
    }

    /// The next message for `consumer` if one is buffered or the stream has ended; nil if it must wait.
    @usableFromInline
    func poll(_ consumer: UInt64) -> Poll? {
        state.withLock { Self.poll(&$0, consumer) }
    }

    private static func poll(_ state: inout State, _ consumer: UInt64) -> Poll? {
        guard state.consumer == consumer else { return Poll(message: nil) }
        if let message = state.take() { return Poll(message: message) }
        if state.overflowing {
            state.overflowing = false
            state.episodeDrops = 0
        }
        return state.finished ? Poll(message: nil) : nil
    }

    /// Makes `deliver` the consumer, called on `queue` for each message; nil if another consumer holds the slot.
    func attach(
        executor: CallbackExecutor,
        deliver: @escaping @Sendable (JSONValue) -> Void,
        finish: @escaping @Sendable () -> Void
    ) -> UInt64? {
        guard let id = claim() else { return nil }
        let action = state.withLock { state -> PushAction in
            state.observer = Observer(id: id, executor: executor, deliver: deliver, finish: finish)
            return state.buffer.isEmpty && !state.finished ? .none : Self.claimObserverDrain(&state)
        }
        run(action)
        return id
    }
}
