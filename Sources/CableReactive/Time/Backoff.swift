#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// The reconnect delays: exponential from `min`, capped at `max`, each with ±25% jitter. A pure function.
struct Backoff: Sendable, Hashable {
    var min: TimeInterval
    var max: TimeInterval

    /// The delay before retry number `failures` (1 after the first failure): min × 2^(failures−1), capped at
    /// max, then multiplied by a uniform factor in [0.75, 1.25].
    func delay(afterFailures failures: Int, using random: inout some RandomNumberGenerator) -> TimeInterval {
        let exponent = Swift.min(Swift.max(failures - 1, 0), 30)
        let base = Swift.min(min * Double(1 << exponent), max)
        return base * Double.random(in: 0.75...1.25, using: &random)
    }

    /// The spread after losing a healthy session: uniform in [0, min], so a server's clients come back apart.
    func herdDelay(using random: inout some RandomNumberGenerator) -> TimeInterval {
        Double.random(in: 0...min, using: &random)
    }

    /// The subscribe re-send delay for retry `retry` (1-based): the schedule's `retry`-th step (its last step
    /// for every later retry), ±25%; nil for an empty schedule (never re-send).
    static func subscribeRetryDelay(
        retry: Int,
        schedule: [TimeInterval],
        using random: inout some RandomNumberGenerator
    ) -> TimeInterval? {
        guard let last = schedule.last else { return nil }
        let step = retry >= 1 && retry <= schedule.count ? schedule[retry - 1] : last
        return step * Double.random(in: 0.75...1.25, using: &random)
    }
}
