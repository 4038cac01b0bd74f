import Testing

@testable import CableReactive

/// The deferred wake-up of a waiting consumer (one wake per network read, see `DeliveryBatch`).
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

    @Test func aBatchWakesTheConsumerOnceItEnds() async throws {
        let buffer = MessageBuffer(capacity: 128, serial: 1, host: "h")
        let batch = DeliveryBatch()
        let task = try await waitingConsumer(buffer, count: 3)
        buffer.push(1, batch: batch)
        buffer.push(2, batch: batch)
        #expect(buffer.hasWaiter, "the consumer stays parked until the read ends")
        buffer.push(3, batch: batch)
        batch.flush()
        #expect(await task.value == [1, 2, 3])
        #expect(buffer.droppedCount == 0)
    }

    @Test func halfAFullBufferWakesTheConsumerAtOnce() async throws {
        let buffer = MessageBuffer(capacity: 4, serial: 1, host: "h")
        let batch = DeliveryBatch()
        let task = try await waitingConsumer(buffer, count: 3)
        buffer.push(1, batch: batch)
        buffer.push(2, batch: batch)
        #expect(buffer.hasWaiter)
        buffer.push(3, batch: batch)  // 2 of 4 waiting: no more deferring
        #expect(!buffer.hasWaiter)
        #expect(await task.value == [1, 2, 3])
        batch.flush()  // the stale entry is harmless
        #expect(buffer.droppedCount == 0)
    }

    @Test func finishingHandsOverTheDeferredMessagesFirst() async throws {
        let buffer = MessageBuffer(capacity: 8, serial: 1, host: "h")
        let batch = DeliveryBatch()
        let task = try await waitingConsumer(buffer, count: 3)
        buffer.push("a", batch: batch)
        buffer.push("b", batch: batch)
        buffer.finish()
        #expect(await task.value == ["a", "b", nil])
        batch.flush()
    }

    @Test func withoutABatchEveryPushWakesTheConsumer() async throws {
        let buffer = MessageBuffer(capacity: 8, serial: 1, host: "h")
        let task = try await waitingConsumer(buffer, count: 1)
        buffer.push("now")
        #expect(!buffer.hasWaiter)
        #expect(await task.value == ["now"])
    }

    @Test func aCancelledConsumerLeavesTheDeferredMessagesForTheNextOne() async throws {
        let buffer = MessageBuffer(capacity: 8, serial: 1, host: "h")
        let batch = DeliveryBatch()
        let consumer = try #require(buffer.claim())
        let task = Task { await buffer.next(for: consumer) }
        while !buffer.hasWaiter { await Task.yield() }
        buffer.push("kept", batch: batch)
        buffer.release(consumer)
        #expect(await task.value == nil)
        batch.flush()
        let next = try #require(buffer.claim())
        #expect(await buffer.next(for: next) == "kept")
    }
}
