import Testing

@testable import Signals

/// Operator tests are tables: an input timeline and the expected output timeline.
@Suite("Operators")
struct OperatorTests {
    private func run<T: Sendable>(
        _ inputs: [Int],
        finish: Bool = true,
        _ apply: (MutableEventStream<Int>) -> AnySignal<T>
    ) -> [SignalEvent<T>] {
        let source = MutableEventStream<Int>()
        let recorder = Recorder(apply(source))
        for input in inputs { source.send(input) }
        if finish { source.finish() }
        return recorder.history
    }

    @Test("map transforms each value and passes finish on")
    func map() {
        #expect(run([1, 2, 3]) { $0.map { $0 * 2 } } == [.value(2), .value(4), .value(6), .finished])
    }

    @Test("compactMap drops nil results")
    func compactMap() {
        let output = run([1, 2, 3, 4]) { $0.compactMap { $0.isMultiple(of: 2) ? "\($0)" : nil } }
        #expect(output == [.value("2"), .value("4"), .finished])
    }

    @Test("filter keeps values that satisfy the predicate")
    func filter() {
        #expect(run([1, 2, 3, 4, 5]) { $0.filter { $0 > 3 } } == [.value(4), .value(5), .finished])
    }

    @Test(
        "removeDuplicates compares with the previous emitted value",
        arguments: [
            ([1, 1, 2, 2, 1], [1, 2, 1]),
            ([3, 3, 3], [3]),
            ([], []),
            ([1, 2, 1, 2], [1, 2, 1, 2]),
        ])
    func removeDuplicates(input: [Int], expected: [Int]) {
        let output = run(input) { $0.removeDuplicates() }
        #expect(output == expected.map { .value($0) } + [.finished])
    }

    @Test("removeDuplicates(by:) uses the given rule against the last emitted value, not the last input")
    func removeDuplicatesBy() {
        // 1 emitted; 2 is within 1 of 1 (dropped); 3 is 2 away from 1 (emitted).
        let output = run([1, 2, 3, 4]) { $0.removeDuplicates { abs($0 - $1) <= 1 } }
        #expect(output == [.value(1), .value(3), .finished])
    }

    @Test("scan emits each running total, separately per observer")
    func scan() {
        let source = MutableEventStream<Int>()
        let sums = source.scan(0, +)
        let first = Recorder(sums)
        source.send(1)
        let second = Recorder(sums)
        source.send(2)
        source.send(3)
        #expect(first.values == [1, 3, 6])
        #expect(second.values == [2, 5])
    }

    @Test("prefix passes the first values then finishes")
    func prefix() {
        #expect(run([1, 2, 3, 4], finish: false) { $0.prefix(2) } == [.value(1), .value(2), .finished])
        #expect(run([1], finish: true) { $0.prefix(3) } == [.value(1), .finished])
        #expect(run([1, 2], finish: false) { $0.prefix(0) } == [.finished])
    }

    @Test("dropFirst skips the first values")
    func dropFirst() {
        #expect(run([1, 2, 3]) { $0.dropFirst(2) } == [.value(3), .finished])
        #expect(run([1, 2]) { $0.dropFirst() } == [.value(2), .finished])
    }

    @Test("operators chain and a StateValue's replay flows through them")
    func chainOverState() {
        let state = MutableStateValue(1)
        let recorder = Recorder(state.map { $0 * 10 }.filter { $0 != 20 }.removeDuplicates())
        state.value = 2
        state.value = 3
        #expect(recorder.values == [10, 30])
    }

    @Test("just and empty")
    func justAndEmpty() {
        #expect(Recorder(AnySignal.just(5)).history == [.value(5), .finished])
        #expect(Recorder(AnySignal<Int>.empty).history == [.finished])
    }
}

@Suite("combineLatest and merge")
struct CombiningTests {
    enum Step {
        case a(Int)
        case b(String)
        case finishA
        case finishB
    }

    @Test(
        "combineLatest(a, b) waits for both inputs, then emits on each change",
        arguments: [
            // timeline, expected output ("1x" = (1, "x")), finished?
            ([Step.a(1), .a(2), .b("x"), .a(3), .b("y")], ["2x", "3x", "3y"], false),
            ([Step.b("x"), .a(1), .finishA, .b("y"), .finishB], ["1x", "1y"], true),
            ([Step.a(1), .finishB], [], true),
            ([Step.a(1), .b("x"), .finishA, .b("y")], ["1x", "1y"], false),
        ])
    func combineLatestTwo(timeline: [Step], expected: [String], finished: Bool) {
        let a = MutableEventStream<Int>()
        let b = MutableEventStream<String>()
        let recorder = Recorder(combineLatest(a, b).map { "\($0)\($1)" })
        for step in timeline {
            switch step {
            case .a(let value): a.send(value)
            case .b(let value): b.send(value)
            case .finishA: a.finish()
            case .finishB: b.finish()
            }
        }
        #expect(recorder.values == expected)
        #expect(recorder.isFinished == finished)
    }

    @Test("combineLatest of three gates, as an app's canConnect")
    func combineLatestThree() {
        let login = MutableStateValue(false)
        let online = MutableStateValue(true)
        let foreground = MutableStateValue(true)
        let recorder = Recorder(combineLatest(login, online, foreground).map { $0 && $1 && $2 }.removeDuplicates())
        login.value = true
        online.value = false
        online.value = true
        foreground.value = false
        #expect(recorder.values == [false, true, false, true, false])
    }

    @Test("combineLatest over an array emits arrays in input order")
    func combineLatestArray() {
        let inputs = (0..<3).map { _ in MutableEventStream<Int>() }
        let recorder = Recorder(combineLatest(inputs.map { $0.eraseToAnySignal() }))
        inputs[2].send(30)
        inputs[0].send(10)
        inputs[1].send(20)
        inputs[0].send(11)
        #expect(recorder.values == [[10, 20, 30], [11, 20, 30]])
        #expect(Recorder(combineLatest([AnySignal<Int>]())).history == [.value([]), .finished])
    }

    @Test("merge interleaves in arrival order and finishes after the last input")
    func mergeInterleaves() {
        let a = MutableEventStream<Int>()
        let b = MutableEventStream<Int>()
        let recorder = Recorder(a.merge(with: b))
        a.send(1)
        b.send(2)
        a.send(3)
        a.finish()
        #expect(!recorder.isFinished)
        b.send(4)
        b.finish()
        #expect(recorder.history == [.value(1), .value(2), .value(3), .value(4), .finished])
    }

    @Test("cancelling a combined observation releases its inputs' observers")
    func cancelReleasesInputs() {
        let a = MutableEventStream<Int>()
        let b = MutableEventStream<Int>()
        let recorder = Recorder(combineLatest(a, b))
        recorder.observation?.cancel()
        #expect(a.storage.state.withLock { $0.observers.isEmpty })
        #expect(b.storage.state.withLock { $0.observers.isEmpty })
        a.send(1)
        b.send(2)
        #expect(recorder.history.isEmpty)
    }
}
