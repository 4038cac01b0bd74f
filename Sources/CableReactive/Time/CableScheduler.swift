import Dispatch
import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The client's source of time: when it is, and running work later. Injected so that every timing rule can
/// be tested without sleeping (see `ManualScheduler` in CableTesting).
///
/// Implementation requirements: ``schedule(after:_:)`` never runs `work` synchronously and never blocks;
/// `work` runs once, later, unless cancelled first. ``now`` is monotonic and keeps counting while the device
/// sleeps, so that a connection that died during a suspension is found stale as soon as the app runs again.
public protocol CableScheduler: Sendable {
    /// Monotonic seconds since an arbitrary origin, counting the time the device slept.
    var now: TimeInterval { get }

    /// Runs `work` after `delay` seconds unless the returned token is cancelled first.
    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork

    /// Runs `work` soon, never synchronously; work passed in order runs in order, one at a time.
    ///
    /// The client publishes state changes and runs message observers through this unless it was given a
    /// callback queue. The default runs on a serial queue shared by every client.
    func perform(_ work: @escaping @Sendable () -> Void)
}

extension CableScheduler {
    /// Runs `work` soon, in call order, on a serial queue shared by all schedulers that keep this default.
    public func perform(_ work: @escaping @Sendable () -> Void) {
        sharedCallbackQueue.async(execute: work)
    }
}

private let sharedCallbackQueue = DispatchQueue(label: "CableReactive.callbacks")

/// A cancellable piece of scheduled work.
public protocol ScheduledWork: Sendable {
    /// Stops the work from running, if it has not started. Idempotent.
    func cancel()
}

/// The production scheduler: Dispatch timers on a global queue, a serial callback queue, and a clock that keeps
/// counting while the device sleeps.
///
/// **Sleep.** An iOS app is suspended in the background and the device sleeps; clocks based on uptime
/// (`DispatchTime`, `CLOCK_UPTIME_RAW`) stop meanwhile. ``now`` reads `CLOCK_MONOTONIC` on Apple platforms and
/// `CLOCK_BOOTTIME` on Linux, which count the sleep, and every timer has two deadlines: on the uptime clock
/// and on the wall clock (`DispatchWallTime`), and runs at the first to pass. After a sleep the wall deadline
/// has passed and the stale watchdog runs at once, finds the silence as long as it really was, and reconnects;
/// a wall clock set back by the user still leaves the uptime deadline on time.
public struct DispatchScheduler: CableScheduler {
    private let queue: DispatchQueue
    private let callbackQueue: DispatchQueue

    /// A scheduler that runs timers on `queue` and ``perform(_:)`` work on a new serial queue.
    public init(queue: DispatchQueue = .global()) {
        self.queue = queue
        callbackQueue = DispatchQueue(label: "CableReactive.callbacks", target: queue)
    }

    /// Runs `work` soon, in call order, on this scheduler's serial callback queue.
    public func perform(_ work: @escaping @Sendable () -> Void) {
        callbackQueue.async(execute: work)
    }

    /// Monotonic seconds that include the time the device slept.
    public var now: TimeInterval {
        var time = timespec()
        #if canImport(Darwin)
            let clock = CLOCK_MONOTONIC  // counts sleep; CLOCK_UPTIME_RAW does not
        #else
            let clock = CLOCK_BOOTTIME  // counts suspend; CLOCK_MONOTONIC does not
        #endif
        guard clock_gettime(clock, &time) == 0 else { return Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Runs `work` on the scheduler's queue after `delay` seconds of uptime or of wall-clock time, whichever
    /// passes first, unless cancelled first.
    public func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        let once = OnceWork(work)
        let item = DispatchWorkItem { once.run() }
        let delay = max(delay, 0)
        queue.asyncAfter(deadline: .now() + delay, execute: item)
        queue.asyncAfter(wallDeadline: .now() + delay, execute: item)
        return DispatchScheduledWork(item: item, once: once)
    }
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

private struct DispatchScheduledWork: ScheduledWork, @unchecked Sendable {
    // DispatchWorkItem is thread-safe (cancel may be called from any thread) but not marked Sendable on Linux.
    let item: DispatchWorkItem
    let once: OnceWork
    func cancel() {
        item.cancel()
        once.cancel()
    }
}
