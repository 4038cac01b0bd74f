import Dispatch

@testable import Signals

/// Marble timelines for the time operators: one character per tick of virtual time (one second).
///
/// `a`…`z` (any other character) is a value, `-` nothing, `|` the end, `!` (input only) cancels the observation,
/// and `(ab|)` groups events that happen in one tick. `"a--b-|"` sends `a` at 0 s, `b` at 3 s and finishes at 5 s.
///
/// At each tick, time moves there first (timers due by then fire), then the tick's input is sent; so a timer
/// and an input at the same tick come out timer first.
enum Marbles {
    /// The events of each tick of `timeline`.
    static func parse(_ timeline: String) -> [[Step]] {
        var ticks: [[Step]] = []
        var group: [Step]?
        for character in timeline {
            let step: Step?
            switch character {
            case "-": step = nil
            case "|": step = .finish
            case "!": step = .cancel
            case "(":
                group = []
                continue
            case ")":
                ticks.append(group ?? [])
                group = nil
                continue
            default: step = .value(String(character))
            }
            if group != nil {
                if let step { group?.append(step) }
            } else {
                ticks.append(step.map { [$0] } ?? [])
            }
        }
        return ticks
    }

    /// `events` (each at the time it arrived) as a timeline, without trailing `-`.
    static func render(_ events: [(time: Double, event: SignalEvent<String>)]) -> String {
        guard let last = events.last else { return "" }
        let count = Int(last.time.rounded()) + 1
        var ticks = [[String]](repeating: [], count: count)
        for (time, event) in events {
            switch event {
            case .value(let value): ticks[Int(time.rounded())].append(value)
            case .finished: ticks[Int(time.rounded())].append("|")
            }
        }
        return ticks.map { tick in
            switch tick.count {
            case 0: "-"
            case 1: tick[0]
            default: "(" + tick.joined() + ")"
            }
        }.joined()
    }

    /// Plays `input` into a stream, observes `apply(stream, scheduler)` on virtual time, and runs on for
    /// `extra` ticks after the input ends.
    static func run(
        _ input: String,
        extra: Int = 10,
        buffering: BufferingPolicy = .unbounded,
        _ apply: (MutableEventStream<String>, VirtualTimeScheduler) -> AnySignal<String>
    ) -> Run {
        let scheduler = VirtualTimeScheduler()
        let source = MutableEventStream<String>()
        let recorder = TimedRecorder(apply(source, scheduler), scheduler: scheduler, buffering: buffering)
        var maxPending = scheduler.pendingCount
        let ticks = parse(input)
        for (tick, steps) in ticks.enumerated() {
            scheduler.advance(to: Double(tick))
            for step in steps {
                switch step {
                case .value(let value): source.send(value)
                case .finish: source.finish()
                case .cancel: recorder.observation.cancel()
                }
            }
            maxPending = max(maxPending, scheduler.pendingCount)
        }
        for tick in ticks.count..<(ticks.count + extra) {
            scheduler.advance(to: Double(tick))
            maxPending = max(maxPending, scheduler.pendingCount)
        }
        return Run(
            output: render(recorder.events), scheduler: scheduler, source: source, recorder: recorder,
            maxPending: maxPending)
    }

    enum Step {
        case value(String)
        case finish
        case cancel
    }

    /// What ``Marbles/run(_:extra:buffering:_:)`` saw.
    struct Run {
        /// The output timeline.
        let output: String
        let scheduler: VirtualTimeScheduler
        let source: MutableEventStream<String>
        let recorder: TimedRecorder<String>
        /// The most timers pending at once, checked after every tick.
        let maxPending: Int
    }
}

/// Records every event with the scheduler's time when it arrived.
final class TimedRecorder<Element: Sendable>: Sendable {
    private let recorded: Locked<[(time: Double, event: SignalEvent<Element>)]>
    let observation: SignalObservation

    init<S: Signal>(
        _ signal: S,
        scheduler: some SignalScheduler,
        buffering: BufferingPolicy = .unbounded
    ) where S.Element == Element {
        let recorded = Locked<[(time: Double, event: SignalEvent<Element>)]>([])
        self.recorded = recorded
        observation = signal.observeEvents(on: nil, buffering: buffering) { event in
            let now = scheduler.now
            recorded.withLock { $0.append((now, event)) }
        }
    }

    var events: [(time: Double, event: SignalEvent<Element>)] { recorded.withLock { $0 } }
}
