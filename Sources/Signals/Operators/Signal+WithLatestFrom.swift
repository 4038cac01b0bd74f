extension Signal {
    /// Emits each value of this signal together with the latest value of `other`, once `other` has one.
    ///
    /// Only this signal triggers output: a value of `other` is remembered, never emitted on its own, and a value
    /// of this signal that arrives before `other` has any is dropped. It finishes when this signal finishes;
    /// when `other` finishes its last value stays in use. (Combine has no such operator; these are the rules of
    /// RxSwift's and CombineExt's `withLatestFrom`.)
    ///
    /// | self   | a |   | b     | c     | finished |
    /// |--------|---|---|-------|-------|----------|
    /// | other  |   | 1 |       | 2     |          |
    /// | output |   |   | (b,1) | (c,2) | finished |
    ///
    /// `other` is observed first, so a ``StateValue`` there has its current value ready for this signal's first
    /// value, even when that one is a ``StateValue``'s current value too.
    ///
    /// There is no variant that takes a combining closure: `withLatestFrom(other).map { ... }` is the same
    /// thing, with no buffering in between.
    ///
    /// Threading: a value is delivered on the thread that sent this signal's value (or on the observer's
    /// queue). Cancelling the observation cancels the observations of both signals.
    ///
    /// ```swift
    /// let sends = sendTaps.withLatestFrom(canSend).filter { _, enabled in enabled }.map { _ in draft.value }
    /// ```
    public func withLatestFrom<Other: Signal>(_ other: Other) -> AnySignal<(Element, Other.Element)> {
        // `other` is input 0, this signal input 1.
        let inputs = [other.map(Pair<Element, Other.Element>.b), map(Pair.a)]
        return Combiner.signal(inputs: inputs, initial: WithLatestFromState<Other.Element>()) {
            state, index, event, send in
            guard !state.done else { return }
            switch event {
            case .value(.b(let latest)):
                state.latest = latest
            case .value(.a(let value)):
                if let latest = state.latest { send(.value((value, latest))) }
            case .finished:
                if index == 1 {
                    state.done = true
                    send(.finished)
                }
            }
        }
    }
}

private struct WithLatestFromState<Latest: Sendable>: Sendable {
    var latest: Latest?
    var done = false
}
