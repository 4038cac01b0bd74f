import Testing

@testable import Signals

@Suite("Async bridge")
struct AsyncTests {
    @Test("for await delivers buffered values in order and ends when the stream finishes")
    func iteratesUntilFinish() async {
        let stream = MutableEventStream<Int>()
        var iterator = stream.readOnly.values.makeAsyncIterator()
        for value in 1...3 { stream.send(value) }
        stream.finish()
        var seen: [Int] = []
        while let value = await iterator.next() { seen.append(value) }
        #expect(seen == [1, 2, 3])
        #expect(await iterator.next() == nil)
    }

    @Test("a StateValue's loop starts with the current value")
    func stateLoopStartsWithCurrent() async {
        let state = MutableStateValue("idle")
        var iterator = state.readOnly.values.makeAsyncIterator()
        state.value = "busy"
        #expect(await iterator.next() == "idle")
        #expect(await iterator.next() == "busy")
    }

    @Test("a waiting loop resumes when a value is sent from another thread")
    func resumesWaitingLoop() async {
        let stream = MutableEventStream<Int>()
        let iterator = stream.values.makeAsyncIterator()
        let task = Task {
            var iterator = iterator
            return await iterator.next()
        }
        // The iterator observes from creation, so this value cannot be missed whether or not the task is
        // already waiting.
        stream.send(42)
        #expect(await task.value == 42)
    }

    @Test("the loop ends when its task is cancelled, and the iterator stops observing")
    func endsOnCancellation() async {
        let stream = MutableEventStream<Int>()
        let (started, startedContinuation) = AsyncStream<Void>.makeStream()
        // The iterator observes from creation, so it must exist before the first send.
        let iterator = stream.values.makeAsyncIterator()
        let task = Task {
            var iterator = iterator
            var count = 0
            while await iterator.next() != nil {
                count += 1
                startedContinuation.yield()
            }
            return count
        }
        // Wait until the loop has consumed one value, so the next `next()` is the one that waits.
        stream.send(1)
        var startedIterator = started.makeAsyncIterator()
        await startedIterator.next()
        task.cancel()
        #expect(await task.value == 1)
        #expect(stream.storage.state.withLock { $0.observers.isEmpty })
    }

    @Test("an iterator's bounded buffer keeps the newest values and counts drops")
    func iteratorBuffering() async {
        let stream = MutableEventStream<Int>()
        var iterator = stream.values(buffering: .bufferingNewest(2)).makeAsyncIterator()
        for value in 0..<10 { stream.send(value) }
        stream.finish()
        #expect(await iterator.next() == 8)
        #expect(await iterator.next() == 9)
        #expect(await iterator.next() == nil)
        #expect(iterator.droppedCount == 8)
    }

    @Test("first(where:) returns the first matching value")
    func firstWhere() async {
        let state = MutableStateValue(0)
        let task = Task { await state.readOnly.first { $0 >= 3 } }
        for value in 1...5 { state.value = value }
        // The state replays its current value, so the task finds a value >= 3 whenever it subscribes.
        let found = await task.value
        #expect(found.map { $0 >= 3 } == true)
        #expect(await AnySignal.just(7).first() == 7)
    }

    @Test("first(where:) returns nil when the signal finishes without a match")
    func firstWhereFinishes() async {
        let stream = MutableEventStream<Int>()
        let iteratorReady = stream.values.makeAsyncIterator()
        _ = iteratorReady
        stream.finish()
        #expect(await stream.first { $0 > 0 } == nil)
    }

    @Test("first(within:where:) returns a matching value that arrives before the deadline")
    func firstWithinFinds() async {
        let state = MutableStateValue(0)
        let task = Task { await state.readOnly.first(within: 60) { $0 == 3 } }
        for value in 1...3 { state.value = value }
        #expect(await task.value == 3)
        #expect(await state.first(within: 60) { $0 == 3 } == 3, "a state's current value counts at once")
    }

    @Test("first(within:where:) returns nil when the deadline passes, or the signal finishes, without a match")
    func firstWithinGivesUp() async {
        let state = MutableStateValue(0)
        #expect(await state.first(within: 0.05) { $0 == 1 } == nil)
        let stream = MutableEventStream<Int>()
        let waiting = Task { await stream.readOnly.first(within: 60) { _ in true } }
        stream.finish()
        #expect(await waiting.value == nil)
    }

    @Test("one iterator per loop: two loops over the same stream each get every value")
    func independentLoops() async {
        let stream = MutableEventStream<Int>()
        var first = stream.values.makeAsyncIterator()
        var second = stream.values.makeAsyncIterator()
        stream.send(1)
        stream.send(2)
        #expect(await first.next() == 1)
        #expect(await second.next() == 1)
        #expect(await second.next() == 2)
        #expect(await first.next() == 2)
    }
}
