import Dispatch
import Testing

@testable import Signals

@Suite("prepend")
struct PrependTests {
    @Test("prepend emits its values first, then the upstream's events, for each observer")
    func stream() {
        let source = MutableEventStream<Int>()
        let prepended = source.prepend(1, 2)
        let first = Recorder(prepended)
        source.send(3)
        let second = Recorder(prepended)
        source.send(4)
        source.finish()
        #expect(first.history == [.value(1), .value(2), .value(3), .value(4), .finished])
        #expect(second.history == [.value(1), .value(2), .value(4), .finished])
    }

    @Test("on a state the prepended values come before its current value")
    func state() {
        let state = MutableStateValue(5)
        let recorder = Recorder(state.prepend(0))
        state.value = 6
        #expect(recorder.values == [0, 5, 6])
    }

    @Test("prepend of a sequence, and of nothing")
    func sequence() {
        let source = MutableEventStream<String>()
        let recorder = Recorder(source.prepend(["a", "b"]))
        let none = Recorder(source.prepend([]))
        source.send("c")
        #expect(recorder.values == ["a", "b", "c"])
        #expect(none.values == ["c"])
        #expect(Recorder(AnySignal<Int>.empty.prepend(1)).history == [.value(1), .finished])
    }

    @Test("on a queue the prepended values come first and the policy counts their drops")
    func queue() {
        let source = MutableEventStream<Int>()
        let queue = DispatchQueue(label: "prepend")
        let seen = Locked<[Int]>([])
        let blocked = DispatchSemaphore(value: 0)
        queue.async { blocked.wait() }  // holds the queue until everything is buffered
        let token = source.prepend(1, 2, 3).observe(on: queue, buffering: .bufferingOldest(4)) { value in
            seen.withLock { $0.append(value) }
        }
        source.send(4)
        source.send(5)
        blocked.signal()
        queue.sync {}
        #expect(seen.withLock { $0 } == [1, 2, 3, 4])
        #expect(token.droppedCount == 1)
        token.cancel()
    }

    @Test("a re-entrant send during the prepended values is seen, after them")
    func reentrant() {
        let source = MutableEventStream<Int>()
        let seen = Locked<[Int]>([])
        let token = source.prepend(1, 2).observe { value in
            seen.withLock { $0.append(value) }
            if value == 1 || value == 3 { source.send(value * 10) }
        }
        source.send(3)
        #expect(seen.withLock { $0 } == [1, 2, 10, 3, 30])
        token.cancel()
    }

    @Test("cancelling unregisters the upstream")
    func cancel() {
        let source = MutableEventStream<Int>()
        let recorder = Recorder(source.prepend(0))
        recorder.observation?.cancel()
        source.send(1)
        #expect(recorder.values == [0])
        #expect(source.observerCount == 0)
    }
}
