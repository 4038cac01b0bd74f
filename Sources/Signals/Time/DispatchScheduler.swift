import Dispatch

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

/// The production scheduler: Dispatch timers on a global queue, a serial callback queue, and a clock that keeps
/// counting while the device sleeps.
///
/// **Sleep.** An iOS app is suspended in the background and the device sleeps; clocks based on uptime
/// (`DispatchTime`, `CLOCK_UPTIME_RAW`) stop meanwhile. ``now`` reads `CLOCK_MONOTONIC` on Apple platforms and
/// `CLOCK_BOOTTIME` on Linux, which count the sleep, and every timer has two deadlines: on the uptime clock
/// and on the wall clock (`DispatchWallTime`), and runs at the first to pass. After a sleep the wall deadline
/// has passed and the stale watchdog runs at once, finds the silence as long as it really was, and reconnects;
/// a wall clock set back by the user still leaves the uptime deadline on time.
///
/// Threading: timer work runs on the scheduler's queue (a global concurrent queue by default), so a time
/// operator's observer without a queue of its own is called there.
///
/// ```swift
/// let scheduler = DispatchScheduler()
/// let work = scheduler.schedule(after: 0.5) { print("half a second later") }
/// work.cancel()                                     // or let it run
/// ```
public struct DispatchScheduler: SignalScheduler {
    private let queue: DispatchQueue
    private let callbackQueue: DispatchQueue

    /// A scheduler that runs timers on `queue` and ``perform(_:)`` work on a new serial queue.
    public init(queue: DispatchQueue = .global()) {
        self.queue = queue
        callbackQueue = DispatchQueue(label: "Signals.callbacks", target: queue)
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

private struct DispatchScheduledWork: ScheduledWork, @unchecked Sendable {
    // DispatchWorkItem is thread-safe (cancel may be called from any thread) but not marked Sendable on Linux.
    let item: DispatchWorkItem
    let once: OnceWork
    func cancel() {
        item.cancel()
        once.cancel()
    }
}
