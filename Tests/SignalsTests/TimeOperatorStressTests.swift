import Dispatch
import Testing

@testable import Signals

/// The timer operators on the real `DispatchScheduler`: values from several threads while timers fire, and
/// cancellation meanwhile (run under TSan). Intervals are a millisecond; the only wait is for the end, bounded.
@Suite("Time operators: stress")
struct TimeOperatorStressTests {
    static let threads = 4
    static let perThread = 2_000

    /// What an observer saw: per-sender order, overlapping calls, events after the end.
    final class Checker: Sendable {
        private struct State {
            var lastSeen = [Int](repeating: -1, count: TimeOperatorStressTests.threads)
            var outOfOrder = 0
            var inside = false
            var overlaps = 0
            var finished = false
            var afterFinish = 0
            var values = 0
        }
        private let state = Locked(State())
        let done = DispatchSemaphore(value: 0)

        func receive(_ event: SignalEvent<Int>) {
            let finished = state.withLock { state -> Bool in
                if state.inside { state.overlaps += 1 }
                state.inside = true
                if state.finished { state.afterFinish += 1 }
                switch event {
                case .value(let value):
                    let (thread, sequence) = value.quotientAndRemainder(dividingBy: TimeOperatorStressTests.perThread)
                    if sequence <= state.lastSeen[thread] { state.outOfOrder += 1 }
                    state.lastSeen[thread] = sequence
                    state.values += 1
                case .finished:
                    state.finished = true
                }
                state.inside = false
                return state.finished
            }
            if finished, case .finished = event { done.signal() }
        }

        var outOfOrder: Int { state.withLock { $0.outOfOrder } }
        var overlaps: Int { state.withLock { $0.overlaps } }
        var afterFinish: Int { state.withLock { $0.afterFinish } }
        var values: Int { state.withLock { $0.values } }
    }

    static func apply(_ op: TimeOperator, _ source: MutableEventStream<Int>) -> AnySignal<Int> {
        let scheduler = DispatchScheduler()
        let interval = 0.001
        switch op {
        case .debounce: return source.debounce(for: interval, scheduler: scheduler)
        case .throttleLatest: return source.throttle(for: interval, scheduler: scheduler, latest: true)
        case .throttleFirst: return source.throttle(for: interval, scheduler: scheduler, latest: false)
        case .delay: return source.delay(for: interval, scheduler: scheduler)
        case .timeout: return source.timeout(60, scheduler: scheduler)
        }
    }

    @Test(
        "values from four threads while timers fire: per-sender order kept, no overlap, nothing after the end",
        arguments: TimeOperator.allCases)
    func sendersAndTimers(op: TimeOperator) {
        let source = MutableEventStream<Int>()
        let checker = Checker()
        let token = Self.apply(op, source).observeEvents(on: nil, buffering: .unbounded, checker.receive)
        DispatchQueue.concurrentPerform(iterations: Self.threads) { thread in
            for sequence in 0..<Self.perThread { source.send(thread * Self.perThread + sequence) }
        }
        source.finish()
        #expect(checker.done.wait(timeout: .now() + 20) == .success, "the end arrived")
        #expect(checker.outOfOrder == 0)
        #expect(checker.overlaps == 0, "the observer ran concurrently with itself")
        #expect(checker.afterFinish == 0)
        if op == .delay || op == .timeout {
            #expect(checker.values == Self.threads * Self.perThread, "delay and timeout lose nothing")
        } else {
            #expect(checker.values >= 1)
        }
        token.cancel()
    }

    @Test(
        "cancelling while four threads send and timers fire: at most the event in flight arrives after cancel",
        arguments: TimeOperator.allCases)
    func cancelWhileBusy(op: TimeOperator) {
        let source = MutableEventStream<Int>()
        let cancelled = Locked(false)
        let late = Locked(0)
        let token = Self.apply(op, source).observeEvents(on: nil, buffering: .unbounded) { _ in
            if cancelled.withLock({ $0 }) { late.withLock { $0 += 1 } }
        }
        DispatchQueue.concurrentPerform(iterations: Self.threads) { thread in
            for sequence in 0..<Self.perThread {
                source.send(thread * Self.perThread + sequence)
                if thread == 0, sequence == Self.perThread / 2 {
                    token.cancel()
                    cancelled.withLock { $0 = true }
                }
            }
        }
        #expect(late.withLock { $0 } <= 1)
        #expect(source.observerCount == 0, "cancel released the upstream observation")
    }
}

@Suite("Time operators: lifetime")
struct TimeOperatorLifetimeTests {
    /// Observes `op` over a stream of tracked values, with the handler capturing a tracked object, and leaves
    /// a value pending in the operator (and its timer armed).
    private func observePending(
        _ op: TimeOperator,
        live: Locked<Int>,
        scheduler: VirtualTimeScheduler
    ) -> (MutableEventStream<LifetimeTracked>, SignalObservation) {
        let source = MutableEventStream<LifetimeTracked>()
        let signal: AnySignal<LifetimeTracked> =
            switch op {
            case .debounce: source.debounce(for: 2, scheduler: scheduler)
            case .throttleLatest: source.throttle(for: 2, scheduler: scheduler, latest: true)
            case .throttleFirst: source.throttle(for: 2, scheduler: scheduler, latest: false)
            case .delay: source.delay(for: 2, scheduler: scheduler)
            case .timeout: source.timeout(2, scheduler: scheduler, fallback: LifetimeTracked(live, id: 9))
            }
        let captured = LifetimeTracked(live, id: 1)
        let token = signal.observe { value in _ = (captured.id, value.id) }
        source.send(LifetimeTracked(live, id: 2))
        source.send(LifetimeTracked(live, id: 3))  // waits in debounce, throttle and delay
        return (source, token)
    }

    @Test(
        "cancelling releases the upstream observation, the handler's captures, pending values and timer work",
        arguments: TimeOperator.allCases)
    func cancelReleases(op: TimeOperator) {
        let live = Locked(0)
        let scheduler = VirtualTimeScheduler()
        let (source, token) = observePending(op, live: live, scheduler: scheduler)
        #expect(live.withLock { $0 } >= 1)
        #expect(scheduler.pendingCount == 1)
        token.cancel()
        #expect(live.withLock { $0 } == 0)
        #expect(scheduler.pendingCount == 0, "the armed timer was cancelled")
        #expect(source.observerCount == 0)
        scheduler.advance(by: 10)
        _ = token
    }

    @Test("releasing the token releases everything, as cancel does", arguments: TimeOperator.allCases)
    func releaseReleases(op: TimeOperator) {
        let live = Locked(0)
        let scheduler = VirtualTimeScheduler()
        let source: MutableEventStream<LifetimeTracked>
        do {
            let (stream, token) = observePending(op, live: live, scheduler: scheduler)
            source = stream
            _ = token
        }
        #expect(live.withLock { $0 } == 0)
        #expect(scheduler.pendingCount == 0)
        #expect(source.observerCount == 0)
    }

    @Test("the end releases the handler and what waited, once delivered", arguments: TimeOperator.allCases)
    func finishReleases(op: TimeOperator) {
        let live = Locked(0)
        let scheduler = VirtualTimeScheduler()
        let (source, token) = observePending(op, live: live, scheduler: scheduler)
        source.finish()
        scheduler.advance(by: 10)
        #expect(live.withLock { $0 } == 0)
        #expect(scheduler.pendingCount == 0)
        _ = token
    }
}
