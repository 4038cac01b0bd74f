/// Pairs the values of `a` and `b` in order: the first of each, then the second of each, and so on.
///
/// A value waits until the other input has sent its value of the same rank. It finishes when an input has
/// finished and none of its values wait any more, that is when no more pairs can be made (Combine's rule).
///
/// | a      | 1 | 2 |       | finished |                 |
/// |--------|---|---|-------|----------|-----------------|
/// | b      |   |   | x     |          | y               |
/// | output |   |   | (1,x) |          | (2,y), finished |
///
/// Buffering: the values of each input that wait for a partner are held in a buffer of the observer's
/// ``BufferingPolicy``, one per input. When an input's buffer is full, ``BufferingPolicy/bufferingNewest(_:)``
/// drops that input's oldest waiting value and ``BufferingPolicy/bufferingOldest(_:)`` drops the new one, so the
/// later pairs match other ranks than they would have; each drop counts in ``SignalObservation/droppedCount``.
/// With ``BufferingPolicy/unbounded`` a fast input that the other never catches up with grows without limit.
///
/// Threading: a pair is delivered on the thread that sent its last value (or on the observer's queue); the
/// inputs may send from any threads, and the observer sees the pairs in one order.
/// Cancelling the observation cancels the observations of both inputs and releases the waiting values.
///
/// ```swift
/// let questions = MutableEventStream<String>()
/// let answers = MutableEventStream<String>()
/// let token = zip(questions, answers).observe { print("\($0) -> \($1)") }
/// questions.send("ping?")
/// questions.send("time?")
/// answers.send("pong")      // Prints: ping? -> pong
/// answers.send("noon")      // Prints: time? -> noon
/// ```
public func zip<A: Signal, B: Signal>(_ a: A, _ b: B) -> AnySignal<(A.Element, B.Element)> {
    zipping(Pair.inputs(a, b)).compactMap(Pair.tuple)
}

/// Combines the values of `a`, `b` and `c` in order into triples; see ``Signals/zip(_:_:)`` for the rules.
///
/// | a      | 1 |   | 2 |         |
/// |--------|---|---|---|---------|
/// | b      | x | y |   |         |
/// | c      |   |   |   | T       |
/// | output |   |   |   | (1,x,T) |
///
/// ```swift
/// let rounds = zip(moves, replies, scores).map { "\($0) / \($1) / \($2)" }
/// ```
public func zip<A: Signal, B: Signal, C: Signal>(
    _ a: A,
    _ b: B,
    _ c: C
) -> AnySignal<(A.Element, B.Element, C.Element)> {
    zipping(Triple.inputs(a, b, c)).compactMap(Triple.tuple)
}

extension Signal {
    /// Pairs this signal's values with `other`'s in order; see ``Signals/zip(_:_:)``.
    ///
    /// | self   | 1 | 2     |
    /// |--------|---|-------|
    /// | other  | x |       |
    /// | output | (1,x) |   |
    ///
    /// ```swift
    /// let replies = requests.zip(responses)
    /// ```
    public func zip<Other: Signal>(_ other: Other) -> AnySignal<(Element, Other.Element)> {
        Signals.zip(self, other)
    }

    /// Combines this signal's values with `b`'s and `c`'s in order; see ``Signals/zip(_:_:_:)``.
    ///
    /// ```swift
    /// let rounds = moves.zip(replies, scores)
    /// ```
    public func zip<B: Signal, C: Signal>(_ b: B, _ c: C) -> AnySignal<(Element, B.Element, C.Element)> {
        Signals.zip(self, b, c)
    }
}

/// Zips any number of inputs into arrays in input order: the engine of the public `zip`s.
func zipping<Element: Sendable>(_ inputs: [AnySignal<Element>]) -> AnySignal<[Element]> {
    let count = inputs.count
    return Combiner.signal(
        inputs: inputs,
        initial: { policy in ZipState<Element>(count: count, policy: policy) },
        droppedCount: { state in state.waiting.reduce(0) { $0 + $1.droppedCount } },
        step: { state, index, event, send in
            guard !state.done else { return }
            switch event {
            case .value(let value):
                state.waiting[index].push(value)
                if state.waiting.allSatisfy({ !$0.isEmpty }) {
                    let row = state.waiting.indices.compactMap { state.waiting[$0].popFirst() }
                    send(.value(row))
                }
            case .finished:
                state.finished[index] = true
            }
            // No more rows once an input has ended and has nothing waiting.
            if state.waiting.indices.contains(where: { state.finished[$0] && state.waiting[$0].isEmpty }) {
                state.done = true
                send(.finished)
            }
        }
    )
}

/// The values of each input that wait for the other inputs' values of the same rank.
private struct ZipState<Element: Sendable>: Sendable {
    var waiting: [PolicyBuffer<Element>]
    var finished: [Bool]
    var done = false

    init(count: Int, policy: BufferingPolicy) {
        waiting = Array(repeating: PolicyBuffer(policy: policy), count: count)
        finished = Array(repeating: false, count: count)
    }
}
