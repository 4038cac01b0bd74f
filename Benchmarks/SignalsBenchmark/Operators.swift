// The operator rows (issue 28): each operator of Signals next to the same work written by hand with AsyncStream
// and tasks, and on Apple platforms next to the Combine pipeline (CombineOperators.swift), in the same run.
//
// Every side gets the same inputs, sent in a loop by one producer, and feeds the same `Tally`; each side's time
// runs from the first send to the moment its last output has been received (wall-clock time). The Signals side
// observes without a queue, so it delivers on the sending thread: one thread, except for delay's timer. The
// AsyncStream side is a consumer task fed by `AsyncStream.makeStream()` (unbounded), written inline in that task,
// the way an app without Signals writes it, with no intermediate stream; its producer and consumer may run on
// both cores at once. Each run checks what Signals delivered (count, sum, order) and prints any difference; the
// AsyncStream side may legitimately deliver less (switchToLatest, withLatestFrom), which the row then prints.
// What each row measures:
//
// - zip: `count` pairs. The producer sends to `a`, then to `b`, alternately, so each pair waits for one value.
//   AsyncStream: two streams; the consumer awaits the next value of each, in turn. Combine: `Publishers.Zip`
//   of two `PassthroughSubject`s.
// - withLatestFrom: `count` values of the trigger; the other input gets a new value before every 8th.
//   AsyncStream: one task stores the other stream's values in a shared, locked "latest"; the consumer of
//   the triggers reads it (a trigger that finds none yet is dropped, as Signals drops one). Combine: none.
// - switchToLatest: `count` values through a new inner source every 10 values; each inner source finishes after
//   its 10 values. AsyncStream: a stream of inner streams; the consumer starts a task per inner stream and
//   cancels the previous one at the switch. Combine: a subject of subjects, `switchToLatest()`.
// - prepend: `count` deliveries in cycles of 16: observe the live source through `prepend` of 8 values, send
//   8 live values, cancel; `prepend` is applied per cycle, as an app writes `live.prepend(history).observe`.
//   AsyncStream: per cycle a new stream and a consumer task that handles the 8 values
//   before its `for await` over the stream; the producer yields 8, finishes, awaits the task. Combine:
//   `prepend(_:)` of a sequence on a subject, `sink`, `cancel()`.
// - debounce, throttle, timeout: `count` values, sent in a loop, with an interval of one hour, so that no timer
//   fires during the run: what the row measures is what every value costs while it passes through (or is
//   absorbed by) the operator. A debounce absorbs every value and emits the last one when the input finishes;
//   a throttle (`latest: true`) emits the first at once and the last when the input finishes; a timeout passes
//   every value on. Signals runs on `DispatchScheduler()`, and arms one timer per observation (a debounce's
//   deadline moves with each value; a throttle arms one at its second value; a timeout arms one at the start).
//   AsyncStream: the consumer task does what the operator does, with the same one-timer design: it reads
//   `DispatchTime.now()` per value and updates a state under a lock that it shares with one timer task
//   (`Task.sleep(nanoseconds:)`), started when Signals arms its timer and cancelled at the end. (A task per
//   value, cancelled by the next, is the other common way to write a debounce or a timeout; it would cost the
//   AsyncStream side a task and a runtime timer per value.) Combine: `debounce`, `throttle(latest: true)` and
//   `timeout` on a serial `DispatchQueue`, which Combine delivers their outputs on (a timeout's every value); the
//   run ends once the queue has run what was scheduled on it to run at once.
// - delay: `count` values delayed by 1 ms, end to end: from the first send until the end, delayed behind
//   every value, has been delivered; every value is delivered, in order. Signals: `DispatchScheduler()`,
//   one timer for the value at the head, which delivers every due value on the timer's thread. AsyncStream:
//   the producer stamps each value with `DispatchTime.now()`; the consumer sleeps until the head's stamp + 1 ms
//   when that has not passed yet (once it lags behind by 1 ms it never sleeps). Combine: `delay` on a serial
//   `DispatchQueue`, one scheduled block per value.
import Dispatch
import Foundation
import Signals

/// What reaches the end of a pipeline: checked against what the operator must deliver. Observers, timer threads
/// and tasks add to it from several threads.
final class Tally: Sendable {
    private let state = Locked(Snapshot())

    struct Snapshot {
        var count = 0
        var sum = 0
        var last: Int?
        var ordered = true
    }

    @inline(never)
    func add(_ value: Int) {
        state.withLock { state in
            state.count += 1
            state.sum &+= value
            if let last = state.last, value <= last { state.ordered = false }
            state.last = value
        }
    }

    var snapshot: Snapshot { state.withLock { $0 } }
}

/// One run of one side: its time and what it delivered.
struct Measured {
    var seconds: Double
    var delivered: Tally.Snapshot
}

func measure(_ tally: Tally, _ body: () -> Void) -> Measured {
    let time = seconds(body)
    return Measured(seconds: time, delivered: tally.snapshot)
}

func measureAsync(_ tally: Tally, _ body: () async -> Void) async -> Measured {
    let time = await secondsAsync(body)
    return Measured(seconds: time, delivered: tally.snapshot)
}

private func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// One hour: the interval of the rows in which no timer may fire.
private let hour: TimeInterval = 3600
private let hourNanoseconds: UInt64 = 3_600_000_000_000
/// The delay row's interval.
private let delayInterval: TimeInterval = 0.001
private let delayNanoseconds: UInt64 = 1_000_000
/// switchToLatest: values per inner source.
let switchEvery = 10
/// prepend: values prepended, and live values sent, per cycle.
let prependCount = 8

/// The operators measured, in the order of the rows.
enum Operator: CaseIterable {
    case zip, withLatestFrom, switchToLatest, prepend, debounce, throttle, delay, timeout

    var label: String {
        switch self {
        case .zip: return "zip (pairs)"
        case .withLatestFrom: return "withLatestFrom (values)"
        case .switchToLatest: return "switchToLatest, switch per 10"
        case .prepend: return "prepend, 8 + 8 per observation"
        case .debounce: return "debounce 1 h (values absorbed)"
        case .throttle: return "throttle 1 h (values absorbed)"
        case .delay: return "delay 1 ms, end to end"
        case .timeout: return "timeout 1 h (values passed)"
        }
    }

    /// This row's count for a run of `values`: whole cycles of 16 deliveries for prepend, else `values`.
    func count(values: Int) -> Int {
        guard self == .prepend else { return values }
        return max(values / (2 * prependCount), 1) * 2 * prependCount
    }

    /// What Signals must deliver for `count`; a description of the difference, or nil.
    func problem(_ delivered: Tally.Snapshot, count: Int) -> String? {
        let all = count * (count - 1) / 2  // 0 + 1 + … + (count - 1)
        let expected: (count: Int, sum: Int, ordered: Bool)
        switch self {
        case .zip:
            expected = (count, 2 * all, true)
        case .withLatestFrom:
            expected = (count, all + (0..<count).reduce(0) { $0 + $1 / 8 * 8 }, true)
        case .switchToLatest, .delay, .timeout:
            expected = (count, all, true)
        case .prepend:
            let cycles = count / (2 * prependCount)
            expected = (count, cycles * (2 * prependCount) * (2 * prependCount - 1) / 2, delivered.ordered)
        case .debounce:
            expected = (1, count - 1, true)
        case .throttle:
            expected = (min(count, 2), count - 1, true)
        }
        if delivered.count == expected.count, delivered.sum == expected.sum, delivered.ordered == expected.ordered {
            return nil
        }
        return "delivered \(delivered.count) values (sum \(delivered.sum), \(delivered.ordered ? "" : "not ")in order),"
            + " expected \(expected.count) (sum \(expected.sum), in order)"
    }

    func signals(_ count: Int) -> Measured {
        switch self {
        case .zip: return signalsZip(count)
        case .withLatestFrom: return signalsWithLatestFrom(count)
        case .switchToLatest: return signalsSwitchToLatest(count)
        case .prepend: return signalsPrepend(count)
        case .debounce: return signalsTimed(count) { $0.debounce(for: hour, scheduler: DispatchScheduler()) }
        case .throttle:
            return signalsTimed(count) { $0.throttle(for: hour, scheduler: DispatchScheduler(), latest: true) }
        case .delay: return signalsDelay(count)
        case .timeout: return signalsTimed(count) { $0.timeout(hour, scheduler: DispatchScheduler()) }
        }
    }

    func asyncStream(_ count: Int) async -> Measured {
        switch self {
        case .zip: return await asyncStreamZip(count)
        case .withLatestFrom: return await asyncStreamWithLatestFrom(count)
        case .switchToLatest: return await asyncStreamSwitchToLatest(count)
        case .prepend: return await asyncStreamPrepend(count)
        case .debounce: return await asyncStreamDebounce(count)
        case .throttle: return await asyncStreamThrottle(count)
        case .delay: return await asyncStreamDelay(count)
        case .timeout: return await asyncStreamTimeout(count)
        }
    }
}

// MARK: Signals

private func signalsZip(_ count: Int) -> Measured {
    let a = MutableEventStream<Int>()
    let b = MutableEventStream<Int>()
    let tally = Tally()
    let token = zip(a, b).observe { pair in tally.add(pair.0 &+ pair.1) }
    defer { token.cancel() }
    return measure(tally) {
        for value in 0..<count {
            a.send(value)
            b.send(value)
        }
    }
}

private func signalsWithLatestFrom(_ count: Int) -> Measured {
    let triggers = MutableEventStream<Int>()
    let other = MutableEventStream<Int>()
    let tally = Tally()
    let token = triggers.withLatestFrom(other).observe { pair in tally.add(pair.0 &+ pair.1) }
    defer { token.cancel() }
    return measure(tally) {
        for value in 0..<count {
            if value % 8 == 0 { other.send(value) }
            triggers.send(value)
        }
    }
}

private func signalsSwitchToLatest(_ count: Int) -> Measured {
    let outer = MutableEventStream<MutableEventStream<Int>>()
    let tally = Tally()
    let token = outer.switchToLatest().observe { tally.add($0) }
    defer { token.cancel() }
    return measure(tally) {
        for start in stride(from: 0, to: count, by: switchEvery) {
            let inner = MutableEventStream<Int>()
            outer.send(inner)
            for value in start..<min(start + switchEvery, count) { inner.send(value) }
            inner.finish()
        }
        outer.finish()
    }
}

private func signalsPrepend(_ count: Int) -> Measured {
    let live = MutableEventStream<Int>()
    let history = Array(0..<prependCount)
    let tally = Tally()
    return measure(tally) {
        for _ in 0..<count / (2 * prependCount) {
            let token = live.prepend(history).observe { tally.add($0) }
            for value in prependCount..<2 * prependCount { live.send(value) }
            token.cancel()
        }
    }
}

/// `count` values through `apply(input)`, then the input's end; everything the operator emits meanwhile, and
/// at the end, arrives on this thread.
private func signalsTimed(_ count: Int, _ apply: (MutableEventStream<Int>) -> AnySignal<Int>) -> Measured {
    let input = MutableEventStream<Int>()
    let tally = Tally()
    let token = apply(input).observe { tally.add($0) }
    defer { token.cancel() }
    return measure(tally) {
        for value in 0..<count { input.send(value) }
        input.finish()
    }
}

private func signalsDelay(_ count: Int) -> Measured {
    let input = MutableEventStream<Int>()
    let tally = Tally()
    let done = DispatchSemaphore(value: 0)
    let token = input.delay(for: delayInterval, scheduler: DispatchScheduler())
        .observe(onValue: { tally.add($0) }, onFinish: { done.signal() })
    defer { token.cancel() }
    return measure(tally) {
        for value in 0..<count { input.send(value) }
        input.finish()
        done.wait()
    }
}

// MARK: AsyncStream

private func asyncStreamZip(_ count: Int) async -> Measured {
    let (a, aInput) = AsyncStream<Int>.makeStream()
    let (b, bInput) = AsyncStream<Int>.makeStream()
    let tally = Tally()
    return await measureAsync(tally) {
        let consumer = Task {
            var aValues = a.makeAsyncIterator()
            var bValues = b.makeAsyncIterator()
            while let first = await aValues.next(), let second = await bValues.next() {
                tally.add(first &+ second)
            }
        }
        for value in 0..<count {
            aInput.yield(value)
            bInput.yield(value)
        }
        aInput.finish()
        bInput.finish()
        await consumer.value
    }
}

private func asyncStreamWithLatestFrom(_ count: Int) async -> Measured {
    let (triggers, triggerInput) = AsyncStream<Int>.makeStream()
    let (others, otherInput) = AsyncStream<Int>.makeStream()
    let tally = Tally()
    let latest = Locked<Int?>(nil)
    return await measureAsync(tally) {
        let follower = Task {
            for await value in others { latest.withLock { $0 = value } }
        }
        let consumer = Task {
            for await value in triggers {
                if let other = latest.withLock({ $0 }) { tally.add(value &+ other) }
            }
        }
        for value in 0..<count {
            if value % 8 == 0 { otherInput.yield(value) }
            triggerInput.yield(value)
        }
        otherInput.finish()
        triggerInput.finish()
        await consumer.value
        follower.cancel()  // the output ends with the triggers
    }
}

private func asyncStreamSwitchToLatest(_ count: Int) async -> Measured {
    let (outer, outerInput) = AsyncStream<AsyncStream<Int>>.makeStream()
    let tally = Tally()
    return await measureAsync(tally) {
        let consumer = Task {
            var current: Task<Void, Never>?
            for await inner in outer {
                current?.cancel()
                current = Task {
                    for await value in inner { tally.add(value) }
                }
            }
            await current?.value
        }
        for start in stride(from: 0, to: count, by: switchEvery) {
            let (inner, innerInput) = AsyncStream<Int>.makeStream()
            outerInput.yield(inner)
            for value in start..<min(start + switchEvery, count) { innerInput.yield(value) }
            innerInput.finish()
        }
        outerInput.finish()
        await consumer.value
    }
}

private func asyncStreamPrepend(_ count: Int) async -> Measured {
    let history = Array(0..<prependCount)
    let tally = Tally()
    return await measureAsync(tally) {
        for _ in 0..<count / (2 * prependCount) {
            let (live, liveInput) = AsyncStream<Int>.makeStream()
            let consumer = Task {
                for value in history { tally.add(value) }
                for await value in live { tally.add(value) }
            }
            for value in prependCount..<2 * prependCount { liveInput.yield(value) }
            liveInput.finish()
            await consumer.value
        }
    }
}

/// Sleeps until `deadline` (in `DispatchTime` nanoseconds); false if cancelled.
private func sleep(until deadline: UInt64) async -> Bool {
    let now = nanoseconds()
    guard deadline > now else { return !Task.isCancelled }
    do {
        try await Task.sleep(nanoseconds: deadline - now)
        return true
    } catch {
        return false
    }
}

private struct DebounceState: Sendable {
    var pending: Int?
    var deadline: UInt64 = 0
    var armed = false
}

private func asyncStreamDebounce(_ count: Int) async -> Measured {
    let (input, continuation) = AsyncStream<Int>.makeStream()
    let tally = Tally()
    let state = Locked(DebounceState())
    return await measureAsync(tally) {
        let consumer = Task {
            var timer: Task<Void, Never>?
            for await value in input {
                let now = nanoseconds()
                let arm = state.withLock { state -> Bool in
                    state.pending = value
                    state.deadline = now + hourNanoseconds
                    defer { state.armed = true }
                    return !state.armed
                }
                guard arm else { continue }
                timer = Task {
                    // One timer: it sleeps until the deadline, which later values move, and emits when it holds.
                    while await sleep(until: state.withLock({ $0.deadline })) {
                        let due = state.withLock { state -> Int? in
                            guard nanoseconds() >= state.deadline, let value = state.pending else { return nil }
                            state.pending = nil
                            state.armed = false
                            return value
                        }
                        if let due {
                            tally.add(due)
                            return
                        }
                    }
                }
            }
            timer?.cancel()
            if let last = state.withLock({ $0.pending }) { tally.add(last) }
        }
        for value in 0..<count { continuation.yield(value) }
        continuation.finish()
        await consumer.value
    }
}

private struct ThrottleState: Sendable {
    var pending: Int?
    var lastEmitted: UInt64?
}

/// What a throttle does with a value: emit it now, keep it for the armed timer, or keep it and arm the timer.
private enum ThrottleAction {
    case emit
    case keep
    case arm(end: UInt64)
}

private func asyncStreamThrottle(_ count: Int) async -> Measured {
    let (input, continuation) = AsyncStream<Int>.makeStream()
    let tally = Tally()
    let state = Locked(ThrottleState())
    return await measureAsync(tally) {
        let consumer = Task {
            var timer: Task<Void, Never>?
            for await value in input {
                let now = nanoseconds()
                let action = state.withLock { state -> ThrottleAction in
                    if state.pending != nil {
                        state.pending = value  // latest: true
                        return .keep
                    }
                    if let last = state.lastEmitted, now - last < hourNanoseconds {
                        state.pending = value
                        return .arm(end: last + hourNanoseconds)
                    }
                    state.lastEmitted = now
                    return .emit
                }
                switch action {
                case .emit:
                    tally.add(value)
                case .keep:
                    break
                case .arm(let end):
                    timer = Task {
                        guard await sleep(until: end) else { return }
                        let due = state.withLock { state -> Int? in
                            defer { state.pending = nil }
                            state.lastEmitted = nanoseconds()
                            return state.pending
                        }
                        if let due { tally.add(due) }
                    }
                }
            }
            timer?.cancel()
            if let last = state.withLock({ $0.pending }) { tally.add(last) }
        }
        for value in 0..<count { continuation.yield(value) }
        continuation.finish()
        await consumer.value
    }
}

private func asyncStreamDelay(_ count: Int) async -> Measured {
    let (input, continuation) = AsyncStream<(value: Int, sent: UInt64)>.makeStream()
    let tally = Tally()
    return await measureAsync(tally) {
        let consumer = Task {
            for await (value, sent) in input {
                _ = await sleep(until: sent + delayNanoseconds)
                tally.add(value)
            }
        }
        for value in 0..<count { continuation.yield((value, nanoseconds())) }
        continuation.finish()
        await consumer.value
    }
}

private func asyncStreamTimeout(_ count: Int) async -> Measured {
    let (input, continuation) = AsyncStream<Int>.makeStream()
    let tally = Tally()
    let deadline = Locked(nanoseconds() + hourNanoseconds)
    return await measureAsync(tally) {
        let consumer = Task {
            // The watchdog: one timer, from the start; it ends the input once a whole interval passed silently.
            let watchdog = Task {
                while await sleep(until: deadline.withLock({ $0 })) {
                    if nanoseconds() >= deadline.withLock({ $0 }) {
                        continuation.finish()
                        return
                    }
                }
            }
            for await value in input {
                let now = nanoseconds()
                deadline.withLock { $0 = now + hourNanoseconds }
                tally.add(value)
            }
            watchdog.cancel()
        }
        for value in 0..<count { continuation.yield(value) }
        continuation.finish()
        await consumer.value
    }
}

// MARK: report

private func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
}

private func megaRate(_ count: Int, _ time: Double) -> String {
    String(format: "%6.2f M/s", Double(count) / time / 1e6)
}

/// The best of `runs` runs, and any run whose deliveries were wrong.
private struct Best {
    var best = Measured(seconds: .infinity, delivered: Tally.Snapshot())
    var counts: [Int] = []

    mutating func add(_ run: Measured) {
        if run.seconds < best.seconds { best = run }
        counts.append(run.delivered.count)
    }
}

/// Runs every operator row with `values` values (pairs for zip, deliveries for prepend), each side 5 times;
/// the best run counts.
@MainActor
func runOperatorRows(values: Int) async {
    #if canImport(Combine)
        let platform = ""
    #else
        let platform = "; no Combine on this platform"
    #endif
    print(
        "operators: \(values) values per row, best of 5; ratio = Signals time ÷ the other's for the same work"
            + " (above 1: Signals slower)" + platform)
    for op in Operator.allCases {
        let count = op.count(values: values)
        var signals = Best()
        var asyncStream = Best()
        var problems: [String] = []
        for _ in 0..<5 {
            let run = op.signals(count)
            if let problem = op.problem(run.delivered, count: count) { problems.append(problem) }
            signals.add(run)
        }
        for _ in 0..<5 { asyncStream.add(await op.asyncStream(count)) }
        var line =
            pad(op.label, 32) + pad(String(count), 9) + " Signals " + megaRate(count, signals.best.seconds)
            + "   AsyncStream " + megaRate(count, asyncStream.best.seconds)
            + String(format: " %6.2fx", signals.best.seconds / asyncStream.best.seconds)
        #if canImport(Combine)
            if let combine = op.combine(count) {
                var runs = Best()
                for _ in 0..<5 { runs.add(combine()) }
                line +=
                    "   Combine " + megaRate(count, runs.best.seconds)
                    + String(format: " %6.2fx", signals.best.seconds / runs.best.seconds)
            } else {
                line += "   Combine: none"
            }
        #endif
        print(line)
        // What the AsyncStream side delivered when its rules let it deliver less (a trigger before any latest
        // value, a switch that cancels a task before it read its inner stream).
        let expected = signals.best.delivered.count
        if let fewest = asyncStream.counts.min(), let most = asyncStream.counts.max(), fewest != expected {
            print("    AsyncStream delivered \(fewest)–\(most) of Signals' \(expected)")
        }
        for problem in Set(problems).sorted() { print("    SIGNALS WRONG: \(problem)") }
    }
}
