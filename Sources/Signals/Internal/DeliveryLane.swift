import Dispatch

/// The one delivery order of every push observer on one queue (or one executor): a FIFO of tickets, one per send
/// to any of its observers, so that observers on one queue see events in the order they were sent, across
/// signals. An app's `@MainActor` model that observes a subscription's state and its messages on `.main` sees the
/// confirmation before the messages sent after it, whichever observer had a delivery pending.
///
/// Each observer box keeps its own buffer and policy; what the lane orders is the boxes' *runs*: the elements one
/// send put in one box, under one sequence number. The lane's drain takes the tickets in order and lets each box
/// deliver its runs up to that ticket's number (``ObserverBox/deliver(through:)``). So:
/// - a send costs one ticket per observer box, not one per element (a read's batch of messages is one run);
/// - a run that the box's policy dropped entirely leaves a stale ticket, which delivers nothing; stale tickets are
///   counted and compacted away once they outnumber the live ones, so the tickets stay bounded by what the
///   boxes hold, even while the queue is blocked and the boxes keep dropping;
/// - consecutive sends to one box while no other box's ticket came between them share one ticket.
///
/// The lane's drain is the only thing that runs its observers, one event at a time: two observers on one queue
/// never run concurrently, also on a concurrent queue. The main queue's lane runs at once, on the sending thread,
/// when the send is made on the main queue and no drain is running there (see ``MainQueueMark``): it then delivers
/// everything pending first, in order, as the turn it had submitted would have (that turn finds less to do). A
/// drain yields the queue after ``turnBudget`` events and continues in a new turn, so a burst does not hold the
/// main queue.
@usableFromInline
package final class DeliveryLane: Sendable {
    /// One send to one box: the box, the box's specialized delivery function (made in the sender's module, as a
    /// ``Wake``'s is, so that delivery runs specialized for the element type) and the send's sequence number.
    @usableFromInline
    struct Ticket: Sendable {
        @usableFromInline let box: any AnyObject & Sendable
        @usableFromInline let deliver: @Sendable (any AnyObject & Sendable, UInt64) -> Void
        @usableFromInline var seq: UInt64

        @inlinable
        init(
            box: any AnyObject & Sendable, deliver: @escaping @Sendable (any AnyObject & Sendable, UInt64) -> Void,
            seq: UInt64
        ) {
            self.box = box
            self.deliver = deliver
            self.seq = seq
        }
    }

    @usableFromInline
    struct State: Sendable {
        @usableFromInline var tickets = RingBuffer<Ticket>()
        @usableFromInline var lastSeq: UInt64 = 0
        /// A drain is running: a new ticket waits for it.
        @usableFromInline var running = false
        /// A turn of the drain is submitted and has not started.
        @usableFromInline var posted = false
        /// The sequence numbers of tickets whose runs are gone (dropped by their box's policy, or the box was
        /// cancelled); forgotten at each compaction.
        @usableFromInline var stale = Set<UInt64>()

        @inlinable init() {}
    }

    /// How many events one turn of the drain delivers before it gives the queue back.
    package static let turnBudget = 256

    @usableFromInline let state = Locked(State())
    private let submit: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// The main queue's lane: its drain runs at once when started on the main queue.
    private let isMain: Bool

    /// A lane whose drain runs through `submit` (serially, in submission order): a module's own executor.
    package init(submit: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        self.submit = submit
        isMain = false
    }

    private init(queue: DispatchQueue, isMain: Bool) {
        submit = { work in queue.async(execute: work) }
        self.isMain = isMain
    }

    /// The main queue's lane.
    package static let main = DeliveryLane(queue: .main, isMain: true)

    /// The lanes of the queues observers named, by queue. A lane keeps its queue alive and is kept alive by its
    /// boxes; an entry whose lane is gone is replaced (its queue may be gone too, and its identifier reused).
    private static let lanes = Locked<[ObjectIdentifier: WeakLane]>([:])

    private struct WeakLane: Sendable {
        weak var lane: DeliveryLane?
    }

    /// The lane of `queue`: every observer on one queue shares it (the main queue's, however it is spelled).
    package static func serving(_ queue: DispatchQueue) -> DeliveryLane {
        if MainQueueMark.isMain(queue) { return main }
        let key = ObjectIdentifier(queue)
        return lanes.withLock { lanes in
            if let lane = lanes[key]?.lane { return lane }
            if lanes.count >= 64 { lanes = lanes.filter { $0.value.lane != nil } }
            let lane = DeliveryLane(queue: queue, isMain: false)
            lanes[key] = WeakLane(lane: lane)
            return lane
        }
    }

    /// Takes a ticket for a send to `box`, under the box's lock (so tickets are in send order). Returns the send's
    /// sequence number, whether it joined the previous ticket (the last one in the lane was this box's: the box
    /// merges the send into its last run), and whether the caller must see to the drain (``start()``) after its
    /// locks: when none is running.
    @inlinable
    func ticket(
        for box: any AnyObject & Sendable, deliver: @escaping @Sendable (any AnyObject & Sendable, UInt64) -> Void
    ) -> (seq: UInt64, joined: Bool, start: Bool) {
        state.withLock { state in
            state.lastSeq &+= 1
            let seq = state.lastSeq
            let joined = state.tickets.updateLast { last in
                guard last.box === box else { return false }
                last.seq = seq
                return true
            }
            if !joined { state.tickets.append(Ticket(box: box, deliver: deliver, seq: seq)) }
            return (seq, joined, !state.running)
        }
    }

    /// The runs of tickets `seqs` are gone: their tickets deliver nothing, and are compacted away once stale
    /// tickets are at least half of them.
    @usableFromInline
    func markStale(_ seqs: some Sequence<UInt64>) {
        state.withLock { state in
            state.stale.formUnion(seqs)
            guard state.stale.count >= 32, state.stale.count * 2 >= state.tickets.count else { return }
            let stale = state.stale
            state.tickets.removeAll { stale.contains($0.seq) }
            state.stale.removeAll(keepingCapacity: true)
        }
    }

    /// Sees to the drain after a ticket: on the main queue's lane, called on the main queue, runs it here unless
    /// one is running; otherwise submits a turn unless one is running or submitted.
    @usableFromInline
    func start() {
        if isMain, MainQueueMark.isCurrent {
            let claimed = state.withLock { state -> Bool in
                guard !state.running else { return false }
                state.running = true
                return true
            }
            if claimed { drain() }
            return
        }
        let post = state.withLock { state -> Bool in
            guard !state.running, !state.posted else { return false }
            state.posted = true
            return true
        }
        if post { submit { self.turn() } }
    }

    /// A submitted turn: drains, unless a drain runs already (the main queue's, started by a send made there).
    private func turn() {
        let claimed = state.withLock { state -> Bool in
            state.posted = false
            guard !state.running else { return false }
            state.running = true
            return true
        }
        if claimed { drain() }
    }

    /// Delivers the tickets in order until none is left, or until a turn's budget is spent (then a new turn is
    /// submitted, and the queue runs other work between the two). The caller claimed `running`.
    private func drain() {
        var delivered = 0
        while let ticket = next(after: delivered) {
            ticket.deliver(ticket.box, ticket.seq)
            delivered += 1
        }
    }

    /// The next ticket; nil when there is none (the lane is idle again) or when the turn is over (the next turn
    /// is submitted).
    private func next(after delivered: Int) -> Ticket? {
        let (ticket, resubmit) = state.withLock { state -> (Ticket?, Bool) in
            guard let ticket = state.tickets.first else {
                state.running = false
                return (nil, false)
            }
            guard delivered < Self.turnBudget else {
                state.running = false
                defer { state.posted = true }
                return (nil, !state.posted)
            }
            _ = state.tickets.popFirst()
            return (ticket, false)
        }
        if resubmit { submit { self.turn() } }
        return ticket
    }

    /// How many tickets wait (for tests).
    package var ticketCount: Int { state.withLock { $0.tickets.count } }
}
