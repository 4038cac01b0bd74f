import Testing

@testable import Signals

/// A step of a timeline over two inputs: `a` (Int) and `b` (String).
enum TwoInputStep: Sendable, CustomStringConvertible {
    case a(Int)
    case b(String)
    case finishA
    case finishB

    var description: String {
        switch self {
        case .a(let value): "a\(value)"
        case .b(let value): "b\(value)"
        case .finishA: "a|"
        case .finishB: "b|"
        }
    }

    func apply(to a: MutableEventStream<Int>, _ b: MutableEventStream<String>) {
        switch self {
        case .a(let value): a.send(value)
        case .b(let value): b.send(value)
        case .finishA: a.finish()
        case .finishB: b.finish()
        }
    }
}

/// Runs `timeline` on two fresh inputs into `apply`'s output; the events it recorded, each pair as "1x".
private func record(
    _ timeline: [TwoInputStep],
    buffering: BufferingPolicy = .unbounded,
    _ apply: (MutableEventStream<Int>, MutableEventStream<String>) -> AnySignal<(Int, String)>
) -> (events: [SignalEvent<String>], dropped: Int) {
    let a = MutableEventStream<Int>()
    let b = MutableEventStream<String>()
    let recorder = Recorder(apply(a, b).map { "\($0)\($1)" }, buffering: buffering)
    for step in timeline { step.apply(to: a, b) }
    return (recorder.history, recorder.observation?.droppedCount ?? -1)
}

@Suite("zip")
struct ZipTests {
    @Test(
        "zip pairs values in order and finishes once no more pairs can be made",
        arguments: [
            ([TwoInputStep.a(1), .a(2), .b("x"), .finishA, .b("y")], ["1x", "2y"], true),
            ([TwoInputStep.a(1), .finishB], [], true),
            ([TwoInputStep.a(1), .b("x"), .finishA], ["1x"], true),
            ([TwoInputStep.b("x"), .b("y"), .a(1), .finishB, .a(2), .a(3)], ["1x", "2y"], true),
            ([TwoInputStep.a(1), .a(2), .finishA, .b("x")], ["1x"], false),
            ([TwoInputStep.finishA, .b("x")], [], true),
            ([TwoInputStep.b("x"), .a(1), .b("y"), .a(2), .b("z")], ["1x", "2y"], false),
        ])
    func pairs(timeline: [TwoInputStep], expected: [String], finished: Bool) {
        let output = record(timeline) { zip($0, $1) }.events
        #expect(output == expected.map { .value($0) } + (finished ? [.finished] : []), "\(timeline)")
    }

    @Test("the method form is the free function")
    func methodForm() {
        let output = record([.a(1), .b("x"), .a(2), .b("y"), .finishB]) { $0.zip($1) }.events
        #expect(output == [.value("1x"), .value("2y"), .finished])
    }

    @Test("zip of three emits triples in order and finishes with the first exhausted input")
    func three() {
        let a = MutableEventStream<Int>()
        let b = MutableEventStream<String>()
        let c = MutableEventStream<Bool>()
        let recorder = Recorder(zip(a, b, c).map { "\($0)\($1)\($2)" })
        let method = Recorder(a.zip(b, c).map { "\($0)\($1)\($2)" })
        a.send(1)
        b.send("x")
        b.send("y")
        c.send(true)
        c.send(false)
        c.finish()
        #expect(recorder.history == [.value("1xtrue")], "c finished, but its false still waits")
        a.send(2)
        #expect(recorder.history == [.value("1xtrue"), .value("2yfalse"), .finished])
        a.send(3)
        b.send("z")
        #expect(recorder.history.count == 3)
        #expect(method.history == recorder.history)
    }

    @Test("a finished input with values waiting finishes the output once they are paired")
    func finishAfterDrain() {
        let a = MutableEventStream<Int>()
        let b = MutableEventStream<String>()
        let recorder = Recorder(zip(a, b).map { "\($0)\($1)" })
        a.send(1)
        a.send(2)
        a.finish()
        b.send("x")
        #expect(recorder.history == [.value("1x")])
        b.send("y")
        #expect(recorder.history == [.value("1x"), .value("2y"), .finished])
        b.send("z")
        #expect(recorder.history.count == 3)
    }

    @Test(
        "a full buffer drops by the observer's policy and counts the drops",
        arguments: [
            (BufferingPolicy.bufferingNewest(2), ["3x", "4y"], 2),
            (BufferingPolicy.bufferingOldest(2), ["1x", "2y"], 2),
            (BufferingPolicy.bufferingNewest(4), ["1x", "2y"], 0),
            (BufferingPolicy.unbounded, ["1x", "2y"], 0),
        ])
    func overflow(policy: BufferingPolicy, expected: [String], dropped: Int) {
        let (events, drops) = record([.a(1), .a(2), .a(3), .a(4), .b("x"), .b("y")], buffering: policy) { zip($0, $1) }
        #expect(events == expected.map { .value($0) })
        #expect(drops == dropped)
    }

    @Test("the standard library's zip of sequences still resolves where Signals is imported")
    func sequenceZip() {
        let pairs = Array(zip([1, 2, 3], ["a", "b"]))
        #expect(pairs.map { "\($0)\($1)" } == ["1a", "2b"])
    }

    @Test("re-entrant sends from the observer are paired after the current pair")
    func reentrant() {
        let a = MutableEventStream<Int>()
        let b = MutableEventStream<Int>()
        let seen = Locked<[String]>([])
        let token = zip(a, b).observe { x, y in
            seen.withLock { $0.append("\(x)\(y)") }
            if x < 3 {
                a.send(x + 1)
                b.send(y + 10)
            }
        }
        a.send(1)
        b.send(10)
        #expect(seen.withLock { $0 } == ["110", "220", "330"])
        token.cancel()
    }

    @Test("cancelling mid-way stops delivery, unregisters both inputs and releases the waiting values")
    func cancelReleases() {
        let live = Locked(0)
        let a = MutableEventStream<LifetimeTracked>()
        let b = MutableEventStream<Int>()
        let recorder = Recorder(zip(a, b).map { $0.id + $1 })
        a.send(LifetimeTracked(live, id: 1))
        b.send(10)
        a.send(LifetimeTracked(live, id: 2))
        a.send(LifetimeTracked(live, id: 3))
        #expect(recorder.values == [11])
        #expect(live.withLock { $0 } == 2, "the two unpaired values wait in zip's buffer")
        recorder.observation?.cancel()
        #expect(live.withLock { $0 } == 0)
        #expect(a.observerCount == 0)
        #expect(b.observerCount == 0)
        b.send(20)
        #expect(recorder.values == [11])
    }
}

@Suite("withLatestFrom")
struct WithLatestFromTests {
    @Test(
        "withLatestFrom emits self's values with other's latest, and finishes with self",
        arguments: [
            ([TwoInputStep.a(1), .b("x"), .a(2), .b("y"), .b("z"), .a(3), .finishA], ["2x", "3z"], true),
            ([TwoInputStep.b("x"), .finishB, .a(1), .a(2)], ["1x", "2x"], false),
            ([TwoInputStep.finishB, .a(1), .finishA], [], true),
            ([TwoInputStep.a(1), .finishA, .b("x")], [], true),
            ([TwoInputStep.b("x"), .b("y")], [], false),
            ([TwoInputStep.b("x"), .a(1), .finishA, .a(2)], ["1x"], true),
        ])
    func table(timeline: [TwoInputStep], expected: [String], finished: Bool) {
        let output = record(timeline) { $0.withLatestFrom($1) }.events
        #expect(output == expected.map { .value($0) } + (finished ? [.finished] : []), "\(timeline)")
    }

    @Test("on two states the other's current value is ready for self's current value")
    func states() {
        let taps = MutableStateValue(1)
        let canSend = MutableStateValue(false)
        let recorder = Recorder(taps.withLatestFrom(canSend).map { "\($0)\($1)" })
        canSend.value = true
        taps.value = 2
        #expect(recorder.values == ["1false", "2true"])
    }

    @Test("a send button: taps pass while sending is enabled")
    func sendButton() {
        let taps = MutableEventStream<Void>()
        let canSend = MutableStateValue(false)
        let recorder = Recorder(taps.withLatestFrom(canSend).filter { $1 }.map { _ in "sent" })
        taps.send(())
        canSend.value = true
        taps.send(())
        canSend.value = false
        taps.send(())
        #expect(recorder.values == ["sent"])
    }

    @Test("re-entrant sends from the observer see the latest value they set")
    func reentrant() {
        let a = MutableEventStream<Int>()
        let b = MutableEventStream<Int>()
        let seen = Locked<[String]>([])
        let token = a.withLatestFrom(b).observe { x, y in
            seen.withLock { $0.append("\(x)\(y)") }
            if x < 3 {
                b.send(y + 10)
                a.send(x + 1)
            }
        }
        b.send(10)
        a.send(1)
        #expect(seen.withLock { $0 } == ["110", "220", "330"])
        token.cancel()
    }

    @Test("cancelling mid-way stops delivery and unregisters both signals")
    func cancel() {
        let a = MutableEventStream<Int>()
        let b = MutableEventStream<String>()
        let recorder = Recorder(a.withLatestFrom(b).map { "\($0)\($1)" })
        b.send("x")
        a.send(1)
        recorder.observation?.cancel()
        a.send(2)
        #expect(recorder.history == [.value("1x")])
        #expect(a.observerCount == 0)
        #expect(b.observerCount == 0)
    }
}
