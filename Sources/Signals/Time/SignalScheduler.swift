import Dispatch

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// A source of time: when it is, and running work later. The time operators (``Signal/debounce(for:scheduler:)``,
/// ``Signal/throttle(for:scheduler:latest:)``, ``Signal/delay(for:scheduler:)``, ``Signal/timeout(_:scheduler:fallback:)``)
/// and CableReactive's client take one, so that every timing rule can be tested without sleeping: pass a
/// ``DispatchScheduler`` in the app and a ``VirtualTimeScheduler`` in tests.
///
/// Not named `Scheduler`: Combine has a `Scheduler` protocol, and apps import both modules.
///
/// ```swift
/// let scheduler = VirtualTimeScheduler()
/// let query = MutableEventStream<String>()
/// let token = query.debounce(for: 0.3, scheduler: scheduler).observe { print("search", $0) }
/// query.send("ca")
/// query.send("cab")
/// scheduler.advance(by: 0.3)                        // Prints: search cab
/// ```
///
/// Implementation requirements: ``schedule(after:_:)`` never runs `work` synchronously and never blocks;
/// `work` runs once, later, unless cancelled first. ``now`` is monotonic and keeps counting while the device
/// sleeps, so that a connection that died during a suspension is found stale as soon as the app runs again.
/// Signals calls ``now`` and ``schedule(after:_:)`` outside its locks, and cancels work outside them too.
public protocol SignalScheduler: Sendable {
    /// Monotonic seconds since an arbitrary origin, counting the time the device slept.
    var now: TimeInterval { get }

    /// Runs `work` after `delay` seconds unless the returned token is cancelled first.
    ///
    /// Cancelling the token releases `work` and what it captures.
    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork

    /// Runs `work` soon, never synchronously; work passed in order runs in order, one at a time.
    ///
    /// CableReactive's client publishes state changes and runs message observers through this unless it was
    /// given a callback queue. The default runs on a serial queue shared by every scheduler that keeps it.
    func perform(_ work: @escaping @Sendable () -> Void)
}

extension SignalScheduler {
    /// Runs `work` soon, in call order, on a serial queue shared by all schedulers that keep this default.
    public func perform(_ work: @escaping @Sendable () -> Void) {
        sharedCallbackQueue.async(execute: work)
    }
}

private let sharedCallbackQueue = DispatchQueue(label: "Signals.callbacks")

/// A cancellable piece of scheduled work: what ``SignalScheduler/schedule(after:_:)`` returns.
public protocol ScheduledWork: Sendable {
    /// Stops the work from running, if it has not started, and releases it. Idempotent.
    func cancel()
}

/// Work that runs at most once, however many deadlines call ``run()``.
package struct OnceWork: Sendable {
    private let work: Locked<(@Sendable () -> Void)?>

    package init(_ work: @escaping @Sendable () -> Void) { self.work = Locked(work) }

    /// Runs the work if it has neither run nor been cancelled. Returns whether it ran.
    @discardableResult
    package func run() -> Bool {
        let taken = work.withLock { work in
            defer { work = nil }
            return work
        }
        guard let taken else { return false }
        taken()
        return true
    }

    /// Forgets the work (and what it captures) without running it.
    package func cancel() { work.withLock { $0 = nil } }
}
