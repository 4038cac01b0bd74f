import CableReactive
import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// Time that moves only when told to: timers wait for ``advance(by:)``, ``perform(_:)`` work waits for
/// ``flush()``. The engine of CableTesting's `ManualScheduler` (which is this with public names) and of
/// ``CablePreview`` (which runs the ``perform(_:)`` queue on the main thread): one implementation, so that a
/// preview and a test see the same timing rules.
///
/// Work scheduled for the same moment runs in the order it was scheduled. Work runs outside the clock's lock,
/// so work may schedule more work; nothing here ever runs work synchronously inside ``schedule(after:_:)`` or
/// ``perform(_:)`` (the ``CableScheduler`` requirement), so both may be called under any lock.
package final class VirtualClock: CableScheduler, Sendable {
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

    /// A clock at time zero with no work queued.
    package init() {}

    /// The current time in seconds; it moves only with ``advance(by:)``, ``advance(to:)`` and ``suspend(for:)``.
    package var now: TimeInterval { state.withLock { $0.now } }

    /// Every delay ever requested, in order.
    package var history: [TimeInterval] { state.withLock { $0.history } }

    /// The delays (from now) of the work still pending, soonest first.
    package var pendingDelays: [TimeInterval] {
        state.withLock { state in state.items.map { $0.deadline - state.now }.sorted() }
    }

    /// How many pieces of timed work are pending.
    package var pendingCount: Int { state.withLock { $0.items.count } }

    /// How many ``perform(_:)`` callbacks wait for ``flush()``.
    package var pendingCallbacks: Int { state.withLock { $0.callbacks.count } }

    /// Queues `work` to run when the clock reaches `now + delay`; records the delay in ``history``.
    package func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.history.append(delay)
            state.items.append(Item(id: state.nextID, deadline: state.now + max(delay, 0), work: work))
            return state.nextID
        }
        return Token(clock: self, id: id)
    }

    /// Queues `work` until the next ``flush()`` (or ``advance(by:)``), which runs it on the calling thread.
    package func perform(_ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.callbacks.append(work) }
    }

    /// Runs the queued ``perform(_:)`` work, in order, on the calling thread, including work it queues.
    package func flush() {
        while let work = state.withLock({ state -> (@Sendable () -> Void)? in
            state.callbacks.isEmpty ? nil : state.callbacks.removeFirst()
        }) {
            work()
        }
    }

    /// Moves time forward by `interval`, running every piece of work that falls due, in deadline order, and
    /// the ``perform(_:)`` queue before the first and after each.
    package func advance(by interval: TimeInterval) {
        let target = state.withLock { $0.now + max(interval, 0) }
        advance(to: target)
    }

    /// Moves time to `deadline` (never backwards), running the work that falls due on the way.
    package func advance(to deadline: TimeInterval) {
        flush()
        while let item = popDue(before: deadline) {
            item.work()
            flush()
        }
        state.withLock { $0.now = max($0.now, deadline) }
    }

    /// The clock jumps forward by `interval` at once, then the work that fell due meanwhile runs, late, in
    /// deadline order, each piece seeing the time of waking up (a device that slept).
    package func suspend(for interval: TimeInterval) {
        flush()
        let woken = state.withLock { state -> TimeInterval in
            state.now += max(interval, 0)
            return state.now
        }
        advance(to: woken)
    }

    /// Runs pending work, moving time to each deadline, until nothing is pending or `limit` pieces of work
    /// have run.
    ///
    /// - Returns: how many pieces of work ran.
    @discardableResult
    package func run(limit: Int = 1000) -> Int {
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
        state.withLock { $0.items.removeAll { $0.id == id } }
    }

    private struct Token: ScheduledWork {
        let clock: VirtualClock
        let id: UInt64
        func cancel() { clock.cancel(id) }
    }
}
