import Testing

@testable import Signals

@Suite("switchToLatest")
struct SwitchToLatestTests {
    /// A step of a timeline: the outer switches to inner `n`, inner `n` sends or finishes, or the outer finishes.
    enum Step: Sendable, CustomStringConvertible {
        case switchTo(Int)
        case send(Int, Int)
        case finishInner(Int)
        case finishOuter

        var description: String {
            switch self {
            case .switchTo(let inner): "->\(inner)"
            case .send(let inner, let value): "\(inner):\(value)"
            case .finishInner(let inner): "\(inner)|"
            case .finishOuter: "|"
            }
        }
    }

    @Test(
        "switchToLatest passes on the newest inner signal's values and finishes when the outer and it have",
        arguments: [
            // An old inner signal that still sends after the switch is ignored.
            (
                [Step.switchTo(0), .send(0, 1), .switchTo(1), .send(0, 2), .send(1, 10), .send(1, 11)], [1, 10, 11],
                false
            ),
            // The inner signal's end does not end the output.
            ([Step.switchTo(0), .send(0, 1), .finishInner(0), .switchTo(1), .send(1, 2)], [1, 2], false),
            // The outer's end waits for the current inner signal's.
            ([Step.switchTo(0), .finishOuter, .send(0, 1), .finishInner(0)], [1], true),
            ([Step.switchTo(0), .send(0, 1), .finishInner(0), .finishOuter], [1], true),
            ([Step.finishOuter], [], true),
            // A replaced inner signal's end is not the current one's.
            ([Step.switchTo(0), .switchTo(1), .finishOuter, .finishInner(0), .send(1, 5), .finishInner(1)], [5], true),
            // Switching back to a signal observes it afresh.
            ([Step.switchTo(0), .switchTo(1), .switchTo(0), .send(1, 9), .send(0, 3)], [3], false),
        ])
    func table(timeline: [Step], expected: [Int], finished: Bool) {
        let inners = [MutableEventStream<Int>(), MutableEventStream<Int>()]
        let outer = MutableEventStream<AnySignal<Int>>()
        let recorder = Recorder(outer.switchToLatest())
        for step in timeline {
            switch step {
            case .switchTo(let inner): outer.send(inners[inner].eraseToAnySignal())
            case .send(let inner, let value): inners[inner].send(value)
            case .finishInner(let inner): inners[inner].finish()
            case .finishOuter: outer.finish()
            }
        }
        #expect(recorder.history == expected.map { .value($0) } + (finished ? [.finished] : []), "\(timeline)")
    }

    @Test("the messages shown follow the room the user picked, each room's state replayed at the switch")
    func roomSwitching() {
        let rooms = ["lobby": MutableStateValue("welcome"), "dev": MutableStateValue("build is green")]
        let selectedRoom = MutableStateValue("lobby")
        let shown = selectedRoom.map { room in (rooms[room] ?? MutableStateValue("?")).eraseToAnySignal() }
            .switchToLatest()
        let recorder = Recorder(shown)
        rooms["lobby"]?.value = "hi"
        selectedRoom.value = "dev"
        rooms["lobby"]?.value = "anyone?"
        rooms["dev"]?.value = "deploying"
        #expect(recorder.values == ["welcome", "hi", "build is green", "deploying"])
    }

    @Test("inner signals that deliver and finish inside observe (just) are passed on in order")
    func synchronousInners() {
        let outer = MutableEventStream<AnySignal<Int>>()
        let recorder = Recorder(outer.switchToLatest())
        outer.send(.just(1))
        outer.send(.empty)
        outer.send(.just(2))
        #expect(!recorder.isFinished)
        outer.finish()
        #expect(recorder.history == [.value(1), .value(2), .finished])
    }

    @Test("an observer that switches from its handler: the old inner signal's later values never arrive")
    func reentrantSwitch() {
        let a = MutableEventStream<Int>()
        let b = MutableStateValue(100)
        let outer = MutableEventStream<AnySignal<Int>>()
        let seen = Locked<[Int]>([])
        let token = outer.switchToLatest().observe { value in
            seen.withLock { $0.append(value) }
            if value == 2 {
                outer.send(b.eraseToAnySignal())  // switches while a's delivery runs
                a.send(3)
                b.value = 101
            }
        }
        outer.send(a.eraseToAnySignal())
        a.send(1)
        a.send(2)
        a.send(4)
        #expect(seen.withLock { $0 } == [1, 2, 100, 101])
        token.cancel()
    }

    @Test("events of a replaced inner signal still on their way after its cancel are not passed on")
    func inFlightAfterSwitch() {
        // An inner signal whose cancel cannot stop events already on their way, as when one is being delivered
        // on another thread at the switch: each observation's handler stays callable.
        let handlers = Locked<[@Sendable (SignalEvent<Int>) -> Void]>([])
        let lagging = AnySignal<Int> { _, _, handler in
            handlers.withLock { $0.append(handler) }
            return SignalObservation(cancel: {})
        }
        func deliver(_ event: SignalEvent<Int>, toObservation index: Int) {
            handlers.withLock { $0[index] }(event)
        }
        let outer = MutableEventStream<AnySignal<Int>>()
        let next = MutableEventStream<Int>()
        let recorder = Recorder(outer.switchToLatest())
        outer.send(lagging)
        deliver(.value(1), toObservation: 0)
        outer.send(next.eraseToAnySignal())
        deliver(.value(2), toObservation: 0)
        deliver(.finished, toObservation: 0)
        next.send(3)
        outer.send(lagging)
        deliver(.value(4), toObservation: 0)
        deliver(.value(5), toObservation: 1)
        outer.finish()
        deliver(.finished, toObservation: 0)
        #expect(
            recorder.history == [.value(1), .value(3), .value(5)],
            "a replaced observation's end is not the current one's")
        deliver(.finished, toObservation: 1)
        #expect(recorder.history == [.value(1), .value(3), .value(5), .finished])
    }

    @Test("cancelling mid-way stops delivery and unregisters the outer and the current inner signal")
    func cancel() {
        let inners = [MutableEventStream<Int>(), MutableEventStream<Int>()]
        let outer = MutableEventStream<AnySignal<Int>>()
        let recorder = Recorder(outer.switchToLatest())
        outer.send(inners[0].eraseToAnySignal())
        inners[0].send(1)
        outer.send(inners[1].eraseToAnySignal())
        #expect(inners[0].observerCount == 0, "a replaced inner signal is unregistered at the switch")
        #expect(inners[1].observerCount == 1)
        recorder.observation?.cancel()
        #expect(outer.observerCount == 0)
        #expect(inners[1].observerCount == 0)
        inners[1].send(2)
        outer.send(inners[0].eraseToAnySignal())
        inners[0].send(3)
        #expect(recorder.history == [.value(1)])
        #expect(inners[0].observerCount == 0)
    }

    @Test("cancelling releases the outer and every inner observation, replaced ones included")
    func lifetime() {
        let live = Locked(0)
        weak var weakOuter: StreamStorage<AnySignal<Int>>?
        let inners = (0..<3).map { _ in MutableEventStream<Int>() }
        var token: SignalObservation?
        do {
            let outer = MutableEventStream<AnySignal<Int>>()
            weakOuter = outer.storage
            // Each inner observation keeps a tracked object until it is cancelled.
            let tracked = { (inner: MutableEventStream<Int>) in
                AnySignal<Int> { queue, buffering, handler in
                    let observation = inner.observeEvents(on: queue, buffering: buffering, handler)
                    let tracker = LifetimeTracked(live)
                    return SignalObservation(cancel: {
                        _ = tracker
                        observation.cancel()
                    })
                }
            }
            let watcher = LifetimeTracked(live)
            token = outer.switchToLatest().observe { _ in _ = watcher.id }
            outer.send(tracked(inners[0]))
            outer.send(tracked(inners[1]))
            #expect(live.withLock { $0 } == 2, "the watcher and the current inner observation")
            outer.send(tracked(inners[2]))
            inners[2].send(1)
            #expect(live.withLock { $0 } == 2)
        }
        token?.cancel()
        #expect(live.withLock { $0 } == 0)
        #expect(weakOuter == nil)
        #expect(inners.allSatisfy { $0.observerCount == 0 })
        _ = token
    }
}
