import Dispatch

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// The client's source of time: when it is, and running work later. Injected so that every timing rule can
/// be tested without sleeping (see `ManualScheduler` in CableTesting).
///
/// Implementation requirements: ``schedule(after:_:)`` never runs `work` synchronously and never blocks;
/// `work` runs once, later, unless cancelled first. ``now`` is monotonic.
public protocol CableScheduler: Sendable {
    /// Monotonic seconds since an arbitrary origin.
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

/// The production scheduler: Dispatch timers on a global queue, `DispatchTime` as the clock, and a serial
/// callback queue.
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

    /// Seconds of monotonic uptime.
    public var now: TimeInterval { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// Runs `work` on the scheduler's queue after `delay` seconds, unless cancelled first.
    public func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        let item = DispatchWorkItem(block: work)
        queue.asyncAfter(deadline: .now() + max(delay, 0), execute: item)
        return DispatchScheduledWork(item: item)
    }
}

private struct DispatchScheduledWork: ScheduledWork, @unchecked Sendable {
    // DispatchWorkItem is thread-safe (cancel may be called from any thread) but not marked Sendable on Linux.
    let item: DispatchWorkItem
    func cancel() { item.cancel() }
}
