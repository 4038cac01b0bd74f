// Deliveries per second through Signals, against two baselines measured in the same run:
// a plain closure call (the limit: what one delivery can cost at best) and AsyncStream.
// Then one row per operator of issue 28 (zip, withLatestFrom, switchToLatest, prepend, debounce, throttle,
// delay, timeout) next to the same work written with AsyncStream and tasks, and on Apple platforms next to the
// Combine pipeline (Operators.swift says what each row measures; CombineOperators.swift is the Combine side).
//
//     swift run -c release SignalsBenchmark [deliveries]
//
// Each case runs 5 times; the best run counts. Ratios above 1 mean slower than the baseline. The operator rows
// send deliveries ÷ 20 values each: a Signals operator costs 1.5–8 times a plain send, and the whole default run
// stays under a minute on a 2-core machine (the default was 2,000,000 deliveries before the operator rows).
import Dispatch
import Foundation
import Signals

let deliveries = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 1_000_000
let fanOut = 100

/// Keeps results observable so the optimizer cannot drop the loops.
final class Sink: @unchecked Sendable {
    // Guarded by `lock` when touched from observers; the closure baseline uses `total` single-threaded.
    let lock = NSLock()
    var total = 0

    @inline(never)
    func add(_ value: Int) {
        lock.lock()
        total &+= value
        lock.unlock()
    }
}

func seconds(_ body: () -> Void) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func secondsAsync(_ body: () async -> Void) async -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func best(_ runs: Int = 5, _ body: () -> Double) -> Double {
    (0..<runs).map { _ in body() }.min() ?? .infinity
}

func bestAsync(_ runs: Int = 5, _ body: () async -> Double) async -> Double {
    var result = Double.infinity
    for _ in 0..<runs { result = min(result, await body()) }
    return result
}

// MARK: baselines

func closureBaseline(observers: Int) -> Double {
    let sink = Sink()
    let handlers: [(Int) -> Void] = (0..<observers).map { _ in { sink.add($0) } }
    let perObserver = deliveries / observers
    return seconds {
        for value in 0..<perObserver {
            for handler in handlers { handler(value) }
        }
    }
}

func asyncStreamBaseline(observers: Int) async -> Double {
    let perObserver = deliveries / observers
    let pairs = (0..<observers).map { _ in AsyncStream<Int>.makeStream() }
    return await secondsAsync {
        await withTaskGroup(of: Int.self) { group in
            for (stream, _) in pairs {
                group.addTask {
                    var total = 0
                    for await value in stream { total &+= value }
                    return total
                }
            }
            for value in 0..<perObserver {
                for (_, continuation) in pairs { continuation.yield(value) }
            }
            for (_, continuation) in pairs { continuation.finish() }
            for await _ in group {}
        }
    }
}

// MARK: Signals

func stateValueOneObserver() -> Double {
    let state = MutableStateValue(-1)
    let sink = Sink()
    let token = state.observe { sink.add($0) }
    defer { token.cancel() }
    return seconds {
        for value in 0..<deliveries { state.value = value }
    }
}

func streamSend(observers: Int) -> Double {
    let stream = MutableEventStream<Int>()
    let sink = Sink()
    let tokens = (0..<observers).map { _ in stream.observe { sink.add($0) } }
    defer { for token in tokens { token.cancel() } }
    let perObserver = deliveries / observers
    return seconds {
        for value in 0..<perObserver { stream.send(value) }
    }
}

func valuesIteration() async -> Double {
    let stream = MutableEventStream<Int>()
    return await secondsAsync {
        // The iterator observes from creation, so it exists before the first send.
        let iterator = stream.values.makeAsyncIterator()
        let consumer = Task {
            var iterator = iterator
            var total = 0
            while let value = await iterator.next() { total &+= value }
            return total
        }
        for value in 0..<deliveries { stream.send(value) }
        stream.finish()
        _ = await consumer.value
    }
}

// MARK: report

func rate(_ time: Double) -> String {
    String(format: "%7.2f M/s", Double(deliveries) / time / 1e6)
}

/// `name` padded to the rows' first column (Foundation's `%-34@` does not pad on Linux).
func label(_ name: String) -> String {
    name.count >= 34 ? name : name + String(repeating: " ", count: 34 - name.count)
}

func row(_ name: String, _ time: Double, closure: Double, asyncStream: Double) {
    let line = String(
        format: "%@ %@   vs closure %6.1fx   vs AsyncStream %5.2fx",
        label(name) as NSString, rate(time) as NSString, time / closure, time / asyncStream)
    print(line)
}

print(
    "SignalsBenchmark: \(deliveries) deliveries per case, best of 5, \(ProcessInfo.processInfo.activeProcessorCount) cores"
)
let closureOne = best { closureBaseline(observers: 1) }
let closureFan = best { closureBaseline(observers: fanOut) }
let asyncOne = await bestAsync { await asyncStreamBaseline(observers: 1) }
let asyncFan = await bestAsync { await asyncStreamBaseline(observers: fanOut) }
print(label("baseline: closure call") + " " + rate(closureOne))
print(label("baseline: closure, 100 observers") + " " + rate(closureFan))
print(label("baseline: AsyncStream") + " " + rate(asyncOne))
print(label("baseline: AsyncStream x100") + " " + rate(asyncFan))
row("StateValue set, 1 observer", best { stateValueOneObserver() }, closure: closureOne, asyncStream: asyncOne)
row("EventStream send, 1 observer", best { streamSend(observers: 1) }, closure: closureOne, asyncStream: asyncOne)
row(
    "EventStream fan-out, 100 observers", best { streamSend(observers: fanOut) }, closure: closureFan,
    asyncStream: asyncFan)
row("for await over values", await bestAsync { await valuesIteration() }, closure: closureOne, asyncStream: asyncOne)
await runOperatorRows(values: max(deliveries / 20, 1))
