import Signals

/// The messages of the current network read, staged per subscription and handed to each subscription's
/// handles (their Signals streams, and so every consumer's buffer) in one go when the read ends.
///
/// One lock per subscription per read, not one per message: when the app's loop runs on another core, it and
/// the I/O thread would otherwise contend for the buffer's lock on every message, and a waiting loop is woken
/// once per read. So that staging never costs a drop, a subscription's messages are handed over at once when
/// they fill half its buffer.
///
/// `@unchecked Sendable`: every member is touched only by one connection's event handler, text receiver and
/// `batchEnded` callback, which the transport calls serially on its one I/O thread.
final class DeliveryBatch: @unchecked Sendable {
    private struct Slot {
        let route: DeliveryRoute
        var messages: [JSONValue] = []
        /// The same messages with their positions, for a route whose handles read them (else empty).
        var positioned: [PositionedMessage] = []
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
    /// What this read handed over so far.
    private var delivery = ReadDelivery()
    static let idleReads = 64
    /// Whether data frames were routed in this batch without noting their arrival time (noted once at its end).
    var routedFrames = false

    /// The published routes this read routes with, loaded at its first data frame (``route(for:on:loading:)``).
    var routes: SubscriptionTable.Routes?

    /// The route of identifier token `token` in this read's routes, which are loaded from `published` at the
    /// read's first data frame: `nil` when `id` is not their live session, `.some(nil)` for a token they lack.
    func route(
        for token: UnsafeBufferPointer<UInt8>, on id: UInt64, loading published: Locked<SubscriptionTable.Routes>
    ) -> DeliveryRoute?? {
        if routes == nil { routes = published.withLock { $0 } }
        guard routes?.live == id else { return nil }
        return .some(routes?.index.lookup(token: token))
    }

    /// How many buffers have a slot (for tests).
    var slotCount: Int { staged.count }

    /// Stages `message` (at `position`, if it has one) for `route`, after the messages staged for it before.
    func stage(_ message: JSONValue, at position: StreamPosition? = nil, for route: DeliveryRoute) {
        let slot: Int
        if staged.indices.contains(lastSlot), staged[lastSlot].route === route {
            slot = lastSlot  // consecutive messages for one subscription skip the lookup
        } else if dirty.count <= 16, let recent = dirty.first(where: { staged[$0].route === route }) {
            slot = recent  // a few subscriptions take turns: comparing pointers beats hashing
        } else if let known = slots[ObjectIdentifier(route)] {
            slot = known
        } else {
            slot = staged.count
            slots[ObjectIdentifier(route)] = slot
            staged.append(Slot(route: route))
        }
        if staged[slot].messages.isEmpty {
            dirty.append(slot)  // may repeat a slot; flush skips empty ones
            staged[slot].lastRead = reads
        }
        lastSlot = slot
        if route.wantsPositions { staged[slot].positioned.append(PositionedMessage(message, at: position)) }
        staged[slot].messages.append(message)
        if staged[slot].messages.count >= route.handOverThreshold {
            handOver(slot)
            wakes.runAll()
        }
    }

    /// Hands every staged message to its buffer; ends the read.
    ///
    /// - Returns: what the read handed over, from which the I/O thread decides whether to yield.
    @discardableResult
    func flush() -> ReadDelivery {
        for slot in dirty where !staged[slot].messages.isEmpty { handOver(slot) }
        wakes.runAll()  // every buffer is filled before the first consumer is woken
        dirty.removeAll(keepingCapacity: true)
        reads += 1
        routes = nil
        if reads.isMultiple(of: Self.idleReads) { forgetIdleSlots() }
        defer { delivery = ReadDelivery() }
        return delivery
    }

    private func handOver(_ slot: Int) {
        let route = staged[slot].route
        delivery.largestHandOver = max(delivery.largestHandOver, staged[slot].messages.count)
        delivery.handedOver += staged[slot].messages.count
        let dropped = route.deliver(staged[slot].messages, wakes: &wakes)
        staged[slot].messages.removeAll(keepingCapacity: true)
        if !staged[slot].positioned.isEmpty {
            route.deliver(positioned: staged[slot].positioned, wakes: &wakes)
            staged[slot].positioned.removeAll(keepingCapacity: true)
        }
        guard (dropped > 0) != staged[slot].overflowing else { return }
        staged[slot].overflowing = dropped > 0
        if dropped > 0 {
            route.log.emit(
                LogEvent(level: .warn, name: "buffer_overflow", fields: [.subscription(route.serial), .count(dropped)]))
        }
    }

    /// Drops the slots no message was staged in for `idleReads` reads (all are empty between reads).
    private func forgetIdleSlots() {
        let recent = staged.filter { reads - $0.lastRead <= Self.idleReads }
        guard recent.count < staged.count else { return }
        staged = recent
        slots = Dictionary(uniqueKeysWithValues: staged.indices.map { (ObjectIdentifier(staged[$0].route), $0) })
        lastSlot = 0
    }
}
