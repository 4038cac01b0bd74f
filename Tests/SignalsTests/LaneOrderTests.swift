import Dispatch
import Testing

@testable import Signals

/// Observers on one queue see events in the order they were sent, across signals (the queue's `DeliveryLane`).
@Suite("Lane order")
struct LaneOrderTests {
    /// One log for several observers, in delivery order.
    final class Log: Sendable {
        let lines = Locked<[String]>([])
        func add(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test("a state and a stream observed on one queue arrive in send order, though a drain was pending")
    func stateAndStreamOnOneQueue() {
        let queue = DispatchQueue(label: "lane")
        queue.suspend()  // the stream's first delivery is pending when the state changes
        let state = MutableStateValue("pending")
        let messages = MutableEventStream<String>()
        let log = Log()
        let a = state.observe(on: queue) { log.add("state \($0)") }
        let b = messages.observe(on: queue) { log.add("message \($0)") }
        messages.send("m0")
        state.value = "subscribed"
        messages.send("m1")
        messages.send("m2")
        state.value = "unsubscribed"
        queue.resume()
        queue.sync {}
        #expect(
            log.all == [
                "state pending", "message m0", "state subscribed", "message m1", "message m2", "state unsubscribed",
            ])
        a.cancel()
        b.cancel()
    }

    @Test("the order holds for observers on the main queue, from any thread")
    func mainQueueOrder() async {
        let state = MutableStateValue(0)
        let stream = MutableEventStream<Int>()
        let log = Log()
        let done = MutableStateValue(false)
        let a = state.observe(on: DispatchQueue.main) { log.add("s\($0)") }
        let b = stream.observe(on: DispatchQueue.main) { log.add("m\($0)") }
        let c = stream.observe(on: DispatchQueue.main) { if $0 == 99 { done.value = true } }
        DispatchQueue.global().async {
            for value in 0..<100 {
                stream.send(value)
                if value.isMultiple(of: 10) { state.value = value }
            }
        }
        _ = await done.first { $0 }
        var expected = ["s0"]
        for value in 0..<100 {
            expected.append("m\(value)")
            if value.isMultiple(of: 10), value > 0 { expected.append("s\(value)") }
        }
        #expect(log.all == expected)
        _ = (a, b, c)
    }

    @Test(
        "a run the policy drops entirely delivers nothing, and the order of the rest holds",
        arguments: [BufferingPolicy.bufferingNewest(2), .bufferingOldest(2)])
    func droppedRunsKeepOrder(policy: BufferingPolicy) {
        let queue = DispatchQueue(label: "lane")
        queue.suspend()
        let state = MutableStateValue(0)
        let stream = MutableEventStream<Int>()
        let log = Log()
        let a = state.observe(on: queue) { log.add("s\($0)") }
        let b = stream.observe(on: queue, buffering: policy) { log.add("m\($0)") }
        stream.send(1)
        state.value = 1
        stream.send(2)
        state.value = 2
        stream.send(3)
        state.value = 3
        queue.resume()
        queue.sync {}
        switch policy {
        case .bufferingNewest(2):
            #expect(log.all == ["s0", "s1", "m2", "s2", "m3", "s3"])
        default:
            #expect(log.all == ["s0", "m1", "s1", "m2", "s2", "s3"])
        }
        #expect(b.droppedCount == 1)
        a.cancel()
        b.cancel()
    }

    @Test("a batch larger than the buffer keeps its newest elements, in order with the other observers")
    func batchLargerThanBuffer() {
        let queue = DispatchQueue(label: "lane")
        queue.suspend()
        let state = MutableStateValue("a")
        let stream = MutableEventStream<Int>()
        let log = Log()
        let a = state.observe(on: queue) { log.add($0) }
        let b = stream.observe(on: queue, buffering: .bufferingNewest(3)) { log.add("\($0)") }
        stream.send(contentsOf: 1...10)
        state.value = "b"
        stream.send(contentsOf: 11...12)
        queue.resume()
        queue.sync {}
        #expect(log.all == ["a", "10", "b", "11", "12"])
        #expect(b.droppedCount == 9)
        _ = (a, b)
    }

    @Test("the end of a stream arrives after its last value and before what was sent after it")
    func finishInOrder() {
        let queue = DispatchQueue(label: "lane")
        queue.suspend()
        let stream = MutableEventStream<Int>()
        let state = MutableStateValue("open")
        let log = Log()
        let a = stream.observe(on: queue, onValue: { log.add("m\($0)") }, onFinish: { log.add("end") })
        let b = state.observe(on: queue) { log.add($0) }
        stream.send(1)
        stream.finish()
        state.value = "closed"
        queue.resume()
        queue.sync {}
        #expect(log.all == ["open", "m1", "end", "closed"])
        _ = (a, b)
    }

    @Test("tickets stay bounded while the queue is blocked and the observers keep dropping")
    func ticketsStayBounded() {
        let queue = DispatchQueue(label: "lane")
        queue.suspend()
        let one = MutableEventStream<Int>()
        let two = MutableEventStream<Int>()
        let seen = Locked<[Int]>([])
        let a = one.observe(on: queue, buffering: .bufferingNewest(4)) { value in seen.withLock { $0.append(value) } }
        let b = two.observe(on: queue, buffering: .bufferingNewest(4)) { value in seen.withLock { $0.append(value) } }
        for value in 0..<10_000 {
            one.send(value)
            two.send(-value)
        }
        let lane = DeliveryLane.serving(queue)
        #expect(lane.ticketCount <= 64)
        queue.resume()
        queue.sync {}
        // The newest four of each, interleaved as they were sent.
        #expect(seen.withLock { $0 } == [9996, -9996, 9997, -9997, 9998, -9998, 9999, -9999])
        _ = (a, b)
    }

    @Test("a cancelled observer's pending events are not delivered, and the others' order holds")
    func cancelledObserver() {
        let queue = DispatchQueue(label: "lane")
        queue.suspend()
        let stream = MutableEventStream<Int>()
        let log = Log()
        let a = stream.observe(on: queue) { log.add("a\($0)") }
        let b = stream.observe(on: queue) { log.add("b\($0)") }
        stream.send(1)
        a.cancel()
        stream.send(2)
        queue.resume()
        queue.sync {}
        #expect(log.all == ["b1", "b2"])
        b.cancel()
    }

    @Test("an observer that sends to another observer on its queue sees that delivery after the ones pending")
    func reentrantSendOnLane() {
        let queue = DispatchQueue(label: "lane")
        queue.suspend()
        let first = MutableEventStream<Int>()
        let second = MutableEventStream<Int>()
        let log = Log()
        let a = first.observe(on: queue) { value in
            log.add("first \(value)")
            if value == 1 { second.send(10) }
        }
        let b = second.observe(on: queue) { log.add("second \($0)") }
        first.send(1)
        second.send(2)
        first.send(3)
        queue.resume()
        queue.sync {}
        #expect(log.all == ["first 1", "second 2", "first 3", "second 10"])
        _ = (a, b)
    }

    @Test("observers on one queue run one at a time, also on a concurrent queue")
    func serialOnConcurrentQueue() {
        let queue = DispatchQueue(label: "concurrent", attributes: .concurrent)
        let streams = (0..<4).map { _ in MutableEventStream<Int>() }
        let running = Locked((now: 0, most: 0, count: 0))
        let tokens = streams.map { stream in
            stream.observe(on: queue) { _ in
                running.withLock {
                    $0.now += 1
                    $0.most = max($0.most, $0.now)
                    $0.count += 1
                }
                running.withLock { $0.now -= 1 }
            }
        }
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            for value in 0..<500 { streams[index].send(value) }
        }
        queue.sync(flags: .barrier) {}
        while running.withLock({ $0.count }) < 2000 { queue.sync(flags: .barrier) {} }
        #expect(running.withLock { $0.most } == 1)
        _ = tokens
    }

    @Test("one queue, one lane: the lane is shared however the queue is reached")
    func oneLanePerQueue() {
        let queue = DispatchQueue(label: "lane")
        #expect(DeliveryLane.serving(queue) === DeliveryLane.serving(queue))
        #expect(DeliveryLane.serving(DispatchQueue.main) === DeliveryLane.serving(.main))
        #expect(DeliveryLane.serving(queue) !== DeliveryLane.serving(DispatchQueue(label: "other")))
    }

    @Test("a laned box's runs add up to its buffer after every send, drop and delivery")
    func runsMatchBuffer() {
        let queue = DispatchQueue(label: "lane")
        queue.suspend()
        var random = SeededGenerator(seed: 7)
        for policy in [BufferingPolicy.bufferingNewest(3), .bufferingOldest(3), .unbounded] {
            let box = ObserverBox<Int>(lane: DeliveryLane.serving(queue), buffering: policy) { _ in }
            for _ in 0..<200 {
                let size = Int.random(in: 0...5, using: &random)
                var dropped = 0
                box.enqueue(contentsOf: Array(repeating: 1, count: size), dropped: &dropped).run()
                let (runs, count) = box.state.withLock { ($0.runs.elements.map(\.count).reduce(0, +), $0.buffer.count) }
                #expect(runs == count)
                #expect(box.state.withLock { $0.runs.elements.allSatisfy { $0.count > 0 } })
            }
            box.cancel()
        }
        queue.resume()
        queue.sync {}
    }
}

/// A small deterministic generator for the tests' random choices.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}
