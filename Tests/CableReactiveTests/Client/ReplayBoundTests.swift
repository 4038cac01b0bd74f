import CableTesting
import Signals
import Testing

@testable import CableReactive

/// A replay larger than every buffer (AnyCable's history after a restore), with live messages arriving first:
/// every replayed message is delivered in offset order or counted in `droppedCount`, and `lastReconnect` says
/// `recovered` only when nothing was skipped.
@Suite("Replay larger than the buffer")
struct ReplayBoundTests {
    static let a = #"{"channel":"A"}"#

    /// The cases: buffer size, live messages that arrive (past the gap) before the replay, and whether they pass
    /// the hold bound (4,096 messages, or four buffers).
    static let cases: [(buffer: Int, live: Int, passesBound: Bool)] = [
        (1, 50, false), (16, 3000, false), (16, 5000, true), (128, 200, false), (256, 4200, true),
        (2048, 4200, false),
    ]

    @Test(
        "delivered ∪ counted is every offset the server sent, in order; recovered only when nothing was skipped",
        arguments: cases)
    func replayLargerThanBuffer(buffer: Int, live: Int, passesBound: Bool) throws {
        var options = CableOptions()
        options.wireProtocol = .anyCableExtended
        options.minReconnectDelay = 1
        options.maxReconnectDelay = 1
        options.messageBufferSize = buffer
        let h = try ClientHarness(options: options)
        let room = try h.client.subscribe(["channel": "A"])
        let watch = ExtendedProtocolTests.Watch(room)
        h.client.connect()
        let first = try ExtendedProtocolTests.welcome(h)
        first.receive(ClientHarness.confirm(Self.a))
        first.receive(read: (1...3).map { ExtendedProtocolTests.broadcast(Self.a, $0) })
        h.scheduler.flush()

        let next = try ExtendedProtocolTests.reconnect(h)
        try ExtendedProtocolTests.welcome(h, #"{"type":"welcome","sid":"sid-2","restored":true}"#)
        #expect(next.sent.last?.contains(#""command":"history""#) == true)
        // The live messages from 10,000 come first, then the whole backlog 4...(10,000 + live - 1), repeating the
        // live ones (rule 5.8), in reads of 64 frames, the app's queue running now and then.
        let lastOffset = 10_000 + live - 1
        let arrivals = Array(10_000...lastOffset) + Array(4...lastOffset)
        var random = SeededRandom(seed: UInt64(buffer * 31 + live))
        for start in stride(from: 0, to: arrivals.count, by: 64) {
            let read = arrivals[start..<min(start + 64, arrivals.count)]
            next.receive(read: read.map { ExtendedProtocolTests.broadcast(Self.a, $0) })
            if Int.random(in: 0..<4, using: &random) == 0 { h.scheduler.flush() }
        }
        next.receive(ExtendedProtocolTests.history(Self.a, "confirm_history"))
        h.scheduler.flush()

        let delivered = watch.values.withLock { $0 }
        #expect(zip(delivered, delivered.dropFirst()).allSatisfy { $0 < $1 }, "in offset order, each once")
        #expect(delivered.count + room.messages.droppedCount == lastOffset, "delivered ∪ counted = sent")
        #expect(delivered.last == lastOffset, "drop-oldest keeps the newest")
        let outcome: SubscriptionReconnect = passesBound ? .recoveredWithGaps : .recovered
        #expect(watch.reconnects.withLock { $0 } == [nil, .recovering, outcome])
        #expect(room.lastReconnect.value?.mayHaveMissedMessages == passesBound)
    }
}
