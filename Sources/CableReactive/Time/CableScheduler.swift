import Dispatch
import Foundation

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
}

/// A cancellable piece of scheduled work.
public protocol ScheduledWork: Sendable {
    /// Stops the work from running, if it has not started. Idempotent.
    func cancel()
}

/// The production scheduler: Dispatch timers on a global queue, `DispatchTime` as the clock.
public struct DispatchScheduler: CableScheduler {
    private let queue: DispatchQueue

    /// A scheduler that runs its work on `queue`.
    public init(queue: DispatchQueue = .global()) {
        self.queue = queue
    }

    public var now: TimeInterval { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

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
