import Signals

/// The messages of the current network read, staged per subscription and handed to each subscription's
/// handles (their Signals streams, and so every consumer's buffer) in one go when the read ends.
///
/// One lock per subscription per read, not one per message: when the app's loop runs on another core, it and
/// the I/O thread would otherwise contend for the buffer's lock on every message, and a waiting loop is woken
/// once per read. So that staging never costs a drop, a subscription's messages are handed over at once when
/// they fill half its buffer.
///
/// Hand-overs happen in the engine's delivery turn (``DeliveryTurns``), the turn in which its effects publish states
/// and outcomes: so what a subscription's consumers get (its messages, its states, its reconnect outcomes) comes in
/// the order the client decided it. When another thread runs the engine's effects, the staged messages are queued
/// behind them (``StagedDelivery``), and that thread hands them over in their turn.
///
/// `@unchecked Sendable`: every member is touched only by one connection's event handler, text receiver and
/// `batchEnded` callback, which the transport calls serially on its one I/O thread (the engine takes staged
/// messages out with ``takeStaged()`` under its lock, called from there too).
final class DeliveryBatch: @unchecked Sendable {
    private struct Slot {
        let route: DeliveryRoute
        var messages: [MessageJSON] = []
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
    /// The connection (attempt) this batch delivers for.
    let connection: UInt64
    /// Where hand-overs take their turn; nil hands over at once (a client that is gone orders nothing).
    private weak var turns: (any DeliveryTurns)?

    init(connection: UInt64 = 0, turns: (any DeliveryTurns)? = nil) {
        self.connection = connection
        self.turns = turns
    }

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
    func stage(_ message: MessageJSON, at position: StreamPosition? = nil, for route: DeliveryRoute) {
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
        if route.wantsPositions, let value = message.value {  // a value already, as a rule: positions read values
            staged[slot].positioned.append(PositionedMessage(value, at: position))
        }
        staged[slot].messages.append(message)
        if staged[slot].messages.count >= route.handOverThreshold { handOverStaged() }
    }

    /// Whether messages are staged and not handed over yet.
    var hasStaged: Bool { !dirty.isEmpty }

    /// Hands every staged message to its buffer in the delivery turn (before a frame that may change what the
    /// subscriptions tell the app is decided, and when a subscription's staging is half its buffer).
    func handOverStaged() {
        endTurn(notingFrames: false)
    }

    /// Hands every staged message to its buffer in the delivery turn, notes the frames' arrival (one lock for
    /// both); ends the read.
    ///
    /// - Returns: what the read handed over, from which the I/O thread decides whether to yield.
    @discardableResult
    func flush() -> ReadDelivery {
        endTurn(notingFrames: routedFrames)
        routedFrames = false
        reads += 1
        routes = nil
        if reads.isMultiple(of: Self.idleReads) { forgetIdleSlots() }
        defer { delivery = ReadDelivery() }
        return delivery
    }

    /// Claims the delivery turn and hands over here, or leaves the staged messages to the thread that has it.
    private func endTurn(notingFrames: Bool) {
        guard let turns else { return handOverNow() }
        guard turns.claimTurn(for: self, notingFrames: notingFrames) else { return }
        handOverNow()
        turns.endTurn()
    }

    /// Hands every staged message over here: every buffer is filled before the first consumer is woken.
    private func handOverNow() {
        guard !dirty.isEmpty else { return }
        for slot in dirty where !staged[slot].messages.isEmpty { handOver(slot) }
        wakes.runAll()
        dirty.removeAll(keepingCapacity: true)
    }

    /// Takes the staged messages out, for the thread that has the delivery turn to hand over in it
    /// (``StagedDelivery/handOver()``); what they will hand over counts in this read's ``ReadDelivery``.
    func takeStaged() -> StagedDelivery {
        var taken = StagedDelivery()
        for slot in dirty where !staged[slot].messages.isEmpty {
            delivery.largestHandOver = max(delivery.largestHandOver, staged[slot].messages.count)
            delivery.handedOver += staged[slot].messages.count
            taken.parts.append((staged[slot].route, staged[slot].messages, staged[slot].positioned))
            staged[slot].messages = []
            staged[slot].positioned = []
        }
        dirty.removeAll(keepingCapacity: true)
        return taken
    }

    private func handOver(_ slot: Int) {
        let route = staged[slot].route
        delivery.largestHandOver = max(delivery.largestHandOver, staged[slot].messages.count)
        delivery.handedOver += staged[slot].messages.count
        let dropped = route.deliver(staged[slot].messages, positioned: staged[slot].positioned, wakes: &wakes)
        staged[slot].messages.removeAll(keepingCapacity: true)
        staged[slot].positioned.removeAll(keepingCapacity: true)
        guard (dropped > 0) != staged[slot].overflowing else { return }
        staged[slot].overflowing = dropped > 0
        if dropped > 0 { route.logOverflow(dropped) }
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

/// Messages a read staged, taken out for the thread that has the delivery turn: the engine queues them as an effect
/// behind the effects decided before them, so they reach the consumers in that order.
struct StagedDelivery: Sendable {
    var parts: [(route: DeliveryRoute, messages: [MessageJSON], positioned: [PositionedMessage])] = []

    /// Hands each part to its subscription's buffers; wakes the consumers once everything is buffered.
    func handOver() {
        var wakes = WakeList()
        for part in parts {
            let dropped = part.route.deliver(part.messages, positioned: part.positioned, wakes: &wakes)
            if dropped > 0 { part.route.logOverflow(dropped) }
        }
        wakes.runAll()
    }
}

/// Where a ``DeliveryBatch`` takes its turn to hand messages over: the engine's FIFO of effects, whose turn is also
/// the one in which subscriptions' states and outcomes are published.
protocol DeliveryTurns: AnyObject, Sendable {
    /// In one critical section: notes that `batch`'s connection received frames (when `notingFrames`), and either
    /// claims the turn (true: the caller hands over, then calls ``endTurn()``) or, while another thread has it,
    /// queues `batch`'s staged messages behind what that thread runs (``DeliveryBatch/takeStaged()``; false). Claims
    /// nothing when `batch` has nothing staged.
    func claimTurn(for batch: DeliveryBatch, notingFrames: Bool) -> Bool
    /// Gives the turn back, after running what was queued meanwhile.
    func endTurn()
}
