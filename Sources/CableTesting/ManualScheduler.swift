import CableReactive
import Foundation
import Signals

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
    public init() {}

    /// The current time in seconds; it moves only with ``advance(by:)`` and ``advance(to:)``.
    public var now: TimeInterval { state.withLock { $0.now } }

    /// Every delay ever requested, in order.
    public var history: [TimeInterval] { state.withLock { $0.history } }

    /// The delays (from now) of the work still pending, soonest first.
    public var pendingDelays: [TimeInterval] {
        state.withLock { state in state.items.map { $0.deadline - state.now }.sorted() }
    }

    /// How many pieces of work are pending.
    public var pendingCount: Int { state.withLock { $0.items.count } }

    /// Queues `work` to run when the clock reaches `now + delay`; records the delay in ``history``.
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

    /// How many ``perform(_:)`` callbacks wait for ``flush()``.
    public var pendingCallbacks: Int { state.withLock { $0.callbacks.count } }

    /// Moves time forward by `interval`, running every piece of work that falls due, in deadline order.
    public func advance(by interval: TimeInterval) {
        let target = state.withLock { $0.now + max(interval, 0) }
        advance(to: target)
    }

    /// Moves time to `deadline` (never backwards), running the work that falls due on the way.
    public func advance(to deadline: TimeInterval) {
        flush()
        while let item = popDue(before: deadline) {
            item.work()
            flush()
        }
        state.withLock { $0.now = max($0.now, deadline) }
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
        flush()
        let woken = state.withLock { state -> TimeInterval in
            state.now += max(interval, 0)
            return state.now
        }
        advance(to: woken)
    }

    /// Runs pending work, moving time to each deadline, until nothing is pending or `limit` pieces of work
    /// have run. A connected client always has a timer pending, so prefer ``advance(by:)`` for clients.
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
        state.withLock { $0.items.removeAll { $0.id == id } }
    }

    private struct Token: ScheduledWork {
        let scheduler: ManualScheduler
        let id: UInt64
        func cancel() { scheduler.cancel(id) }
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
