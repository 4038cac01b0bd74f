extension Signal {
    /// Emits each step of a running accumulation, starting from `initial`.
    ///
    /// | input  | 1 | 2 | 3 |
    /// |--------|---|---|---|
    /// | output | 1 | 3 | 6 |   (`scan(0, +)`)
    ///
    /// Each observer accumulates on its own, starting from `initial`.
    public func scan<Result: Sendable>(
        _ initial: Result,
        _ next: @escaping @Sendable (Result, Element) -> Result
    ) -> AnySignal<Result> {
        stateful(initial: initial) { accumulated, event, send in
            switch event {
            case .value(let value):
                accumulated = next(accumulated, value)
                send(.value(accumulated))
            case .finished:
                send(.finished)
            }
        }
    }

    /// Passes on the first `count` values, then finishes.
    ///
    /// | input  | a | b | c |
    /// |--------|---|---|---|
    /// | output | a | b,finished | |   (`prefix(2)`)
    ///
    /// - Precondition: `count >= 0`.
    public func prefix(_ count: Int) -> AnySignal<Element> {
        precondition(count >= 0, "API misuse: prefix needs a count of at least 0")
        if count == 0 { return .empty }
        return stateful(initial: PrefixState()) { state, event, send in
            guard !state.done else { return }
            switch event {
            case .value(let value):
                state.taken += 1
                send(.value(value))
                if state.taken == count {
                    state.done = true
                    send(.finished)
                }
            case .finished:
                state.done = true
                send(.finished)
            }
        }
    }

    /// Skips the first `count` values.
    ///
    /// | input  | a | b | c |
    /// |--------|---|---|---|
    /// | output |   |   | c |   (`dropFirst(2)`)
    public func dropFirst(_ count: Int = 1) -> AnySignal<Element> {
        precondition(count >= 0, "API misuse: dropFirst needs a count of at least 0")
        return stateful(initial: 0) { skipped, event, send in
            switch event {
            case .value(let value):
                if skipped < count {
                    skipped += 1
                } else {
                    send(.value(value))
                }
            case .finished:
                send(.finished)
            }
        }
    }
}

private struct PrefixState: Sendable {
    var taken = 0
    var done = false
}
