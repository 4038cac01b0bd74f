@testable import Signals

/// Watches one observer under stress: whether its handler ever ran concurrently with itself, whether an event
/// followed `.finished`, and what it received, in order.
final class OrderProbe<Element: Sendable>: Sendable {
    private struct State {
        var inside = false
        var overlaps = 0
        var afterFinish = 0
        var finishes = 0
        var values: [Element] = []
    }

    private let state = Locked(State())

    /// The handler to observe with.
    var handler: @Sendable (SignalEvent<Element>) -> Void {
        { [self] event in
            state.withLock { state in
                if state.inside { state.overlaps += 1 }
                state.inside = true
                if state.finishes > 0 { state.afterFinish += 1 }
                switch event {
                case .value(let value): state.values.append(value)
                case .finished: state.finishes += 1
                }
            }
            state.withLock { $0.inside = false }
        }
    }

    var values: [Element] { state.withLock { $0.values } }
    var overlaps: Int { state.withLock { $0.overlaps } }
    var afterFinish: Int { state.withLock { $0.afterFinish } }
    var finishes: Int { state.withLock { $0.finishes } }
}
