import Dispatch
import Testing

@testable import Signals

/// The time operators on virtual time, as marble tables: input timeline, expected output timeline (one
/// character per second; see `Marbles`).
@Suite("Time operators")
struct TimeOperatorTests {
    @Test(
        "debounce emits a value once the interval passed without another",
        arguments: [
            // input, interval, expected output
            ("ab---c--|", 2.0, "---b---c|"),
            ("a|", 2.0, "-(a|)"),  // upstream's end brings the waiting value out first
            ("abcd", 3.0, "------d"),
            ("a-b-c", 1.0, "-a-b-c"),
            ("|", 1.0, "|"),
            ("a-(bc)---|", 2.0, "--a-c-|"),  // a is due at the tick bc arrive: out first
        ])
    func debounce(input: String, interval: Double, expected: String) {
        let run = Marbles.run(input) { $0.debounce(for: interval, scheduler: $1) }
        #expect(run.output == expected)
    }

    @Test("debounce keeps one timer: later values move the deadline and the timer re-arms for the rest")
    func debounceOneTimer() {
        let run = Marbles.run("abcd") { $0.debounce(for: 3, scheduler: $1) }
        #expect(run.output == "------d")
        #expect(run.maxPending == 1)
        // a arms 3 s; at 3 s the deadline is 5 s (c), then 6 s (d): re-armed for the remainder each time.
        #expect(run.scheduler.history == [3, 2, 1])
        #expect(run.scheduler.pendingCount == 0)
    }

    @Test(
        "throttle emits the first value at once, then the newest or first of each interval",
        arguments: [
            // input, latest, expected output (interval 2 s)
            ("a(bc)---|", true, "a-c--|"),
            ("a(bc)---|", false, "a-b--|"),
            ("abc---d-|", true, "a-b-c-d-|"),
            ("a---b---|", true, "a---b---|"),  // spaced out: each passes at once
            ("ab|", true, "a-(b|)"),  // b waits; the end brings it out first
            ("|", false, "|"),
        ])
    func throttle(input: String, latest: Bool, expected: String) {
        let run = Marbles.run(input) { $0.throttle(for: 2, scheduler: $1, latest: latest) }
        #expect(run.output == expected)
        #expect(run.maxPending <= 1)
    }

    @Test(
        "delay shifts every value and the end by the interval, in order",
        arguments: [
            ("ab-c|", "--ab-c|"),
            ("(abc)--|", "--(abc)--|"),
            ("|", "--|"),
            ("a|", "--a|"),
        ])
    func delay(input: String, expected: String) {
        let run = Marbles.run(input) { $0.delay(for: 2, scheduler: $1) }
        #expect(run.output == expected)
    }

    @Test("delay keeps one timer, for the head of its queue")
    func delayOneTimer() {
        let run = Marbles.run("abcdef|") { $0.delay(for: 3, scheduler: $1) }
        #expect(run.output == "---abcdef|")
        #expect(run.maxPending == 1)
        #expect(run.scheduler.history.count == 7)  // one arm per value and the end: a chain, never a pile
        let burst = Marbles.run("(abcdef)--|") { $0.delay(for: 3, scheduler: $1) }
        #expect(burst.output == "---(abcdef)--|")
        #expect(burst.scheduler.history == [3, 3])  // one timer for the burst, one for the end
    }

    @Test(
        "delay holds the waiting values under the observer's buffering policy and counts the drops",
        arguments: [
            (BufferingPolicy.bufferingNewest(2), "---(ef)", 4),  // the head timer fires early and re-arms
            (BufferingPolicy.bufferingOldest(2), "--(ab)", 4),
            (BufferingPolicy.bufferingNewest(3), "--d(ef)", 3),
            (BufferingPolicy.unbounded, "--(abcd)(ef)", 0),
        ])
    func delayBuffering(policy: BufferingPolicy, expected: String, dropped: Int) {
        let run = Marbles.run("(abcd)(ef)", buffering: policy) { $0.delay(for: 2, scheduler: $1) }
        #expect(run.output == expected)
        #expect(run.recorder.observation.droppedCount == dropped)
    }

    @Test(
        "timeout finishes when no value comes within the interval, emitting the fallback first",
        arguments: [
            // input, fallback, expected output (interval 3 s)
            ("-a-b", "z", "-a-b--(z|)"),
            ("-a-b", nil, "-a-b--|"),
            ("", "z", "---(z|)"),
            ("-a|", "z", "-a|"),  // upstream's own end: no fallback
            ("a--b--c", nil, "a--|"),  // b arrives at the deadline: the timer wins the tie
        ] as [(String, String?, String)])
    func timeout(input: String, fallback: String?, expected: String) {
        let run = Marbles.run(input) { $0.timeout(3, scheduler: $1, fallback: fallback) }
        #expect(run.output == expected)
        #expect(run.maxPending == 1)
        #expect(run.scheduler.pendingCount == 0)
        #expect(run.source.observerCount == 0, "a timeout or an end releases the upstream observation")
    }

    @Test("the marble tables in the operators' doc comments hold")
    func docTables() {
        #expect(Marbles.run("ab--c|") { $0.debounce(for: 2, scheduler: $1) }.output == "---b-(c|)")
        #expect(Marbles.run("a(bc)---d|") { $0.throttle(for: 2, scheduler: $1, latest: true) }.output == "a-c--d|")
        #expect(Marbles.run("a(bc)---d|") { $0.throttle(for: 2, scheduler: $1, latest: false) }.output == "a-b--d|")
        #expect(Marbles.run("ab|") { $0.delay(for: 2, scheduler: $1) }.output == "--ab|")
        #expect(Marbles.run("-ab") { $0.timeout(2, scheduler: $1, fallback: "late") }.output == "-ab-(late|)")
    }

    @Test(
        "cancelling mid-way stops output, cancels the timer and releases the upstream observation",
        arguments: TimeOperator.allCases)
    func cancelMidway(op: TimeOperator) {
        let run = Marbles.run("ab!c-d|") { op.apply($0, $1) }
        #expect(run.scheduler.pendingCount == 0)
        #expect(run.source.observerCount == 0)
        #expect(run.recorder.events.allSatisfy { $0.time <= 2 }, "nothing after the cancel at 2 s")
        #expect(!run.recorder.events.contains { $0.event == .finished })
        #expect(run.recorder.observation.isCancelled)
    }

    @Test(
        "an observer that sends to the source from its handler is served in order, without deadlock",
        arguments: [
            (TimeOperator.debounce, "-ab"),
            (.throttleLatest, "ab"),
            (.throttleFirst, "ab"),
            (.delay, "-ab"),
            (.timeout, "(ab)|"),
        ])
    func reentrantSend(op: TimeOperator, expected: String) {
        // Interval 1 s here; the handler answers "a" with "b", once.
        let scheduler = VirtualTimeScheduler()
        let source = MutableEventStream<String>()
        let recorded = Locked<[(time: Double, event: SignalEvent<String>)]>([])
        let token = op.apply(source, scheduler, interval: 1).observeEvents(on: nil, buffering: .unbounded) {
            event in
            recorded.withLock { $0.append((scheduler.now, event)) }
            if event == .value("a") { source.send("b") }
        }
        source.send("a")
        for tick in 1...6 { scheduler.advance(to: Double(tick)) }
        #expect(Marbles.render(recorded.withLock { $0 }) == expected)
        token.cancel()
    }

    @Test("the observer's queue receives timer events and upstream events in one order")
    func observerQueue() {
        let scheduler = VirtualTimeScheduler()
        let source = MutableEventStream<Int>()
        let queue = DispatchQueue(label: "observer")
        let values = Locked<[Int]>([])
        let token = source.throttle(for: 1, scheduler: scheduler, latest: true).observe(on: queue) { value in
            dispatchPrecondition(condition: .onQueue(queue))
            values.withLock { $0.append(value) }
        }
        source.send(1)  // at once, on the queue
        source.send(2)
        scheduler.advance(by: 1)  // 2, from the timer, on the queue
        source.send(3)
        source.finish()  // 3 waits; the end brings it out
        queue.sync {}
        #expect(values.withLock { $0 } == [1, 2, 3])
        token.cancel()
    }
}

/// Each time operator with a fixed interval, for the tables that cover them all.
enum TimeOperator: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case debounce, throttleLatest, throttleFirst, delay, timeout

    var testDescription: String { rawValue }

    func apply<S: SignalScheduler>(
        _ source: MutableEventStream<String>,
        _ scheduler: S,
        interval: Double = 2
    ) -> AnySignal<String> {
        switch self {
        case .debounce: source.debounce(for: interval, scheduler: scheduler)
        case .throttleLatest: source.throttle(for: interval, scheduler: scheduler, latest: true)
        case .throttleFirst: source.throttle(for: interval, scheduler: scheduler, latest: false)
        case .delay: source.delay(for: interval, scheduler: scheduler)
        case .timeout: source.timeout(interval, scheduler: scheduler)
        }
    }
}
