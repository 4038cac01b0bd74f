/// A value of one of two inputs, tagged with its input: how an operator over inputs of different types
/// (`combineLatest(a, b)`, `zip(a, b)`, `withLatestFrom`) feeds them to one ``Combiner``.
enum Pair<A: Sendable, B: Sendable>: Sendable {
    case a(A)
    case b(B)

    /// `a` and `b` as one list of inputs, in that order, each value tagged with its input.
    static func inputs<SA: Signal, SB: Signal>(_ a: SA, _ b: SB) -> [AnySignal<Pair>]
    where SA.Element == A, SB.Element == B {
        [a.map(Pair.a), b.map(Pair.b)]
    }

    /// A row with one value per input of ``inputs(_:_:)``, in order, as a tuple; `nil` for any other row.
    static func tuple(_ row: [Pair]) -> (A, B)? {
        guard row.count == 2, case .a(let first) = row[0], case .b(let second) = row[1] else { return nil }
        return (first, second)
    }
}

/// A value of one of three inputs, tagged with its input (see ``Pair``).
enum Triple<A: Sendable, B: Sendable, C: Sendable>: Sendable {
    case a(A)
    case b(B)
    case c(C)

    /// `a`, `b` and `c` as one list of inputs, in that order, each value tagged with its input.
    static func inputs<SA: Signal, SB: Signal, SC: Signal>(_ a: SA, _ b: SB, _ c: SC) -> [AnySignal<Triple>]
    where SA.Element == A, SB.Element == B, SC.Element == C {
        [a.map(Triple.a), b.map(Triple.b), c.map(Triple.c)]
    }

    /// A row with one value per input of ``inputs(_:_:_:)``, in order, as a tuple; `nil` for any other row.
    static func tuple(_ row: [Triple]) -> (A, B, C)? {
        guard row.count == 3, case .a(let first) = row[0], case .b(let second) = row[1], case .c(let third) = row[2]
        else { return nil }
        return (first, second, third)
    }
}
