import Dispatch
import Testing

@testable import Signals

@Suite("Stress")
struct StressTests {
    static let threads = 8
    static let perThread = 5_000

    @Test("eight threads sending at once lose nothing under an unbounded policy, in per-sender order")
    func unboundedLosesNothing() {
        let stream = MutableEventStream<Int>()
        let inHandler = Locked(false)
        let overlaps = Locked(0)
        let lastSeen = Locked([Int](repeating: -1, count: Self.threads))
        let outOfOrder = Locked(0)
        let count = Locked(0)
        let token = stream.observe { value in
            let wasInside = inHandler.withLock { inside -> Bool in
                defer { inside = true }
                return inside
            }
            if wasInside { overlaps.withLock { $0 += 1 } }
            let (thread, sequence) = value.quotientAndRemainder(dividingBy: Self.perThread)
            lastSeen.withLock { last in
                if sequence <= last[thread] { outOfOrder.withLock { $0 += 1 } }
                last[thread] = sequence
            }
            count.withLock { $0 += 1 }
            inHandler.withLock { $0 = false }
        }
        DispatchQueue.concurrentPerform(iterations: Self.threads) { thread in
            for sequence in 0..<Self.perThread { stream.send(thread * Self.perThread + sequence) }
        }
        #expect(count.withLock { $0 } == Self.threads * Self.perThread)
        #expect(overlaps.withLock { $0 } == 0, "the handler ran concurrently with itself")
        #expect(outOfOrder.withLock { $0 } == 0)
        token.cancel()
    }

    @Test("eight threads sending to a bounded queue observer: delivered plus dropped equals sent")
    func boundedCountsExactly() {
        let stream = MutableEventStream<Int>()
        let queue = DispatchQueue(label: "bounded")
        let delivered = Locked(0)
        let token = stream.observe(on: queue, buffering: .bufferingNewest(16)) { _ in
            delivered.withLock { $0 += 1 }
        }
        DispatchQueue.concurrentPerform(iterations: Self.threads) { _ in
            for value in 0..<Self.perThread { stream.send(value) }
        }
        queue.sync {}
        let total = Self.threads * Self.perThread
        #expect(delivered.withLock { $0 } + token.droppedCount == total)
        token.cancel()
    }

    @Test("observers come and go while eight threads send; a state ends at the last write")
    func churn() {
        let state = MutableStateValue(0)
        let last = Locked(-1)
        DispatchQueue.concurrentPerform(iterations: Self.threads) { thread in
            for step in 0..<500 {
                if thread.isMultiple(of: 2) {
                    state.update { $0 += 1 }
                } else {
                    let token = state.observe { value in last.withLock { $0 = max($0, value) } }
                    if step.isMultiple(of: 3) { token.cancel() }
                }
            }
        }
        #expect(state.value == Self.threads / 2 * 500)
        let final = Recorder(state)
        #expect(final.values == [Self.threads / 2 * 500])
    }
}

@Suite("Lifetime")
struct LifetimeTests {
    @Test("a cancelled observation releases its observer closure and what it captured")
    func cancelReleasesClosure() {
        let live = Locked(0)
        let stream = MutableEventStream<Int>()
        var token: SignalObservation?
        do {
            let tracked = LifetimeTracked(live)
            token = stream.observe { _ in _ = tracked.id }
        }
        #expect(live.withLock { $0 } == 1)
        token?.cancel()
        #expect(live.withLock { $0 } == 0)
        _ = token
    }

    @Test("an observer capturing its own source does not keep it alive once cancelled")
    func noCycleThroughSource() {
        weak var weakStorage: StreamStorage<Int>?
        var token: SignalObservation?
        do {
            let stream = MutableEventStream<Int>()
            weakStorage = stream.storage
            token = stream.observe { value in stream.send(value) }
            token?.cancel()
        }
        #expect(weakStorage == nil)
        _ = token
    }

    @Test("operator chains leave nothing alive after cancel")
    func operatorChainsRelease() {
        let live = Locked(0)
        weak var weakStorage: StateStorage<Int>?
        do {
            let a = MutableStateValue(1)
            let b = MutableStateValue(2)
            weakStorage = a.storage
            let tracked = LifetimeTracked(live)
            let token = combineLatest(a, b).map { $0 + $1 + tracked.id }.removeDuplicates().observe { _ in }
            a.value = 3
            token.cancel()
        }
        #expect(weakStorage == nil)
        #expect(live.withLock { $0 } == 0)
    }

    @Test("a finished stream releases its observers' closures")
    func finishReleases() {
        let live = Locked(0)
        let stream = MutableEventStream<Int>()
        let token: SignalObservation
        do {
            let tracked = LifetimeTracked(live)
            token = stream.observe { _ in _ = tracked.id }
        }
        stream.finish()
        #expect(live.withLock { $0 } == 0)
        _ = token
    }
}
