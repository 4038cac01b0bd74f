import Dispatch
import Signals
import Testing

@testable import CableReactive

/// Staged delivery: a read's messages reach each subscription's handles in one hand-over (see `DeliveryBatch`),
/// and each consumer's pull buffer (Signals' `ObserverBox`) wakes it once per hand-over.
@Suite struct DeliveryBatchTests {
    /// A client's shared subscription context with no engine behind it.
    static func context(bufferSize: Int) -> SubscriptionContext {
        SubscriptionContext(
            bufferSize: bufferSize, log: LogContext(host: "h"), callbacks: CallbackExecutor(DispatchQueue(label: "t")))
    }

    /// One subscription with one handle.
    struct Fixture {
        let box: DeliveryRoute
        let sink: HandleSink

        /// Hands `messages` over as a read's end does, waking the consumers after.
        func deliver(_ messages: some Collection<MessageJSON>) {
            var wakes = WakeList()
            box.deliver(messages, positioned: [], wakes: &wakes)
            wakes.run()
        }

        init(bufferSize: Int, serial: Int = 1) {
            sink = HandleSink(id: 1, bufferSize: bufferSize, state: .pending)
            box = DeliveryRoute(
                serial: serial, identifier: "s\(serial)", context: DeliveryBatchTests.context(bufferSize: bufferSize),
                sinks: [sink])
        }

        /// A consumer as a `for await` loop has it.
        func consumer() -> PullConsumer<MessageJSON> {
            PullConsumer(sink.messages, buffering: .bufferingNewest(box.bufferSize), keeping: nil)
        }
    }

    /// Everything the consumer can take without waiting.
    static func drain(_ consumer: PullConsumer<MessageJSON>) -> [MessageJSON] {
        var received: [MessageJSON] = []
        while case .element(let message) = consumer.box.poll() { received.append(message) }
        return received
    }

    /// Starts a consumer task and returns once it is suspended waiting.
    private func waitingConsumer(_ fixture: Fixture, count: Int) async -> (
        Task<[MessageJSON?], Never>, ObserverBox<MessageJSON>
    ) {
        let consumer = fixture.consumer()
        let task = Task {
            var received: [MessageJSON?] = []
            for _ in 0..<count { received.append(await consumer.next()) }
            return received
        }
        while !consumer.box.isWaiting { await Task.yield() }
        return (task, consumer.box)
    }

    @Test("only a subscription that saw a stream position has a sequencer, kept across box replacements")
    func sequencersOnlyForPositionedSubscriptions() {
        let plain = Fixture(bufferSize: 8, serial: 1)
        let context = plain.box.context
        let sink = HandleSink(id: 2, bufferSize: 8, state: .pending)
        let positioned = DeliveryRoute(serial: 2, identifier: "s2", context: context, sinks: [sink])
        let batch = DeliveryBatch()
        plain.box.stage(.int(1), at: nil, size: 0, in: batch)
        #expect(context.sequencerCount == 0 && !context.hasStreamPositions(1))
        let position = StreamPosition(stream: "chat", epoch: "e", offset: 5)
        positioned.stage(.int(5), at: position, size: 0, in: batch)
        #expect(context.sequencerCount == 1 && context.hasStreamPositions(2))
        let replaced = positioned.adding(HandleSink(id: 3, bufferSize: 8, state: .pending))
        replaced.stage(.int(5), at: position, size: 0, in: batch)  // a repeat, to the box that replaced the first
        batch.flush()
        #expect(Self.drain(plain.consumer()) == [.int(1)])
        let held = PullConsumer(sink.messages, buffering: .bufferingNewest(8), keeping: nil)
        #expect(Self.drain(held) == [.int(5)], "the repeat was dropped: the sequencer outlived its box")
        context.forget(2)
        #expect(context.sequencerCount == 0)
    }

    @Test("what reads report makes the I/O thread yield once reads spread over many subscriptions add up to yieldEvery")
    func spreadReadsAskToYield() {
        let spread = (1...256).map { Fixture(bufferSize: 1024, serial: $0) }
        let batch = DeliveryBatch()
        var handed = 0  // what the I/O thread counts between yields
        func yields() -> Bool { batch.flush().shouldYield(since: &handed) }
        let reads = ReadDelivery.yieldEvery / spread.count  // one message each per read: never a burst
        for read in 0..<reads {
            for fixture in spread { batch.stage(.int(read), for: fixture.box) }
            #expect(yields() == (read == reads - 1), "read \(read)")
        }
        for fixture in spread { batch.stage(.int(0), for: fixture.box) }
        #expect(!yields(), "the count starts again after a yield")
        let busy = Fixture(bufferSize: 1024, serial: 300)
        for n in 0..<ReadDelivery.burst { batch.stage(.int(n), for: busy.box) }
        #expect(yields(), "a burst")
        for _ in 0..<(reads - 1) {
            for fixture in spread { batch.stage(.int(0), for: fixture.box) }
            #expect(!yields(), "a burst's yield starts the count again too")
        }
    }

    @Test("what a read reports makes the I/O thread yield after one subscription was handed a burst")
    func burstAsksToYield() {
        let busy = Fixture(bufferSize: 1024, serial: 1)
        let spread = (2..<202).map { Fixture(bufferSize: 1024, serial: $0) }
        let batch = DeliveryBatch()
        var handed = 0  // what the I/O thread counts between yields
        func yields() -> Bool { batch.flush().shouldYield(since: &handed) }
        for n in 0..<(ReadDelivery.burst - 1) { batch.stage(.int(n), for: busy.box) }
        #expect(!yields(), "one short of a burst")
        for round in 0..<2 {
            for fixture in spread { batch.stage(.int(round), for: fixture.box) }
        }
        #expect(!yields(), "400 messages over 200 subscriptions: two each")
        for n in 0..<ReadDelivery.burst { batch.stage(.int(n), for: busy.box) }
        #expect(yields())
        #expect(!yields(), "an empty read after a burst")
        let small = Fixture(bufferSize: 2 * ReadDelivery.burst, serial: 300)
        for n in 0..<(ReadDelivery.burst + 1) { batch.stage(.int(n), for: small.box) }
        #expect(yields(), "a hand-over at half the buffer, mid-read, counts too")
    }

    @Test func aBatchHandsItsMessagesOverWhenItEnds() async throws {
        let f = Fixture(bufferSize: 128)
        let batch = DeliveryBatch()
        let (task, box) = await waitingConsumer(f, count: 3)
        batch.stage(1, for: f.box)
        batch.stage(2, for: f.box)
        #expect(box.isWaiting, "the consumer stays parked until the read ends")
        batch.stage(3, for: f.box)
        batch.flush()
        #expect(await task.value == [1, 2, 3])
        #expect(f.sink.messages.droppedCount == 0)
    }

    @Test func halfAFullBufferIsHandedOverAtOnce() async throws {
        let f = Fixture(bufferSize: 4)
        let batch = DeliveryBatch()
        let (task, box) = await waitingConsumer(f, count: 3)
        batch.stage(1, for: f.box)
        #expect(box.isWaiting)
        batch.stage(2, for: f.box)  // 2 of 4 staged: handed over now
        #expect(!box.isWaiting)
        batch.stage(3, for: f.box)
        batch.flush()
        #expect(await task.value == [1, 2, 3])
        #expect(f.sink.messages.droppedCount == 0)
    }

    @Test func aReadLongerThanTheBufferLosesNothingWhileTheConsumerKeepsUp() {
        // 20 messages staged in one read for a 4-message buffer, the consumer taking each hand-over (2
        // messages) before the next: nothing is dropped.
        let f = Fixture(bufferSize: 4)
        let batch = DeliveryBatch()
        let consumer = f.consumer()
        var received: [MessageJSON] = []
        for value in 0..<20 {
            batch.stage(.int(value), for: f.box)
            received += Self.drain(consumer)
        }
        batch.flush()
        received += Self.drain(consumer)
        #expect(received == (0..<20).map { .int($0) })
        #expect(f.sink.messages.droppedCount == 0)
    }

    @Test func stagingKeepsEachSubscriptionsOrderAcrossInterleavedMessages() {
        let fixtures = (0..<3).map { Fixture(bufferSize: 64, serial: $0) }
        let batch = DeliveryBatch()
        for value in 0..<30 { batch.stage(.int(value), for: fixtures[value % 3].box) }
        batch.flush()
        for (index, fixture) in fixtures.enumerated() {
            #expect(Self.drain(fixture.consumer()) == stride(from: index, to: 30, by: 3).map { .int($0) })
        }
    }

    @Test(arguments: [1, 3, 40])
    func everyReadHandsOverEverySubscriptionsMessages(subscriptions: Int) {
        // Slots outlive a read: the second and later reads must still hand everything over, whether the
        // subscriptions' messages come in runs, take turns, or spread over more than a few of them.
        let fixtures = (0..<subscriptions).map { Fixture(bufferSize: 1_000, serial: $0) }
        let batch = DeliveryBatch()
        var expected = Array(repeating: [MessageJSON](), count: subscriptions)
        var value = 0
        for read in 0..<5 {
            for step in 0..<60 {
                let index = read.isMultiple(of: 2) ? step % subscriptions : (step / 20) % subscriptions
                batch.stage(.int(value), for: fixtures[index].box)
                expected[index].append(.int(value))
                value += 1
            }
            batch.flush()
        }
        for (index, fixture) in fixtures.enumerated() {
            #expect(Self.drain(fixture.consumer()) == expected[index], "subscription \(index)")
        }
    }

    @Test func aFullBufferKeepsTheNewestOfAHandOverAndCountsTheRest() {
        let f = Fixture(bufferSize: 4)
        let consumer = f.consumer()
        f.deliver((0..<10).map { MessageJSON.int($0) })
        #expect(Self.drain(consumer) == [6, 7, 8, 9])
        #expect(consumer.box.droppedCount == 6)
        #expect(f.sink.messages.droppedCount == 6)
    }

    @Test func messagesHeldBeforeTheFirstConsumerKeepTheNewestAndCountTheRest() {
        let f = Fixture(bufferSize: 4)
        f.deliver((0..<10).map { MessageJSON.int($0) })
        let consumer = f.consumer()
        #expect(Self.drain(consumer) == [6, 7, 8, 9])
        #expect(consumer.box.droppedCount == 0, "the drops happened while held, before this consumer")
        #expect(f.sink.messages.droppedCount == 6)
    }

    @Test func messagesStillStagedWhenTheStreamEndsAreDiscarded() async throws {
        let f = Fixture(bufferSize: 8)
        let batch = DeliveryBatch()
        let (task, _) = await waitingConsumer(f, count: 3)
        batch.stage("a", for: f.box)
        batch.flush()
        batch.stage("b", for: f.box)
        f.sink.messages.finish()  // unsubscribed or closed: final, even mid-read
        batch.flush()
        #expect(await task.value == ["a", nil, nil])
    }

    @Test func consumedMessagesAreReleasedByTheNextHandOver() {
        let f = Fixture(bufferSize: 256)
        let consumer = f.consumer()
        f.deliver((0..<100).map { MessageJSON.int($0) })
        #expect(Self.drain(consumer).count == 100)
        #expect(consumer.box.takenAwaitingRelease == 100, "kept for the network thread, never more than it sent")
        f.deliver(CollectionOfOne(100))
        #expect(consumer.box.takenAwaitingRelease == 0)
        #expect(Self.drain(consumer) == [100])
        f.deliver(CollectionOfOne(101))  // a few are released in place
        #expect(consumer.box.takenAwaitingRelease == 0)
    }

    @Test func theEndReleasesConsumedMessagesAtOnce() {
        let f = Fixture(bufferSize: 16)
        let consumer = f.consumer()
        f.deliver((0..<4).map { MessageJSON.int($0) })
        guard case .element = consumer.box.poll() else { return #expect(Bool(false)) }
        #expect(consumer.box.takenAwaitingRelease == 1)
        f.sink.messages.finish()
        #expect(Self.drain(consumer) == [1, 2, 3])
        guard case .end = consumer.box.poll() else { return #expect(Bool(false), "the end follows the buffer") }
        #expect(consumer.box.takenAwaitingRelease == 0, "no hand-over will come after the end")
    }

    @Test func slotsIdleForManyReadsAreForgotten() {
        let fixtures = (0..<100).map { Fixture(bufferSize: 1_000, serial: $0) }
        let batch = DeliveryBatch()
        for (index, fixture) in fixtures.enumerated() { batch.stage(.int(index), for: fixture.box) }
        batch.flush()
        #expect(batch.slotCount == 100)
        for read in 1...(2 * DeliveryBatch.idleReads) {
            batch.stage(.int(1_000 + read), for: fixtures[7].box)
            batch.flush()
        }
        #expect(batch.slotCount == 1, "only the busy subscription keeps its slot")
        batch.stage(.int(5_000), for: fixtures[3].box)  // a forgotten one comes back
        batch.flush()
        for (index, fixture) in fixtures.enumerated() {
            var expected: [MessageJSON] = [.int(index)]
            if index == 7 { expected += (1...(2 * DeliveryBatch.idleReads)).map { .int(1_000 + $0) } }
            if index == 3 { expected.append(5_000) }
            #expect(Self.drain(fixture.consumer()) == expected, "subscription \(index)")
        }
    }

    @Test func aCancelledConsumerLeavesLaterMessagesForTheNextOne() async throws {
        let f = Fixture(bufferSize: 8)
        let batch = DeliveryBatch()
        var first: PullConsumer<MessageJSON>? = f.consumer()
        let box = try #require(first?.box)
        let task = Task { [box] in
            await box.wait()
            return box.poll()
        }
        while !box.isWaiting { await Task.yield() }
        batch.stage("kept", for: f.box)
        first = nil  // the loop ends: its consumer is released
        guard case .end = await task.value else { return #expect(Bool(false), "a released consumer ends") }
        batch.flush()
        #expect(Self.drain(f.consumer()) == ["kept"], "held for the next consumer")
        _ = first
    }

    @Test func twoConsumersEachGetEveryMessageAndTheirOwnDropCounts() {
        let f = Fixture(bufferSize: 4)
        let fast = f.consumer()
        let slow = f.consumer()
        var fastReceived: [MessageJSON] = []
        for value in 0..<10 {
            f.deliver(CollectionOfOne(.int(value)))
            fastReceived += Self.drain(fast)
        }
        #expect(fastReceived == (0..<10).map { .int($0) })
        #expect(Self.drain(slow) == [6, 7, 8, 9])
        #expect(fast.box.droppedCount == 0)
        #expect(slow.box.droppedCount == 6)
        #expect(f.sink.messages.droppedCount == 6, "the total is the sum over consumers")
    }
}
