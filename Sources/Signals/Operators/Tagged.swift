/// A value of one of two inputs, tagged with its input: how an operator over inputs of different types
/// (`combineLatest(a, b)`, `zip(a, b)`, `withLatestFrom`) feeds them to one ``Combiner``.
enum Pair<A: Sendable, B: Sendable>: Sendable {
    case a(A)
    case b(B)
}

/// A value of one of three inputs, tagged with its input (see ``Pair``).
enum Triple<A: Sendable, B: Sendable, C: Sendable>: Sendable {
    case a(A)
    case b(B)
    case c(C)
}
