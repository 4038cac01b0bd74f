import Signals

/// The messages of the current network read, staged per subscription and handed to each subscription's
/// handles (their Signals streams, and so every consumer's buffer) in one go when the read ends.
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
        let box: DeliveryRoute
        var messages: [JSONValue] = []
        /// Whether the last hand-over dropped messages: one WARN per overflow episode.
        var overflowing = false
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
    /// The consumers to wake once the hand-overs in progress are done.
    private var wakes = WakeList()
    /// The most messages handed to one subscription at once in this read.
    private var largestHandOver = 0
    /// The messages handed over, to any subscription, since ``flush()`` last asked for a yield.
    private var handedSinceYield = 0
    /// A hand-over this large makes ``flush()`` ask the I/O thread to yield; see there.
    static let burst = 64
    /// So many messages handed over in all, however spread, make ``flush()`` ask for a yield too.
    static let yieldEvery = 1_024
    static let idleReads = 64
    /// Whether data frames were routed in this batch without noting their arrival time (noted once at its end).
    var routedFrames = false

    /// How many buffers have a slot (for tests).
    var slotCount: Int { staged.count }

    /// Stages `message` for `box`, after the messages staged for it before.
    func stage(_ message: JSONValue, for box: DeliveryRoute) {
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
        if staged[slot].messages.count >= box.handOverThreshold {
            handOver(slot)
            wakes.runAll()
        }
    }

    /// Hands every staged message to its buffer; ends the read.
    ///
    /// - Returns: whether the I/O thread should yield its core before reading more: one subscription was
    ///   handed at least ``burst`` messages in this read, or all of them together at least ``yieldEvery``
    ///   since the last yield. Where the I/O thread shares a core with the consumers (one core, or a pinned
    ///   process), it would otherwise read ahead for a whole time slice: a consumer would face thousands of
    ///   messages (held in memory, or dropped beyond `messageBufferSize`) instead of one read's worth, and a
    ///   thousand subscriptions a few each, thousands in all (about 1.5 MB of 64-byte messages, and as many
    ///   consumed ones that the next hand-over releases). Where the consumers run on other cores, the yield
    ///   returns at once. Yielding after every read that reaches many subscriptions costs a fifth of the
    ///   throughput; every thousand messages costs none (measured with CableBench, 1,000 subscriptions).
    @discardableResult
    func flush() -> Bool {
        for slot in dirty where !staged[slot].messages.isEmpty { handOver(slot) }
        wakes.runAll()  // every buffer is filled before the first consumer is woken
        dirty.removeAll(keepingCapacity: true)
        reads += 1
        if reads.isMultiple(of: Self.idleReads) { forgetIdleSlots() }
        defer { largestHandOver = 0 }
        guard largestHandOver >= Self.burst || handedSinceYield >= Self.yieldEvery else { return false }
        handedSinceYield = 0
        return true
    }

    private func handOver(_ slot: Int) {
        let box = staged[slot].box
        largestHandOver = max(largestHandOver, staged[slot].messages.count)
        handedSinceYield += staged[slot].messages.count
        let dropped = box.deliver(staged[slot].messages, wakes: &wakes)
        staged[slot].messages.removeAll(keepingCapacity: true)
        guard (dropped > 0) != staged[slot].overflowing else { return }
        staged[slot].overflowing = dropped > 0
        if dropped > 0 {
            box.log.emit(
                LogEvent(level: .warn, name: "buffer_overflow", fields: [.subscription(box.serial), .count(dropped)]))
        }
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
