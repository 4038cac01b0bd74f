#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

extension Signal {
    /// Emits a value once `interval` seconds have passed without another value: the search field's operator.
    ///
    /// Each tick is one second (`debounce(for: 2, scheduler: scheduler)`):
    ///
    /// | time   | 0 | 1 | 2 | 3 | 4 | 5 |
    /// |--------|---|---|---|---|---|---|
    /// | input  | a | b |   |   | c | finished |
    /// | output |   |   |   | b |   | c, finished |
    ///
    /// ```swift
    /// let results = query.debounce(for: 0.3, scheduler: DispatchScheduler()).observe { search($0) }
    /// ```
    ///
    /// - **Completion:** when upstream finishes, the value still waiting is emitted at once, then `.finished`
    ///   (as Combine's `debounce` does).
    /// - **Timers:** one per observation, not one per value. A value arms the timer only when none is armed;
    ///   later values move the deadline, and the timer, firing early, re-arms for the remainder.
    /// - **Threading:** the observer is called on its queue; without one, on the scheduler's timer thread
    ///   (or the sending thread when upstream finishes).
    /// - **Lifetime:** the observation keeps upstream observed; cancelling or releasing it cancels the upstream
    ///   observation and the armed timer, and releases the waiting value.
    ///
    /// - Precondition: `interval >= 0`.
    public func debounce(for interval: TimeInterval, scheduler: some SignalScheduler) -> AnySignal<Element> {
        precondition(interval >= 0, "API misuse: debounce needs an interval of at least 0")
        return TimedRelay.signal(self, scheduler: scheduler, initial: DebounceState<Element>()) {
            state, trigger, effects in
            switch trigger {
            case .start:
                break
            case .event(.value(let value)):
                state.pending = value
                state.deadline = effects.now + interval
                if !effects.timerArmed { effects.arm(after: interval) }
            case .event(.finished):
                if let value = state.pending { effects.send(value) }
                state.pending = nil
                effects.finish()
            case .timer:
                guard let value = state.pending else { return }
                if effects.now >= state.deadline {
                    state.pending = nil
                    effects.send(value)
                } else {
                    effects.arm(after: state.deadline - effects.now)
                }
            }
        }
    }

    /// Emits at most one value per `interval` seconds: the first value at once, then, at the end of each
    /// interval that received values, the newest of them (`latest: true`) or the first (`latest: false`).
    /// The typing indicator's operator: a whisper at most every 2 s however fast the user types.
    ///
    /// Each tick is one second (`throttle(for: 2, scheduler: scheduler, latest: true)`; with `latest: false`
    /// the output at 2 is `b`):
    ///
    /// | time   | 0 | 1   | 2 | 3 | 4 | 5 | 6 |
    /// |--------|---|-----|---|---|---|---|---|
    /// | input  | a | b,c |   |   |   | d | finished |
    /// | output | a |     | c |   |   | d | finished |
    ///
    /// ```swift
    /// let whisper = typing.throttle(for: 2, scheduler: DispatchScheduler(), latest: true)
    ///     .observe { _ in channel.whisper(["typing": true]) }
    /// ```
    ///
    /// As Combine's `throttle`: a value that arrives `interval` or more after the last emitted one is
    /// emitted at once; one that arrives sooner waits for the end of the interval, when the newest (or first)
    /// waiting value is emitted and a new interval starts.
    ///
    /// - **Completion:** when upstream finishes, the value still waiting is emitted at once, then `.finished`.
    /// - **Timers:** at most one armed per observation, for the end of the current interval.
    /// - **Threading:** the observer is called on its queue; without one, on the sending thread for a value
    ///   emitted at once and on the scheduler's timer thread for one emitted at the end of an interval.
    /// - **Lifetime:** as ``debounce(for:scheduler:)``: cancelling releases the upstream observation, the timer
    ///   and the waiting value.
    ///
    /// - Precondition: `interval >= 0`.
    public func throttle(
        for interval: TimeInterval,
        scheduler: some SignalScheduler,
        latest: Bool
    ) -> AnySignal<Element> {
        precondition(interval >= 0, "API misuse: throttle needs an interval of at least 0")
        return TimedRelay.signal(self, scheduler: scheduler, initial: ThrottleState<Element>()) {
            state, trigger, effects in
            switch trigger {
            case .start:
                break
            case .event(.value(let value)):
                if state.pending != nil {
                    if latest { state.pending = value }
                } else if let last = state.lastEmitted, effects.now - last < interval {
                    state.pending = value
                    effects.arm(after: last + interval - effects.now)
                } else {
                    state.lastEmitted = effects.now
                    effects.send(value)
                }
            case .event(.finished):
                if let value = state.pending { effects.send(value) }
                state.pending = nil
                effects.finish()
            case .timer:
                guard let value = state.pending else { return }
                state.pending = nil
                state.lastEmitted = effects.now
                effects.send(value)
            }
        }
    }
}

private struct DebounceState<Element: Sendable>: Sendable {
    var pending: Element?
    /// When `pending` is due: `interval` after the last value.
    var deadline: TimeInterval = 0
}

private struct ThrottleState<Element: Sendable>: Sendable {
    /// The value that waits for the end of the interval.
    var pending: Element?
    /// When the last value was emitted, which starts an interval.
    var lastEmitted: TimeInterval?
}
