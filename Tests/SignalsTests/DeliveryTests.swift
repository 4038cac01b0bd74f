import Dispatch
import Testing

@testable import Signals

@Suite("Delivery")
struct DeliveryTests {
    @Test("an observer that sends to the same stream neither deadlocks nor reorders")
    func reentrantSendToSameStream() {
        let stream = MutableEventStream<Int>()
        let seen = Locked<[Int]>([])
        let token = stream.observe { value in
            seen.withLock { $0.append(value) }
            if value < 3 { stream.send(value + 10) }
        }
        stream.send(1)
        stream.send(2)
        // 11 is delivered after 1's handler returns, before 2 is even sent.
        #expect(seen.withLock { $0 } == [1, 11, 2, 12])
        token.cancel()
    }

    @Test("an observer that writes a state it observes sees every value once, in order")
    func reentrantStateWrite() {
        let state = MutableStateValue(0)
        let seen = Locked<[Int]>([])
        let token = state.observe { value in
            seen.withLock { $0.append(value) }
            if value < 3 { state.value = value + 1 }
        }
        #expect(seen.withLock { $0 } == [0, 1, 2, 3])
        #expect(state.value == 3)
        token.cancel()
    }

    @Test("an observer may send to another signal whose observer sends back")
    func crossSignalSends() {
        let ping = MutableEventStream<Int>()
        let pong = MutableEventStream<Int>()
        let log = Locked<[String]>([])
        let a = ping.observe { value in
            log.withLock { $0.append("ping \(value)") }
            if value < 2 { pong.send(value + 1) }
        }
        let b = pong.observe { value in
            log.withLock { $0.append("pong \(value)") }
            ping.send(value + 1)
        }
        ping.send(0)
        #expect(log.withLock { $0 } == ["ping 0", "pong 1", "ping 2"])
        a.cancel()
        b.cancel()
    }

    @Test("an observer may cancel its own observation from inside the handler")
    func cancelFromInside() {
        let stream = MutableEventStream<Int>()
        let seen = Locked<[Int]>([])
        let holder = Locked<SignalObservation?>(nil)
        let token = stream.observe { value in
            seen.withLock { $0.append(value) }
            holder.withLock { $0 }?.cancel()
        }
        holder.withLock { $0 = token }
        stream.send(1)
        stream.send(2)
        #expect(seen.withLock { $0 } == [1])
    }

    @Test("an observer on a queue runs there, in order")
    func deliversOnQueue() {
        let queue = DispatchQueue(label: "observer")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let stream = MutableEventStream<Int>()
        let seen = Locked<[(Int, Bool)]>([])
        let token = stream.observe(on: queue) { value in
            seen.withLock { $0.append((value, DispatchQueue.getSpecific(key: key) == true)) }
        }
        for value in 0..<100 { stream.send(value) }
        queue.sync {}
        let result = seen.withLock { $0 }
        #expect(result.map(\.0) == Array(0..<100))
        #expect(result.allSatisfy { $0.1 })
        token.cancel()
    }

    @Test(
        "a slow observer's bounded buffer drops by its policy and counts the drops",
        arguments: [
            (BufferingPolicy.bufferingNewest(3), [7, 8, 9]),
            (BufferingPolicy.bufferingOldest(3), [0, 1, 2]),
            (BufferingPolicy.unbounded, Array(0..<10)),
        ])
    func boundedBufferDrops(policy: BufferingPolicy, expected: [Int]) {
        let queue = DispatchQueue(label: "slow")
        queue.suspend()
        let stream = MutableEventStream<Int>()
        let seen = Locked<[Int]>([])
        let token = stream.observe(on: queue, buffering: policy) { value in seen.withLock { $0.append(value) } }
        for value in 0..<10 { stream.send(value) }
        queue.resume()
        queue.sync {}
        #expect(seen.withLock { $0 } == expected)
        #expect(token.droppedCount == 10 - expected.count)
    }

    @Test("a slow observer does not hold up another observer of the same stream")
    func slowObserverIsolated() {
        let slowQueue = DispatchQueue(label: "slow")
        slowQueue.suspend()
        let stream = MutableEventStream<Int>()
        let slow = stream.observe(on: slowQueue) { _ in }
        let fast = Recorder(stream)
        for value in 0..<5 { stream.send(value) }
        #expect(fast.values == Array(0..<5))
        slowQueue.resume()
        slow.cancel()
    }
}

@Suite("RingBuffer")
struct RingBufferTests {
    @Test("a policy buffer allocates nothing until its first push, and takeAll lets go of the storage")
    func lazyStorage() {
        var buffer = PolicyBuffer<Int>(policy: .bufferingNewest(3))
        #expect(buffer.buffer.capacity == 0)
        for value in 1...5 { buffer.push(value) }
        #expect(buffer.buffer.capacity == 8 && buffer.droppedCount == 2)
        #expect(buffer.takeAll() == [3, 4, 5])
        #expect(buffer.buffer.capacity == 0 && buffer.isEmpty)
        #expect(buffer.droppedCount == 2)  // the count survives
        buffer.push(6)
        #expect(buffer.popFirst() == 6)
    }

    @Test("a stream's hold gives its storage back once the first observer took the held values")
    func holdReleased() {
        let stream = MutableEventStream<Int>(holdingUpTo: 100)
        for value in 1...20 { stream.send(value) }
        #expect(stream.storage.state.withLock { $0.held?.buffer.capacity ?? -1 } >= 20)
        let seen = Locked<[Int]>([])
        let token = stream.readOnly.observe { value in seen.withLock { $0.append(value) } }
        #expect(stream.storage.state.withLock { $0.held?.buffer.capacity ?? -1 } == 0)
        stream.send(21)
        token.cancel()
        #expect(seen.withLock { $0 }.prefix(20) == Array(1...20)[...])
    }

    /// Runs `body` on every buffer layout: each capacity, head slot and element count.
    private func withEveryLayout(_ body: (RingBuffer<Int>, [Int], String) -> Void) {
        for capacity in [0, 1, 2, 3, 5, 8] {
            for head in 0..<max(capacity, 1) {
                for count in 0...capacity {
                    let contents = Array(100..<(100 + count))
                    let buffer = RingBuffer(capacity: capacity, head: head, contents: contents)
                    body(buffer, contents, "capacity \(capacity) head \(head) count \(count)")
                }
            }
        }
    }

    @Test("every layout keeps FIFO order through wrap-around, growth and draining")
    func fifoInEveryLayout() {
        withEveryLayout { buffer, contents, layout in
            var buffer = buffer
            #expect(buffer.elements == contents, "\(layout)")
            buffer.append(1)
            buffer.append(2)
            var drained: [Int] = []
            while let element = buffer.popFirst() { drained.append(element) }
            #expect(drained == contents + [1, 2], "\(layout)")
            #expect(buffer.isEmpty, "\(layout)")
        }
    }

    @Test("every layout drops the oldest under bufferingNewest and the newest under bufferingOldest")
    func policiesInEveryLayout() {
        withEveryLayout { _, contents, layout in
            var newest = PolicyBuffer<Int>(policy: .bufferingNewest(3))
            var oldest = PolicyBuffer<Int>(policy: .bufferingOldest(3))
            for element in contents + [1, 2] {
                newest.push(element)
                oldest.push(element)
            }
            let all = contents + [1, 2]
            #expect(newest.buffer.elements == Array(all.suffix(3)), "\(layout)")
            #expect(oldest.buffer.elements == Array(all.prefix(3)), "\(layout)")
            #expect(newest.droppedCount == max(0, all.count - 3), "\(layout)")
            #expect(oldest.droppedCount == max(0, all.count - 3), "\(layout)")
        }
    }
}
