#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// A scheduler whose time moves only when a test says so: timers wait for ``advance(by:)``, ``perform(_:)``
/// work waits for ``flush()``. Every timing rule (a debounce, a throttle, a reconnection backoff) can be
/// tested without sleeping. The one implementation of virtual time in the package: CableTesting's
/// `ManualScheduler` and CableReactivePreview's preview clock are this type.
///
/// Work scheduled for the same moment runs in the order it was scheduled. Work runs outside the scheduler's
/// lock, on the thread that advances time, so work may schedule more work; nothing here ever runs work
/// synchronously inside ``schedule(after:_:)`` or ``perform(_:)`` (the ``SignalScheduler`` requirement), so
/// both may be called under any lock. Every requested delay is recorded in ``history``, so a test can assert
/// what the code under test asked for, and ``pendingCount`` shows what is still armed.
///
/// ```swift
/// let scheduler = VirtualTimeScheduler()
/// let typing = MutableEventStream<String>()
/// let token = typing.throttle(for: 2, scheduler: scheduler, latest: true).observe { print($0) }
/// typing.send("h")                                  // Prints: h
/// typing.send("he")
/// #expect(scheduler.pendingDelays == [2])
/// scheduler.advance(by: 2)                          // Prints: he
/// ```
public final class VirtualTimeScheduler: SignalScheduler, Sendable {
    private struct Item: Sendable {
        let id: UInt64
        let deadline: TimeInterval
        let work: @Sendable () -> Void
    }

    private struct State: Sendable {
        var now: TimeInterval = 0
        var items: [Item] = []
        var nextID: UInt64 = 0
        var history: [TimeInterval] = []
        var callbacks: [@Sendable () -> Void] = []
    }

    private let state = Locked(State())

    /// A scheduler at time zero with no work queued.
    public init() {}

    /// The current time in seconds; it moves only with ``advance(by:)``, ``advance(to:)``, ``suspend(for:)``
    /// and ``run(limit:)``.
    public var now: TimeInterval { state.withLock { $0.now } }

    /// Every delay ever requested, in order.
    public var history: [TimeInterval] { state.withLock { $0.history } }

    /// The delays (from now) of the work still pending, soonest first.
    public var pendingDelays: [TimeInterval] {
        state.withLock { state in state.items.map { $0.deadline - state.now }.sorted() }
    }

    /// How many pieces of timed work are pending (scheduled, neither run nor cancelled).
    public var pendingCount: Int { state.withLock { $0.items.count } }

    /// How many ``perform(_:)`` callbacks wait for ``flush()``.
    public var pendingCallbacks: Int { state.withLock { $0.callbacks.count } }

    /// Queues `work` to run when the time reaches `now + delay`; records the delay in ``history``.
    ///
    /// Cancelling the returned token removes the work, and releases what it captures, at once.
    public func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.history.append(delay)
            state.items.append(Item(id: state.nextID, deadline: state.now + max(delay, 0), work: work))
            return state.nextID
        }
        return Token(scheduler: self, id: id)
    }

    /// Queues `work` until the next ``flush()`` (or ``advance(by:)``), which runs it on the calling thread.
    public func perform(_ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.callbacks.append(work) }
    }

    /// Runs the queued ``perform(_:)`` work, in order, on the calling thread, including work it queues.
    public func flush() {
        while let work = state.withLock({ state -> (@Sendable () -> Void)? in
            state.callbacks.isEmpty ? nil : state.callbacks.removeFirst()
        }) {
            work()
        }
    }

    /// Moves time forward by `interval`, running every piece of work that falls due, in deadline order, on the
    /// calling thread, and the ``perform(_:)`` queue before the first and after each.
    public func advance(by interval: TimeInterval) {
        let target = state.withLock { $0.now + max(interval, 0) }
        advance(to: target)
    }

    /// Moves time to `deadline` (never backwards), running the work that falls due on the way; each piece sees
    /// ``now`` at its own deadline.
    public func advance(to deadline: TimeInterval) {
        flush()
        while let item = popDue(before: deadline) {
            item.work()
            flush()
        }
        state.withLock { $0.now = max($0.now, deadline) }
    }

    /// Models the device sleeping for `interval` while the app is suspended: time jumps forward at once (a
    /// ``SignalScheduler``'s clock counts sleep, as ``DispatchScheduler``'s does), then the work that fell due
    /// meanwhile runs, late, in deadline order, each piece seeing the time of waking up.
    ///
    /// ```swift
    /// scheduler.suspend(for: 600)  // ten minutes in the background: every timer runs at once, late
    /// ```
    public func suspend(for interval: TimeInterval) {
        flush()
        let woken = state.withLock { state -> TimeInterval in
            state.now += max(interval, 0)
            return state.now
        }
        advance(to: woken)
    }

    /// Runs pending work until idle: moves time to each deadline in turn until nothing is pending or `limit`
    /// pieces of work have run. Something that always keeps a timer armed (a connected client's watchdog)
    /// never becomes idle, so prefer ``advance(by:)`` for it.
    ///
    /// - Returns: how many pieces of work ran.
    @discardableResult
    public func run(limit: Int = 1000) -> Int {
        var ran = 0
        flush()
        while ran < limit, let item = popDue(before: .infinity) {
            item.work()
            flush()
            ran += 1
        }
        return ran
    }

    private func popDue(before deadline: TimeInterval) -> Item? {
        state.withLock { state -> Item? in
            guard
                let index = state.items.indices.min(by: {
                    (state.items[$0].deadline, state.items[$0].id) < (state.items[$1].deadline, state.items[$1].id)
                }), state.items[index].deadline <= deadline
            else { return nil }
            let item = state.items.remove(at: index)
            state.now = max(state.now, item.deadline)
            return item
        }
    }

    fileprivate func cancel(_ id: UInt64) {
        // The removed work (and what it captured) is released after the lock.
        let removed = state.withLock { state -> [Item] in
            guard let index = state.items.firstIndex(where: { $0.id == id }) else { return [] }
            return [state.items.remove(at: index)]
        }
        _ = removed
    }

    private struct Token: ScheduledWork {
        let scheduler: VirtualTimeScheduler
        let id: UInt64
        func cancel() { scheduler.cancel(id) }
    }
}
