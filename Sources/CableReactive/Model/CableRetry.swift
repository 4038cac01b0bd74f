#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// When the next connection attempt starts, while the client waits to retry: ``ActionCableClient/nextAttempt``.
///
/// ``CableState/connecting(attempt:)`` covers both an attempt in flight and the wait before the next one;
/// `nextAttempt` tells them apart. It is non-nil exactly while the client waits (for the backoff delay, or
/// the short spread after a healthy session's loss), and nil once the attempt starts, and whenever the client
/// is connected, stopped, disconnected, gated or closed.
///
/// ```swift
/// countdown = client.nextAttempt.observe(on: .main) { [weak self] next in  // in a @MainActor view model
///     self?.retryText = next.map { "Retrying in \(Int($0.startsAt.timeIntervalSinceNow.rounded(.up))) s" } ?? ""
/// }
/// // A "retry now" button: `client.connect()` starts the waiting attempt at once.
/// ```
public struct CableRetry: Sendable, Hashable, CustomStringConvertible {
    /// The attempt that will start (as in ``CableState/connecting(attempt:)``).
    public let attempt: Int
    /// How long the client waits, in seconds, from when the wait began.
    public let delay: TimeInterval
    /// When the attempt starts, on the wall clock (the client's timers run on its scheduler's clock).
    public let startsAt: Date

    package init(attempt: Int, delay: TimeInterval, startsAt: Date) {
        self.attempt = attempt
        self.delay = delay
        self.startsAt = startsAt
    }

    /// For example `attempt 3 in 2.0s`: the attempt and the delay, never the wall-clock time.
    public var description: String { "attempt \(attempt) in \(delay)s" }
}
