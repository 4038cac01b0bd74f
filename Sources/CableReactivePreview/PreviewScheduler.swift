import CableReactive
import Dispatch
import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// A ``CablePreview``'s scheduler: Signals' `VirtualTimeScheduler` (the package's one virtual time), whose
/// time stands still until ``advance(by:)``, and whose ``perform(_:)`` queue (the preview client's callbacks
/// and every event of the preview transport, in one FIFO) runs on the main actor: at the next turn of the
/// main queue, or at once in ``drain()``.
///
/// Why the main actor: a preview's view model is main-actor code, so its observers can assume the main actor;
/// and one executor running one queue gives the transport's events their order and serial delivery, with no
/// thread of our own and no lock held while they run. (The main actor's executor is the main queue. In an app
/// that is the main thread; under `swift test` on Linux, whose entry point calls `dispatch_main()`, it is a
/// worker thread that services the main queue, and `Thread.isMainThread` is false there.)
///
/// Re-entrancy: a drain never runs inside another. Work run by a drain may queue more work (the outer drain
/// runs it, in order); a ``drain()`` or ``advance(by:)`` called from such work returns false at once. Both are
/// main-actor methods, and the posted drain runs on the main queue, so two drains never run at once either.
final class PreviewScheduler: CableScheduler {
    private struct Drain: Sendable {
        /// A main-queue drain is posted and has not started.
        var posted = false
        /// A drain is running (on the main thread).
        var running = false
    }

    let clock = VirtualTimeScheduler()
    private let drainState = Locked(Drain())

    var now: TimeInterval { clock.now }

    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        clock.schedule(after: delay, work)
    }

    /// Queues `work` behind everything queued before, and posts one drain to the main queue if none is posted.
    /// Never runs `work` here, never blocks: the client calls this under its lock.
    func perform(_ work: @escaping @Sendable () -> Void) {
        clock.perform(work)
        let post = drainState.withLock { drain -> Bool in
            defer { drain.posted = true }
            return !drain.posted
        }
        guard post else { return }
        DispatchQueue.main.async { [self] in
            // Cleared before draining: work queued from here on is run by this drain or posts another.
            drainState.withLock { $0.posted = false }
            MainActor.assumeIsolated { _ = drain() }  // the main queue is the main actor's executor
        }
    }

    /// Runs the queue until it is empty, including what the work queues. Returns false, having run nothing,
    /// when called from inside a drain.
    @MainActor
    @discardableResult
    func drain() -> Bool {
        exclusively { clock.flush() }
    }

    /// Moves virtual time forward by `interval`, running the timers that fall due in deadline order, with the
    /// queue drained before the first and after each. Returns false, having done nothing, inside a drain.
    @MainActor
    @discardableResult
    func advance(by interval: TimeInterval) -> Bool {
        exclusively { clock.advance(by: interval) }
    }

    private func exclusively(_ body: () -> Void) -> Bool {
        let entered = drainState.withLock { drain -> Bool in
            guard !drain.running else { return false }
            drain.running = true
            return true
        }
        guard entered else { return false }
        defer { drainState.withLock { $0.running = false } }
        body()
        return true
    }
}
