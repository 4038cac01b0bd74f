import Dispatch
import Testing

@testable import Signals

/// The held values of `MutableEventStream(holdingUpTo:)`, batch sends, and the pull side of `ObserverBox`
/// (what every async loop uses), as timelines.
@Suite("Holding streams and pull consumers")
struct HoldingAndPullTests {
    /// Everything a pull consumer can take without waiting, and whether it has ended.
    static func take(_ consumer: PullConsumer<Int>) -> (values: [Int], ended: Bool) {
        var values: [Int] = []
        while true {
            switch consumer.box.poll() {
            case .element(let value): values.append(value)
            case .end: return (values, true)
            case .empty: return (values, false)
            }
        }
    }

    @Test("values sent while nobody observes are held for the first observer, newest kept, drops counted")
    func heldForTheFirstObserver() {
        let stream = MutableEventStream<Int>(holdingUpTo: 3)
        stream.send(contentsOf: 0..<5)
        #expect(stream.droppedCount == 2)
        let first = Recorder(stream)
        let second = Recorder(stream)
        stream.send(5)
        #expect(first.values == [2, 3, 4, 5])
        #expect(second.values == [5], "a later observer sees from now on")
        #expect(first.observation?.droppedCount == 0)
    }

    @Test("once the last observer goes, holding starts again for the next one")
    func holdsAgainWhenNobodyObserves() {
        let stream = MutableEventStream<Int>(holdingUpTo: 8)
        var first: Recorder<Int>? = Recorder(stream)
        stream.send(1)
        #expect(first?.values == [1])
        first?.observation?.cancel()
        first = nil
        stream.send(2)
        let next = Recorder(stream)
        #expect(next.values == [2])
    }

    @Test("a stream without holding drops nothing and keeps nothing while unobserved")
    func plainStreamKeepsNothing() {
        let stream = MutableEventStream<Int>()
        stream.send(contentsOf: 0..<5)
        let late = Recorder(stream)
        #expect(late.values.isEmpty)
        #expect(stream.droppedCount == 0)
    }

    @Test("a finished stream gives its held values and then the end to the first late observer only")
    func finishReplaysHeldValuesOnce() {
        let stream = MutableEventStream<Int>(holdingUpTo: 4)
        stream.send(contentsOf: [1, 2])
        stream.finish()
        #expect(stream.send(3) == false)
        let first = Recorder(stream)
        let second = Recorder(stream)
        #expect(first.history == [.value(1), .value(2), .finished])
        #expect(second.history == [.finished])
    }

    @Test("a batch reaches every observer in order, and is buffered whole before delivery")
    func batchSend() {
        let stream = MutableEventStream<Int>()
        let a = Recorder(stream)
        let b = Recorder(stream, buffering: .bufferingNewest(2))
        #expect(stream.send(contentsOf: [1, 2, 3]))
        stream.send(4)
        #expect(a.values == [1, 2, 3, 4])
        #expect(b.values == [2, 3, 4], "three values at once in a buffer of two: the oldest is dropped")
        #expect(b.observation?.droppedCount == 1)
        stream.finish()
        #expect(stream.send(contentsOf: [5]) == false)
    }

    @Test(
        "a pull consumer applies its policy per batch and counts exactly what it drops",
        arguments: [
            (BufferingPolicy.unbounded, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 0),
            (.bufferingNewest(3), [7, 8, 9], 7),
            (.bufferingOldest(3), [0, 1, 2], 7),
        ])
    func pullPolicies(policy: BufferingPolicy, expected: [Int], drops: Int) {
        let stream = MutableEventStream<Int>()
        let consumer = PullConsumer(stream, buffering: policy)
        stream.send(contentsOf: 0..<6)
        stream.send(contentsOf: 6..<10)
        let taken = Self.take(consumer)
        #expect(taken.values == expected)
        #expect(!taken.ended)
        #expect(consumer.box.droppedCount == drops)
        #expect(stream.droppedCount == drops, "the stream's total is the sum over its consumers")
    }

    @Test("consumers on one stream are independent: each its own buffer, order and drops")
    func independentConsumers() {
        let stream = MutableEventStream<Int>(holdingUpTo: 100)
        let fast = PullConsumer(stream, buffering: .bufferingNewest(2))
        let slow = PullConsumer(stream, buffering: .bufferingNewest(2))
        var fastValues: [Int] = []
        for value in 0..<6 {
            stream.send(value)
            fastValues += Self.take(fast).values
        }
        #expect(fastValues == Array(0..<6))
        #expect(Self.take(slow).values == [4, 5])
        #expect(fast.box.droppedCount == 0)
        #expect(slow.box.droppedCount == 4)
        #expect(stream.droppedCount == 4)
    }

    @Test("the end comes after the buffer, and only once")
    func endAfterBuffer() {
        let stream = MutableEventStream<Int>()
        let consumer = PullConsumer(stream, buffering: .unbounded)
        stream.send(contentsOf: [1, 2])
        stream.finish()
        let taken = Self.take(consumer)
        #expect(taken.values == [1, 2])
        #expect(taken.ended)
        #expect(Self.take(consumer).ended, "ended stays ended")
    }

    @Test("a waiting loop is woken by a send, and a batch wakes it once")
    func wakesOncePerBatch() async {
        let stream = MutableEventStream<Int>()
        let consumer = PullConsumer(stream, buffering: .unbounded)
        let task = Task { () -> [Int] in
            var values: [Int] = []
            while let value = await consumer.next() { values.append(value) }
            return values
        }
        while !consumer.box.isWaiting { await Task.yield() }
        stream.send(contentsOf: [1, 2, 3])
        #expect(!consumer.box.isWaiting)
        stream.finish()
        #expect(await task.value == [1, 2, 3])
    }

    @Test("cancelling the task of a waiting loop ends it and unregisters it from the stream")
    func cancellationEndsAndUnregisters() async {
        let stream = MutableEventStream<Int>(holdingUpTo: 4)
        let consumer = PullConsumer(stream, buffering: .unbounded)
        let task = Task { await consumer.next() }
        while !consumer.box.isWaiting { await Task.yield() }
        task.cancel()
        #expect(await task.value == nil)
        #expect(stream.storage.state.withLock { $0.observers.isEmpty })
        stream.send(9)  // held again: nobody observes
        #expect(Self.take(PullConsumer(stream, buffering: .unbounded)).values == [9])
    }

    @Test("a consumer released while values wait unregisters and releases them")
    func releasedConsumer() {
        let live = Locked(0)
        let stream = MutableEventStream<LifetimeTracked>()
        var consumer: PullConsumer<LifetimeTracked>? = PullConsumer(stream, buffering: .unbounded)
        stream.send(contentsOf: (0..<5).map { LifetimeTracked(live, id: $0) })
        #expect(live.withLock { $0 } == 5)
        consumer = nil
        #expect(live.withLock { $0 } == 0)
        #expect(stream.storage.state.withLock { $0.observers.isEmpty })
        _ = consumer
    }

    @Test("taken values are released by the next send, and at once after the end")
    func takenValuesAreReleased() {
        let live = Locked(0)
        let stream = MutableEventStream<LifetimeTracked>()
        let consumer = PullConsumer(stream, buffering: .unbounded)
        stream.send(contentsOf: (0..<20).map { LifetimeTracked(live, id: $0) })
        while case .element = consumer.box.poll() {}
        #expect(live.withLock { $0 } == 20, "held for the sending thread")
        #expect(consumer.box.takenAwaitingRelease == 20)
        stream.send(LifetimeTracked(live, id: 20))
        #expect(live.withLock { $0 } == 1, "the send released what was taken; the new value waits")
        stream.finish()
        while case .element = consumer.box.poll() {}
        #expect(live.withLock { $0 } == 0, "after the end nothing waits for a send")
    }

    @Test("held values are released when the stream is released")
    func heldValuesAreReleased() {
        let live = Locked(0)
        var stream: MutableEventStream<LifetimeTracked>? = MutableEventStream(holdingUpTo: 8)
        stream?.send(contentsOf: (0..<3).map { LifetimeTracked(live, id: $0) })
        #expect(live.withLock { $0 } == 3)
        stream = nil
        #expect(live.withLock { $0 } == 0)
    }

    @Test("a pull consumer on any signal (a map) gets the same values through an observation")
    func pullOnAnySignal() async {
        let stream = MutableEventStream<Int>()
        var iterator = stream.map { $0 * 10 }.values(buffering: .bufferingNewest(2)).makeAsyncIterator()
        stream.send(contentsOf: [1, 2, 3])
        #expect(await iterator.next() == 20)
        #expect(await iterator.next() == 30)
        #expect(iterator.droppedCount == 1)
        stream.finish()
        #expect(await iterator.next() == nil)
    }

    @Test("a state view that keeps an owner keeps it while the view or an observation through it lives")
    func viewKeepsOwner() {
        let live = Locked(0)
        let state = MutableStateValue(0)
        var view: StateValue<Int>? = state.storage.view(keeping: LifetimeTracked(live))
        var token: SignalObservation? = view?.observe { _ in }
        view = nil
        #expect(live.withLock { $0 } == 1, "the observation holds the owner")
        token = nil
        #expect(live.withLock { $0 } == 0)
        _ = (view, token)
    }

    @Test(
        "eight threads sending batches to loops and observers: each consumer gets received + dropped == sent, in per-sender order"
    )
    func stress() async {
        let threads = 8
        let batches = 200
        let batchSize = 10
        let stream = MutableEventStream<Int>(holdingUpTo: 16)
        let consumers = [
            PullConsumer(stream, buffering: .unbounded), PullConsumer(stream, buffering: .bufferingNewest(64)),
        ]
        let observed = Locked<[Int]>([])
        let queue = DispatchQueue(label: "stress")
        let token = stream.observe(on: queue, buffering: .bufferingOldest(10_000)) { value in
            observed.withLock { $0.append(value) }
        }
        let loops = consumers.map { consumer in
            Task.detached { () -> [Int] in
                var values: [Int] = []
                while let value = await consumer.next() { values.append(value) }
                return values
            }
        }
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            for batch in 0..<batches {
                let base = (thread * batches + batch) * batchSize
                stream.send(contentsOf: base..<(base + batchSize))
            }
        }
        stream.finish()
        let sent = threads * batches * batchSize
        for (consumer, loop) in zip(consumers, loops) {
            let values = await loop.value
            #expect(values.count + consumer.box.droppedCount == sent)
            Self.expectPerSenderOrder(values, perThread: batches * batchSize)
        }
        queue.sync {}  // every drain was queued before finish() returned
        let all = observed.withLock { $0 }
        #expect(all.count + token.droppedCount == sent)
        Self.expectPerSenderOrder(all, perThread: batches * batchSize)
        #expect(stream.droppedCount == consumers.reduce(0) { $0 + $1.box.droppedCount } + token.droppedCount)
    }

    static func expectPerSenderOrder(_ values: [Int], perThread: Int) {
        var last: [Int: Int] = [:]
        var outOfOrder = 0
        for value in values {
            let (thread, sequence) = value.quotientAndRemainder(dividingBy: perThread)
            if let previous = last[thread], sequence <= previous { outOfOrder += 1 }
            last[thread] = sequence
        }
        #expect(outOfOrder == 0)
    }
}
