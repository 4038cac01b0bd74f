/// Emits the latest value of every input, as an array in input order, whenever any input changes.
///
/// Nothing is emitted until every input has a value. It finishes when every input has finished, or as soon
/// as an input finishes without ever having produced a value. With no inputs it emits `[]` once and finishes.
///
/// | a      | 1 |   | 2 |      |
/// |--------|---|---|---|------|
/// | b      |   | x |   | y    |
/// | output |   | [1,x] | [2,x] | [2,y] |
///
/// ```swift
/// let gates = [loggedIn, online, foreground].map { $0.eraseToAnySignal() }
/// let canConnect = combineLatest(gates).map { $0.allSatisfy { $0 } }
/// ```
public func combineLatest<Element: Sendable>(_ inputs: [AnySignal<Element>]) -> AnySignal<[Element]> {
    if inputs.isEmpty { return AnySignal.just([]) }
    let count = inputs.count
    let initial = CombineLatestState<Element>(latest: Array(repeating: nil, count: count), missing: count)
    return Combiner.signal(inputs: inputs, initial: initial) { state, index, event, send in
        guard !state.done else { return }
        switch event {
        case .value(let value):
            if state.latest[index] == nil { state.missing -= 1 }
            state.latest[index] = value
            if state.missing == 0 { send(.value(state.latest.compactMap { $0 })) }
        case .finished:
            state.finished += 1
            if state.latest[index] == nil || state.finished == count {
                state.done = true
                send(.finished)
            }
        }
    }
}

/// Emits the latest values of `a` and `b` whenever either changes, once both have a value.
///
/// | a      | 1 |   | 2 |
/// |--------|---|---|---|
/// | b      |   | x |   |
/// | output |   | (1,x) | (2,x) |
///
/// ```swift
/// let ready = combineLatest(loggedIn, online).map { $0 && $1 }
/// ```
public func combineLatest<A: Signal, B: Signal>(_ a: A, _ b: B) -> AnySignal<(A.Element, B.Element)> {
    combineLatest(Pair.inputs(a, b)).compactMap(Pair.tuple)
}

/// Emits the latest values of `a`, `b` and `c` whenever any changes, once all three have a value.
///
/// ```swift
/// let canConnect = combineLatest(loggedIn, online, foreground).map { $0 && $1 && $2 }
/// ```
public func combineLatest<A: Signal, B: Signal, C: Signal>(
    _ a: A,
    _ b: B,
    _ c: C
) -> AnySignal<(A.Element, B.Element, C.Element)> {
    combineLatest(Triple.inputs(a, b, c)).compactMap(Triple.tuple)
}

private struct CombineLatestState<Element: Sendable>: Sendable {
    var latest: [Element?]
    var missing: Int
    var finished = 0
    var done = false
}

extension Signal {
    /// Combines this signal with `other`; see ``combineLatest(_:_:)``.
    public func combineLatest<Other: Signal>(_ other: Other) -> AnySignal<(Element, Other.Element)> {
        Signals.combineLatest(self, other)
    }
}
