import Testing

@testable import CableReactive

/// Staged delivery: a read's messages reach each subscription's buffer in one hand-over (see `DeliveryBatch`).
@Suite struct MessageBufferTests {
    /// Starts a consumer task and returns once it is suspended in `next`.
    private func waitingConsumer(
        _ buffer: MessageBuffer, count: Int
    ) async throws -> Task<[JSONValue?], Never> {
        let consumer = try #require(buffer.claim())
        let task = Task {
            var received: [JSONValue?] = []
            for _ in 0..<count { received.append(await buffer.next(for: consumer)) }
            return received
        }
        while !buffer.hasWaiter { await Task.yield() }
        return task
    }

    @Test func aBatchHandsItsMessagesOverWhenItEnds() async throws {
        let buffer = MessageBuffer(capacity: 128, serial: 1, host: "h")
        let batch = DeliveryBatch()
        let task = try await waitingConsumer(buffer, count: 3)
        batch.stage(1, for: buffer)
        batch.stage(2, for: buffer)
        #expect(buffer.hasWaiter, "the consumer stays parked until the read ends")
        batch.stage(3, for: buffer)
        batch.flush()
        #expect(await task.value == [1, 2, 3])
        #expect(buffer.droppedCount == 0)
    }

    @Test func halfAFullBufferIsHandedOverAtOnce() async throws {
        let buffer = MessageBuffer(capacity: 4, serial: 1, host: "h")
        let batch = DeliveryBatch()
        let task = try await waitingConsumer(buffer, count: 3)
        batch.stage(1, for: buffer)
        #expect(buffer.hasWaiter)
        batch.stage(2, for: buffer)  // 2 of 4 staged: handed over now
        #expect(!buffer.hasWaiter)
        batch.stage(3, for: buffer)
        batch.flush()
        #expect(await task.value == [1, 2, 3])
        #expect(buffer.droppedCount == 0)
    }

    @Test func aReadLongerThanTheBufferLosesNothingWhileTheConsumerKeepsUp() throws {
        // 20 messages staged in one read for a 4-message buffer, the consumer taking each hand-over (2
        // messages) before the next: nothing is dropped.
        let buffer = MessageBuffer(capacity: 4, serial: 1, host: "h")
        let batch = DeliveryBatch()
        let consumer = try #require(buffer.claim())
        var received: [JSONValue] = []
        for value in 0..<20 {
            batch.stage(.int(value), for: buffer)
            while let ready = buffer.poll(consumer), let message = ready.message { received.append(message) }
        }
        batch.flush()
        while let ready = buffer.poll(consumer), let message = ready.message { received.append(message) }
        #expect(received == (0..<20).map { .int($0) })
        #expect(buffer.droppedCount == 0)
    }

    @Test func stagingKeepsEachSubscriptionsOrderAcrossInterleavedMessages() throws {
        let buffers = (0..<3).map { MessageBuffer(capacity: 64, serial: $0, host: "h") }
        let batch = DeliveryBatch()
        for value in 0..<30 { batch.stage(.int(value), for: buffers[value % 3]) }
        batch.flush()
        for (index, buffer) in buffers.enumerated() {
            let consumer = try #require(buffer.claim())
            var received: [JSONValue] = []
            while let ready = buffer.poll(consumer), let message = ready.message { received.append(message) }
            #expect(received == stride(from: index, to: 30, by: 3).map { .int($0) })
        }
    }

    @Test(arguments: [1, 3, 40])
    func everyReadHandsOverEverySubscriptionsMessages(subscriptions: Int) throws {
        // Slots outlive a read: the second and later reads must still hand everything over, whether the
        // subscriptions' messages come in runs, take turns, or spread over more than a few of them.
        let buffers = (0..<subscriptions).map { MessageBuffer(capacity: 1_000, serial: $0, host: "h") }
        let batch = DeliveryBatch()
        var expected = Array(repeating: [JSONValue](), count: subscriptions)
        var value = 0
        for read in 0..<5 {
            for step in 0..<60 {
                let index = read.isMultiple(of: 2) ? step % subscriptions : (step / 20) % subscriptions
                batch.stage(.int(value), for: buffers[index])
                expected[index].append(.int(value))
                value += 1
            }
            batch.flush()
        }
        for (index, buffer) in buffers.enumerated() {
            let consumer = try #require(buffer.claim())
            var received: [JSONValue] = []
            while let ready = buffer.poll(consumer), let message = ready.message { received.append(message) }
            #expect(received == expected[index], "subscription \(index)")
        }
    }

    @Test func aFullBufferKeepsTheNewestOfAHandOverAndCountsTheRest() throws {
        let buffer = MessageBuffer(capacity: 4, serial: 1, host: "h")
        buffer.push(contentsOf: (0..<10).map { JSONValue.int($0) })
        let consumer = try #require(buffer.claim())
        var received: [JSONValue] = []
        while let ready = buffer.poll(consumer), let message = ready.message { received.append(message) }
        #expect(received == [6, 7, 8, 9])
        #expect(buffer.droppedCount == 6)
    }

    @Test func messagesStillStagedWhenTheStreamEndsAreDiscarded() async throws {
        let buffer = MessageBuffer(capacity: 8, serial: 1, host: "h")
        let batch = DeliveryBatch()
        let task = try await waitingConsumer(buffer, count: 3)
        batch.stage("a", for: buffer)
        batch.flush()
        batch.stage("b", for: buffer)
        buffer.finish()  // unsubscribed or closed: final, even mid-read
        batch.flush()
        #expect(await task.value == ["a", nil, nil])
    }

    @Test func consumedMessagesAreReleasedByTheNextPush() throws {
        let buffer = MessageBuffer(capacity: 256, serial: 1, host: "h")
        buffer.push(contentsOf: (0..<100).map { JSONValue.int($0) })
        let consumer = try #require(buffer.claim())
        var count = 0
        while let ready = buffer.poll(consumer), ready.message != nil { count += 1 }
        #expect(count == 100)
        #expect(buffer.consumedAwaitingRelease == 100, "kept for the network thread, never more than it pushed")
        buffer.push(100)
        #expect(buffer.consumedAwaitingRelease == 0)
        #expect(buffer.poll(consumer)?.message == 100)
        buffer.push(101)  // a few are released in place
        #expect(buffer.consumedAwaitingRelease == 0)
    }

    @Test func theEndReleasesConsumedMessagesAtOnce() throws {
        let buffer = MessageBuffer(capacity: 16, serial: 1, host: "h")
        buffer.push(contentsOf: (0..<4).map { JSONValue.int($0) })
        let consumer = try #require(buffer.claim())
        _ = buffer.poll(consumer)
        #expect(buffer.consumedAwaitingRelease == 1)
        buffer.finish()
        #expect(buffer.consumedAwaitingRelease == 0)
        var rest: [JSONValue] = []
        while let ready = buffer.poll(consumer), let message = ready.message { rest.append(message) }
        #expect(rest == [1, 2, 3])
        #expect(buffer.consumedAwaitingRelease == 0, "no push will come after the end")
    }

    @Test func slotsIdleForManyReadsAreForgotten() throws {
        let buffers = (0..<100).map { MessageBuffer(capacity: 1_000, serial: $0, host: "h") }
        let batch = DeliveryBatch()
        for (index, buffer) in buffers.enumerated() { batch.stage(.int(index), for: buffer) }
        batch.flush()
        #expect(batch.slotCount == 100)
        for read in 1...(2 * DeliveryBatch.idleReads) {
            batch.stage(.int(1_000 + read), for: buffers[7])
            batch.flush()
        }
        #expect(batch.slotCount == 1, "only the busy subscription keeps its slot")
        batch.stage(.int(5_000), for: buffers[3])  // a forgotten one comes back
        batch.flush()
        for (index, buffer) in buffers.enumerated() {
            let consumer = try #require(buffer.claim())
            var received: [JSONValue] = []
            while let ready = buffer.poll(consumer), let message = ready.message { received.append(message) }
            var expected: [JSONValue] = [.int(index)]
            if index == 7 { expected += (1...(2 * DeliveryBatch.idleReads)).map { .int(1_000 + $0) } }
            if index == 3 { expected.append(5_000) }
            #expect(received == expected, "subscription \(index)")
        }
    }

    @Test func withoutABatchEveryPushWakesTheConsumer() async throws {
        let buffer = MessageBuffer(capacity: 8, serial: 1, host: "h")
        let task = try await waitingConsumer(buffer, count: 1)
        buffer.push("now")
        #expect(!buffer.hasWaiter)
        #expect(await task.value == ["now"])
    }

    @Test func aCancelledConsumerLeavesTheStagedMessagesForTheNextOne() async throws {
        let buffer = MessageBuffer(capacity: 8, serial: 1, host: "h")
        let batch = DeliveryBatch()
        let consumer = try #require(buffer.claim())
        let task = Task { await buffer.next(for: consumer) }
        while !buffer.hasWaiter { await Task.yield() }
        batch.stage("kept", for: buffer)
        buffer.release(consumer)
        #expect(await task.value == nil)
        batch.flush()
        let next = try #require(buffer.claim())
        #expect(await buffer.next(for: next) == "kept")
    }
}
