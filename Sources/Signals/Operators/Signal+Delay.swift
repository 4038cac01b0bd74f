#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

extension Signal {
    /// Emits each value, and the end, `interval` seconds after it arrived, in order.
    ///
    /// Each tick is one second (`delay(for: 2, scheduler: scheduler)`):
    ///
    /// | time   | 0 | 1 | 2 | 3 | 4 | 5 |
    /// |--------|---|---|---|---|---|---|
    /// | input  | a | b | finished | | | |
    /// | output |   |   | a | b | finished | |
    ///
    /// ```swift
    /// let shown = state.delay(for: 1, scheduler: DispatchScheduler()).observe(on: .main) { banner.state = $0 }
    /// ```
    ///
    /// - **Buffering:** the values waiting for their time are held under the observer's ``BufferingPolicy``:
    ///   at most its limit of them wait; when full, ``BufferingPolicy/bufferingNewest(_:)`` drops the oldest
    ///   waiting value and ``BufferingPolicy/bufferingOldest(_:)`` drops the value that arrived. Drops are
    ///   counted in the observation's ``SignalObservation/droppedCount`` (with those of the observer's own
    ///   buffer, which has the same policy).
    /// - **Completion:** upstream's end is delayed too, behind the values before it.
    /// - **Timers:** one per observation, for the value at the head of the queue (Combine's `delay` schedules
    ///   one per value); when it fires it emits every value that is due and re-arms for the next.
    /// - **Threading:** the observer is called on its queue; without one, on the scheduler's timer thread.
    /// - **Lifetime:** cancelling or releasing the observation cancels the upstream observation and the timer,
    ///   and releases the waiting values.
    ///
    /// - Precondition: `interval >= 0`.
    public func delay(for interval: TimeInterval, scheduler: some SignalScheduler) -> AnySignal<Element> {
        precondition(interval >= 0, "API misuse: delay needs an interval of at least 0")
        let initial: @Sendable (BufferingPolicy) -> DelayState<Element> = { DelayState($0) }
        return TimedRelay.signal(self, scheduler: scheduler, initial: initial) { state, trigger, effects in
            switch trigger {
            case .start:
                break
            case .event(.value(let value)):
                if state.waiting.push((effects.now + interval, value)) { effects.countDrop() }
                if !effects.timerArmed { effects.arm(after: interval) }
            case .event(.finished):
                state.finishAt = effects.now + interval
                if !effects.timerArmed { effects.arm(after: interval) }
            case .timer:
                while let head = state.waiting.first, head.due <= effects.now {
                    _ = state.waiting.popFirst()
                    effects.send(head.value)
                }
                if let head = state.waiting.first {
                    effects.arm(after: head.due - effects.now)
                } else if let finishAt = state.finishAt {
                    if finishAt <= effects.now {
                        effects.finish()
                    } else {
                        effects.arm(after: finishAt - effects.now)
                    }
                }
            }
        }
    }

    /// Finishes when no value arrives within `interval` seconds of starting to observe or of the last value:
    /// "no answer within 5 s". Values pass on unchanged.
    ///
    /// Each tick is one second (`timeout(2, scheduler: scheduler, fallback: "late")`):
    ///
    /// | time   | 0 | 1 | 2 | 3 | 4 |
    /// |--------|---|---|---|---|---|
    /// | input  |   | a | b |   |   |
    /// | output |   | a | b |   | late, finished |
    ///
    /// ```swift
    /// let answer = replies.prefix(1).timeout(5, scheduler: DispatchScheduler(), fallback: .noAnswer)
    /// ```
    ///
    /// Signals has no failure type, so a timeout is a finish. Pass `fallback` to learn that it timed out: it is
    /// emitted just before the finish of a timeout, never before upstream's own finish (Combine's
    /// `timeout(_:scheduler:customError:)` plays this role with a failure).
    ///
    /// - **Completion:** upstream's finish passes on at once and stops the timer; a timeout cancels the upstream
    ///   observation.
    /// - **Timers:** one per observation; a value moves the deadline, and the timer, firing early, re-arms for
    ///   the remainder.
    /// - **Threading:** values reach the observer as upstream sends them (on its queue, or the sending thread);
    ///   a timeout on the observer's queue, or the scheduler's timer thread.
    /// - **Lifetime:** cancelling or releasing the observation cancels the upstream observation and the timer.
    ///
    /// - Precondition: `interval >= 0`.
    public func timeout(
        _ interval: TimeInterval,
        scheduler: some SignalScheduler,
        fallback: Element? = nil
    ) -> AnySignal<Element> {
        precondition(interval >= 0, "API misuse: timeout needs an interval of at least 0")
        return TimedRelay.signal(self, scheduler: scheduler, initial: TimeInterval(0)) { deadline, trigger, effects in
            switch trigger {
            case .start:
                deadline = effects.now + interval
                effects.arm(after: interval)
            case .event(.value(let value)):
                deadline = effects.now + interval
                effects.send(value)
            case .event(.finished):
                effects.finish()
            case .timer:
                if effects.now >= deadline {
                    if let fallback { effects.send(fallback) }
                    effects.finish()
                } else {
                    effects.arm(after: deadline - effects.now)
                }
            }
        }
    }
}

private struct DelayState<Element: Sendable>: Sendable {
    /// The values waiting, each with the time it is due, under the observer's policy.
    var waiting: PolicyBuffer<(due: TimeInterval, value: Element)>
    /// When the end is due, once upstream finished.
    var finishAt: TimeInterval?

    init(_ policy: BufferingPolicy) {
        waiting = PolicyBuffer(policy: policy)
    }
}
