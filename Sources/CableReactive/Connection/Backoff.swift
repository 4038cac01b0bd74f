import Foundation

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

    /// The subscribe re-send delay for retry `retry` (1-based): 5 s × 2^(retry−1), at least 5 s and at most
    /// `cap` (the client's max reconnect delay, 30 s by default), ±25%. Gives 5, 10, 20, 30, 30 … s.
    static func subscribeRetryDelay(
        retry: Int,
        cap: TimeInterval,
        using random: inout some RandomNumberGenerator
    ) -> TimeInterval {
        let exponent = Swift.min(Swift.max(retry - 1, 0), 30)
        let base = Swift.max(5, Swift.min(5 * Double(1 << exponent), Swift.max(cap, 5)))
        return base * Double.random(in: 0.75...1.25, using: &random)
    }
}
