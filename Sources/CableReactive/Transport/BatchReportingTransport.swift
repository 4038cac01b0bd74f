import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that can hand text messages over as UTF-8 bytes, and report the end of each network read.
///
/// The client's hot path: bytes skip a `String` per message (the client parses JSON from bytes anyway),
/// and the end-of-read report lets it wake a waiting `for await` loop once per read instead of once per
/// message (a read holds hundreds of messages from a fast server; waking a task costs more than handling
/// a message). Transports without it (custom ones, `URLSessionTransport`, the fake) deliver `.text`
/// events and the consumer is woken per message: correct, only slower.
package protocol BatchReportingTransport: WebSocketTransport {
    /// ``WebSocketTransport/connect(request:protocols:handler:)``, except that text messages go to
    /// `receiver` instead of `handler` as `.text` events. Both run on the same thread, serially.
    func connect(
        request: URLRequest,
        protocols: [String],
        receiver: TextReceiver,
        handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection
}

/// Where a connection delivers text messages as UTF-8 bytes instead of `.text(String)` events: the fast
/// path for apps that parse messages themselves, and the one ``ActionCableClient`` uses.
///
/// Both closures run on the connection's I/O thread, serially, in wire order, interleaved with the
/// handler's other events; the connection keeps them alive until `.closed` has been delivered, and must let
/// go of them then (``ActionCableClient``'s receiver holds the client's state).
///
/// ```swift
/// let receiver = TextReceiver(
///     text: { utf8 in parser.feed(utf8) },          // valid UTF-8; copy it if you keep it
///     batchEnded: { parser.publishPending() }       // after the messages of one network read
/// )
/// let connection = SocketTransport().connect(request: request, protocols: [], receiver: receiver) { event in
///     print(event)                                  // .opened and .closed; no .text events
/// }
/// ```
public struct TextReceiver: Sendable {
    /// Gets each text message's validated UTF-8, in order. The bytes are valid only during the call.
    public var text: @Sendable (UnsafeBufferPointer<UInt8>) -> Void
    /// Called after the messages of one network read, so a consumer can publish them in one go.
    public var batchEnded: @Sendable () -> Void

    /// A receiver with the two callbacks.
    public init(
        text: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Void,
        batchEnded: @escaping @Sendable () -> Void
    ) {
        self.text = text
        self.batchEnded = batchEnded
    }
}

extension TextReceiver {
    /// `handler`, except that `.text` events go to this receiver, each as a read of one message: how a
    /// transport without ``BatchReportingTransport`` (`URLSessionTransport`, `FakeTransport`, your own) feeds
    /// the same delivery path as ``SocketTransport``.
    func adapting(
        _ handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> @Sendable (WebSocketEvent) -> Void {
        let receiver = self
        return { event in
            guard case .text(var message) = event else { return handler(event) }
            message.withUTF8 { receiver.text($0) }  // a String is valid UTF-8
            receiver.batchEnded()
        }
    }
}

/// The messages of the current network read, staged per subscription and handed to each subscription's
/// buffer in one go when the read ends.
///
/// One lock per subscription per read instead of one per message: when the app's loop runs on another core,
/// it and the I/O thread no longer contend for the buffer's lock on every message (that contention sent
/// both to the kernel every few messages), and a waiting loop is woken once per read. So that staging never
/// costs a drop, a subscription's messages are handed over at once when they fill half its buffer.
///
/// `@unchecked Sendable`: every member is touched only by one connection's event handler, text receiver and
/// `batchEnded` callback, which the transport calls serially on its one I/O thread.
final class DeliveryBatch: @unchecked Sendable {
    private struct Slot {
        let box: SubscriptionBox
        var messages: [JSONValue] = []
        /// The read that last staged a message here.
        var lastRead = 0
    }

    /// Each buffer's slot in `staged`. Slots outlive a read, so that a busy subscription's staging array is
    /// reused rather than reallocated per read; every `Self.idleReads` reads, slots idle that long are
    /// forgotten (which also lets go of the buffers of ended subscriptions).
    private var slots: [ObjectIdentifier: Int] = [:]
    private var staged: [Slot] = []
    /// The slots that got messages in this read since their last hand-over (a slot may appear twice).
    private var dirty: [Int] = []
    /// The slot of the previous message.
    private var lastSlot = 0
    /// Reads so far (batch ends).
    private var reads = 0
    static let idleReads = 64
    /// Whether data frames were routed in this batch without noting their arrival time (noted once at its end).
    var routedFrames = false

    /// How many buffers have a slot (for tests).
    var slotCount: Int { staged.count }

    /// Stages `message` for `box`, after the messages staged for it before.
    func stage(_ message: JSONValue, for box: SubscriptionBox) {
        let slot: Int
        if staged.indices.contains(lastSlot), staged[lastSlot].box === box {
            slot = lastSlot  // consecutive messages for one subscription skip the lookup
        } else if dirty.count <= 16, let recent = dirty.first(where: { staged[$0].box === box }) {
            slot = recent  // a few subscriptions take turns: comparing pointers beats hashing
        } else if let known = slots[ObjectIdentifier(box)] {
            slot = known
        } else {
            slot = staged.count
            slots[ObjectIdentifier(box)] = slot
            staged.append(Slot(box: box))
        }
        if staged[slot].messages.isEmpty {
            dirty.append(slot)  // may repeat a slot; flush skips empty ones
            staged[slot].lastRead = reads
        }
        lastSlot = slot
        staged[slot].messages.append(message)
        if staged[slot].messages.count >= box.handOverThreshold { handOver(slot) }
    }

    /// Hands every staged message to its buffer; ends the read.
    func flush() {
        for slot in dirty where !staged[slot].messages.isEmpty { handOver(slot) }
        dirty.removeAll(keepingCapacity: true)
        reads += 1
        if reads.isMultiple(of: Self.idleReads) { forgetIdleSlots() }
    }

    private func handOver(_ slot: Int) {
        staged[slot].box.deliver(staged[slot].messages)
        staged[slot].messages.removeAll(keepingCapacity: true)
    }

    /// Drops the slots no message was staged in for `idleReads` reads (all are empty between reads).
    private func forgetIdleSlots() {
        let recent = staged.filter { reads - $0.lastRead <= Self.idleReads }
        guard recent.count < staged.count else { return }
        staged = recent
        slots = Dictionary(uniqueKeysWithValues: staged.indices.map { (ObjectIdentifier(staged[$0].box), $0) })
        lastSlot = 0
    }
}
