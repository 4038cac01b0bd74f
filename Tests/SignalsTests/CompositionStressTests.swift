import Dispatch
import Testing

@testable import Signals

/// Inputs sending from several threads into the composition operators, with the observation cancelled mid-way
/// in half the runs: the observer sees one consistent order, never runs concurrently with itself, and nothing
/// follows `.finished`. Run under the thread sanitizer (`swift test --sanitize=thread`).
@Suite("Composition stress")
struct CompositionStressTests {
    static let count = 2_000

    @Test("zip of two inputs sent from two threads pairs every value by rank", arguments: [false, true])
    func zipPairsByRank(cancelMidway: Bool) {
        let a = MutableEventStream<Int>()
        let b = MutableEventStream<Int>()
        let probe = OrderProbe<Int>()
        let token = zip(a, b).map { $0 * Self.count + $1 }.observeEvents(on: nil, buffering: .unbounded, probe.handler)
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            let input = thread == 0 ? a : b
            for value in 0..<Self.count {
                input.send(value)
                if cancelMidway, thread == 0, value == Self.count / 2 { token.cancel() }
            }
        }
        a.finish()
        b.finish()
        let values = probe.values
        #expect(values == (0..<values.count).map { $0 * Self.count + $0 }, "pairs in rank order")
        if cancelMidway {
            #expect(values.count <= Self.count / 2 + 1)
            #expect(probe.finishes == 0)
        } else {
            #expect(values.count == Self.count)
            #expect(probe.finishes == 1)
        }
        #expect(probe.overlaps == 0)
        #expect(probe.afterFinish == 0)
        token.cancel()
    }

    @Test("withLatestFrom with both inputs on their own threads: self's order kept, other's latest never older")
    func withLatestFromOrder() {
        for cancelMidway in [false, true] {
            let source = MutableEventStream<Int>()
            let other = MutableEventStream<Int>()
            let probe = OrderProbe<Int>()
            let token = source.withLatestFrom(other).map { $0 * Self.count + $1 }
                .observeEvents(on: nil, buffering: .unbounded, probe.handler)
            DispatchQueue.concurrentPerform(iterations: 2) { thread in
                let input = thread == 0 ? source : other
                for value in 0..<Self.count {
                    input.send(value)
                    if cancelMidway, thread == 0, value == Self.count / 2 { token.cancel() }
                }
            }
            source.finish()
            let pairs = probe.values.map { $0.quotientAndRemainder(dividingBy: Self.count) }
            #expect(
                zip(pairs, pairs.dropFirst()).allSatisfy { $0.quotient < $1.quotient && $0.remainder <= $1.remainder })
            #expect(probe.finishes == (cancelMidway ? 0 : 1))
            #expect(probe.overlaps == 0)
            #expect(probe.afterFinish == 0)
            token.cancel()
        }
    }

    @Test("switchToLatest while two threads send into every inner signal: no value of a replaced one follows")
    func switchNeverGoesBack() {
        let innerCount = 40
        let rounds = 100
        for cancelMidway in [false, true] {
            let inners = (0..<innerCount).map { _ in MutableEventStream<Int>() }
            let outer = MutableEventStream<AnySignal<Int>>()
            let probe = OrderProbe<Int>()
            let token = outer.switchToLatest().observeEvents(on: nil, buffering: .unbounded, probe.handler)
            DispatchQueue.concurrentPerform(iterations: 3) { thread in
                if thread == 0 {
                    for (index, inner) in inners.enumerated() {
                        outer.send(inner.eraseToAnySignal())
                        if cancelMidway, index == innerCount / 2 { token.cancel() }
                    }
                    outer.finish()
                } else {
                    // value = (inner * 2 + sender) * rounds + round
                    for round in 0..<rounds {
                        for (index, inner) in inners.enumerated() {
                            inner.send((index * 2 + thread - 1) * rounds + round)
                        }
                    }
                }
            }
            #expect(probe.finishes == 0, "the last inner signal has not finished")
            inners.last?.send((innerCount * 2) * rounds)
            for inner in inners { inner.finish() }
            let values = probe.values
            let innerOfValue = values.map { $0 / (2 * rounds) }
            #expect(zip(innerOfValue, innerOfValue.dropFirst()).allSatisfy { $0 <= $1 }, "an inner signal came back")
            var lastRound: [Int: Int] = [:]
            let inOrder = values.allSatisfy { value in
                let (sender, round) = value.quotientAndRemainder(dividingBy: rounds)
                defer { lastRound[sender] = round }
                return round > lastRound[sender, default: -1]
            }
            #expect(inOrder, "a sender's values out of order")
            if cancelMidway {
                #expect(probe.finishes == 0)
                #expect(innerOfValue.allSatisfy { $0 <= innerCount / 2 })
            } else {
                #expect(probe.finishes == 1)
                #expect(innerOfValue.last == innerCount)
            }
            #expect(probe.overlaps == 0)
            #expect(probe.afterFinish == 0)
            #expect(inners.allSatisfy { $0.observerCount == 0 })
            token.cancel()
        }
    }
}
