import CableReactive
import CableReactivePreview
import Foundation

/// A scheduler whose time moves only when a test says so: every reconnection, backoff and stale rule can
/// be tested without sleeping.
///
/// Work scheduled for the same moment runs in the order it was scheduled. ``advance(by:)`` runs due work
/// outside the scheduler's lock, so work may schedule more work. Every requested delay is recorded in
/// ``history``, so a test can assert what the client asked for.
///
/// ```swift
/// let scheduler = ManualScheduler()
/// let client = try ActionCableClient(url: url, transport: fake, scheduler: scheduler)
/// client.connect()
/// fake.last?.fail()                                   // the first attempt fails
/// #expect(scheduler.pendingDelays.contains { (0.75...1.25).contains($0) })
/// scheduler.advance(by: 1.25)                         // the retry starts
/// ```
public final class ManualScheduler: CableScheduler, Sendable {
    // CableReactivePreview's virtual clock, which CablePreview runs on too: one implementation of virtual time.
    private let clock = VirtualClock()

    /// A clock at time zero with no work queued.
    public init() {}

    /// The current time in seconds; it moves only with ``advance(by:)`` and ``advance(to:)``.
    public var now: TimeInterval { clock.now }

    /// Every delay ever requested, in order.
    public var history: [TimeInterval] { clock.history }

    /// The delays (from now) of the work still pending, soonest first.
    public var pendingDelays: [TimeInterval] { clock.pendingDelays }

    /// How many pieces of work are pending.
    public var pendingCount: Int { clock.pendingCount }

    /// Queues `work` to run when the clock reaches `now + delay`; records the delay in ``history``.
    public func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        clock.schedule(after: delay, work)
    }

    /// Queues `work` until the next ``flush()`` (or ``advance(by:)``), which runs it on the calling thread.
    public func perform(_ work: @escaping @Sendable () -> Void) {
        clock.perform(work)
    }

    /// Runs the queued ``perform(_:)`` work, in order, on the calling thread, including work it queues.
    public func flush() {
        clock.flush()
    }

    /// How many ``perform(_:)`` callbacks wait for ``flush()``.
    public var pendingCallbacks: Int { clock.pendingCallbacks }

    /// Moves time forward by `interval`, running every piece of work that falls due, in deadline order.
    public func advance(by interval: TimeInterval) {
        clock.advance(by: interval)
    }

    /// Moves time to `deadline` (never backwards), running the work that falls due on the way.
    public func advance(to deadline: TimeInterval) {
        clock.advance(to: deadline)
    }

    /// Models the device sleeping for `interval` while the app is suspended: the clock jumps forward at once
    /// (a `CableScheduler`'s clock counts sleep, as `DispatchScheduler`'s does), then the work that fell due
    /// meanwhile runs, late, in deadline order, each piece seeing the time of waking up.
    ///
    /// ```swift
    /// scheduler.suspend(for: 600)  // ten minutes in the background, the socket died meanwhile
    /// #expect(client.state.value == .connecting(attempt: 0))  // found stale at once, reconnecting
    /// ```
    public func suspend(for interval: TimeInterval) {
        clock.suspend(for: interval)
    }

    /// Runs pending work, moving time to each deadline, until nothing is pending or `limit` pieces of work
    /// have run. A connected client always has a timer pending, so prefer ``advance(by:)`` for clients.
    ///
    /// - Returns: how many pieces of work ran.
    @discardableResult
    public func run(limit: Int = 1000) -> Int {
        clock.run(limit: limit)
    }
}

/// A seedable random number generator (SplitMix64), for reproducible jitter in tests.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next value of the sequence (SplitMix64).
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
