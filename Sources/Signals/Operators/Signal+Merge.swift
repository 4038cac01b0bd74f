/// Interleaves the values of every input, in the order they arrive; finishes when all inputs have finished.
///
/// | a      | 1 |   | 3 | finished |          |
/// |--------|---|---|---|----------|----------|
/// | b      |   | 2 |   |          | finished |
/// | output | 1 | 2 | 3 |          | finished |
public func merge<Element: Sendable>(_ inputs: [AnySignal<Element>]) -> AnySignal<Element> {
    if inputs.isEmpty { return .empty }
    let count = inputs.count
    return Combiner.signal(inputs: inputs, initial: 0) { finished, _, event, send in
        switch event {
        case .value(let value):
            send(.value(value))
        case .finished:
            finished += 1
            if finished == count { send(.finished) }
        }
    }
}

extension Signal {
    /// Interleaves this signal's values with `others`'; see ``merge(_:)``.
    public func merge<Other: Signal>(with others: Other...) -> AnySignal<Element> where Other.Element == Element {
        Signals.merge([eraseToAnySignal()] + others.map { $0.eraseToAnySignal() })
    }
}
