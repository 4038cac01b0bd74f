import Signals

/// A scheduler whose time moves only when a test says so: Signals' `VirtualTimeScheduler`, under the name
/// CableTesting has always used, so that every reconnection, backoff and stale rule can be tested without
/// sleeping, on the same virtual time as Signals' time operators.
///
/// Work scheduled for the same moment runs in the order it was scheduled. `advance(by:)` runs due work
/// outside the scheduler's lock, so work may schedule more work. Every requested delay is recorded in
/// `history`, so a test can assert what the client asked for. `suspend(for:)` models the device sleeping
/// while the app is suspended; a connected client always has a timer pending, so prefer `advance(by:)` to
/// `run(limit:)` for clients.
///
/// ```swift
/// let scheduler = ManualScheduler()
/// let client = try ActionCableClient(url: url, transport: fake, scheduler: scheduler)
/// client.connect()
/// fake.last?.fail()                                   // the first attempt fails
/// #expect(scheduler.pendingDelays.contains { (0.75...1.25).contains($0) })
/// scheduler.advance(by: 1.25)                         // the retry starts
/// scheduler.suspend(for: 600)                         // ten minutes in the background
/// ```
public typealias ManualScheduler = VirtualTimeScheduler

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
