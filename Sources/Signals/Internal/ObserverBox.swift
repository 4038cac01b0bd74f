import Dispatch

/// One observer: its buffer, and the way events leave it. The one per-observer mechanism of Signals; every
/// observation and every async iterator is one of these.
///
/// Sources call ``enqueue(contentsOf:dropped:)`` while holding their own lock, so every observer receives
/// events in the order the source accepted them. A ``Wake`` that comes back must be run (``Wake/run()``)
/// after releasing that lock. Events leave the box in one of two ways:
///
/// - **Push** (an observation) on the sending thread: a drain loop calls the handler until the buffer is empty.
///   A send that arrives while a drain runs (from another thread, or re-entrantly from the handler) only
///   appends; the running loop delivers it, so the handler never runs concurrently with itself and re-entrant
///   sends cannot deadlock.
/// - **Push on a queue** (or a module's executor): the queue's ``DeliveryLane`` delivers, in the order the
///   sends were made across every observer on that queue. The box keeps its buffer and policy and records each
///   send's elements as one run under the lane's ticket number; the lane's drain lets it deliver its runs up to
///   each ticket (``deliver(through:)``).
/// - **Pull** (an async iterator): the consumer takes elements with ``poll()`` and suspends in ``wait()``
///   when there are none; a send resumes it once, however many elements it brings. Elements it took are
///   released by the next send, on the sending thread: glibc frees another thread's memory under that
///   thread's arena lock, so a consumer on another core that freed every message would contend with the
///   producer's allocations for that lock, once per message. At most one buffer's worth waits.
///
/// Inlinable, so that the hot paths are specialized in the modules that use them for their element type: the
/// send, the wake and, through the function the wake carries (see ``Wake``), the push drain.
@usableFromInline
package final class ObserverBox<Element: Sendable>: ObservationTarget {
    @usableFromInline
    struct State {
        @usableFromInline var buffer: PolicyBuffer<Element>
        /// The source finished; the consumer gets `.finished` after the buffer.
        @usableFromInline var finishPending = false
        /// Cancelled, or the end was delivered: nothing more comes out.
        @usableFromInline var ended = false
        /// ``cancel()`` ran (what `SignalObservation.isCancelled` reports).
        @usableFromInline var cancelled = false
        /// Where the box is registered, and under which id: unregistered, and released, on ``cancel()``.
        @usableFromInline var source: (any ObserverSource)?
        @usableFromInline var sourceID: UInt64 = 0
        @usableFromInline var draining = false
        @usableFromInline var handler: (@Sendable (SignalEvent<Element>) -> Void)?
        @usableFromInline var waiter: UnsafeContinuation<Void, Never>?
        /// Pull mode: elements the consumer took, released by the next send.
        @usableFromInline var taken: [Element] = []
        /// Laned push: `buffer`'s elements as runs, oldest first: each send's elements under its lane ticket.
        /// Their counts add up to `buffer.count`.
        @usableFromInline var runs = RingBuffer<Run>()
        /// Laned push: the lane ticket of the end, once `finishPending`.
        @usableFromInline var finishSeq: UInt64 = 0

        @inlinable
        init(buffer: PolicyBuffer<Element>, handler: (@Sendable (SignalEvent<Element>) -> Void)?) {
            self.buffer = buffer
            self.handler = handler
        }
    }

    /// The elements one send put in a laned box, under the number of its lane ticket.
    @usableFromInline
    struct Run: Sendable {
        @usableFromInline var seq: UInt64
        @usableFromInline var count: Int

        @inlinable
        init(seq: UInt64, count: Int) {
            self.seq = seq
            self.count = count
        }
    }

    /// What ``poll()`` found.
    @usableFromInline
    package enum Poll: Sendable {
        case element(Element)
        case end
        case empty
    }

    @usableFromInline let state: Locked<State>
    /// Where push deliveries are ordered and run; nil runs them on the sending thread.
    @usableFromInline let lane: DeliveryLane?
    @usableFromInline let pulls: Bool

    /// A push box: `handler` gets the events, on `queue` (through its lane) or on the sending thread.
    convenience init(
        queue: DispatchQueue?, buffering: BufferingPolicy, handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) {
        self.init(lane: queue.map(DeliveryLane.serving), buffering: buffering, handler: handler)
    }

    /// A push box delivered by `lane` (in the lane's order), or on the sending thread.
    package init(
        lane: DeliveryLane?, buffering: BufferingPolicy, handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) {
        self.lane = lane
        pulls = false
        state = Locked(State(buffer: PolicyBuffer(policy: buffering), handler: handler))
    }

    /// A pull box, for an async iterator.
    @inlinable
    package init(pulling buffering: BufferingPolicy) {
        lane = nil
        pulls = true
        state = Locked(State(buffer: PolicyBuffer(policy: buffering), handler: nil))
    }

    /// Buffers `elements` in order, adding to `dropped` what the policy drops.
    @inlinable
    package func enqueue(contentsOf elements: some Collection<Element>, dropped: inout Int) -> Wake {
        var released: [Element] = []  // the consumer's taken elements, freed here after the lock
        return state.withLock { state -> Wake in
            guard !state.ended, !state.finishPending else { return .none }
            if pulls, !state.taken.isEmpty {
                if state.taken.count > 8 {
                    swap(&released, &state.taken)
                } else {
                    state.taken.removeAll(keepingCapacity: true)  // a few: not worth a new array
                }
            }
            if let lane { return enqueue(elements, on: lane, dropped: &dropped, &state) }
            for element in elements where state.buffer.push(element) { dropped += 1 }
            return wake(&state)
        }
    }

    /// Buffers `elements` as one run under a ticket of `lane`, and forgets the runs the policy dropped. Under the
    /// box's lock: the lane's lock is taken inside it, never the other way round.
    @inlinable
    func enqueue(
        _ elements: some Collection<Element>, on lane: DeliveryLane, dropped: inout Int, _ state: inout State
    ) -> Wake {
        var pushed = 0
        var drops = 0
        for element in elements {
            pushed += 1
            if state.buffer.push(element) { drops += 1 }
        }
        dropped += drops
        // bufferingOldest drops the new elements; the other policies drop the oldest ones, maybe of earlier runs.
        let dropsNew: Bool
        if case .oldest = state.buffer.policy.kind { dropsNew = true } else { dropsNew = false }
        let kept = dropsNew ? pushed - drops : pushed
        guard kept > 0 else { return .none }
        let ticket = lane.ticket(for: self) { box, seq in
            unsafeDowncast(box, to: ObserverBox<Element>.self).deliver(through: seq)
        }
        let merged =
            ticket.joined
            && state.runs.updateLast { run in
                run.seq = ticket.seq
                run.count += kept
                return true
            }
        if !merged { state.runs.append(Run(seq: ticket.seq, count: kept)) }
        if !dropsNew, drops > 0 {
            var gone: [UInt64] = []
            var left = drops
            while left > 0, let first = state.runs.first {
                if first.count <= left {
                    left -= first.count
                    _ = state.runs.popFirst()
                    gone.append(first.seq)
                } else {
                    state.runs.updateFirst { $0.count -= left }
                    left = 0
                }
            }
            if !gone.isEmpty { lane.markStale(gone) }
        }
        return ticket.start ? .lane(lane) : .none
    }

    /// Buffers `element`. Returns what the caller must run after its lock.
    @inlinable
    package func enqueue(_ element: Element) -> Wake {
        var dropped = 0
        return enqueue(contentsOf: CollectionOfOne(element), dropped: &dropped)
    }

    /// Marks the end of the signal. Returns what the caller must run after its lock.
    @inlinable
    package func enqueueFinish() -> Wake {
        state.withLock { state -> Wake in
            guard !state.ended, !state.finishPending else { return .none }
            state.finishPending = true
            guard let lane else { return wake(&state) }
            let ticket = lane.ticket(for: self) { box, seq in
                unsafeDowncast(box, to: ObserverBox<Element>.self).deliver(through: seq)
            }
            state.finishSeq = ticket.seq
            return ticket.start ? .lane(lane) : .none
        }
    }

    /// Feeds one event from an upstream observation (a pull box behind a generic signal).
    @inlinable
    package func receive(_ event: SignalEvent<Element>) {
        switch event {
        case .value(let element): enqueue(element).run()
        case .finished: enqueueFinish().run()
        }
    }

    @inlinable
    func wake(_ state: inout State) -> Wake {
        if pulls {
            guard let waiter = state.waiter else { return .none }
            state.waiter = nil
            return .resume(waiter)
        }
        if state.draining { return .none }
        state.draining = true
        // Made here, in the sender's module when the send path is inlined there: specialized for `Element`, and
        // with nothing to capture then, so it allocates nothing.
        return .drain(self) { box in unsafeDowncast(box, to: ObserverBox<Element>.self).scheduleDrain() }
    }

    // MARK: push

    @inlinable
    package func scheduleDrain() {
        drain()
    }

    @inlinable
    func drain() {
        var handler: (@Sendable (SignalEvent<Element>) -> Void)?
        while let event = nextDelivery(handler: &handler), let handler {
            handler(event)
        }
    }

    /// The next event to deliver, and the handler to deliver it to, taken under the lock; nil once there is none
    /// (the drain is over). The handler comes out through `handler` rather than in the result: a function
    /// returned through `withLock`'s generic result is converted to and from its generic form, which allocates
    /// twice per delivery.
    @inlinable
    func nextDelivery(handler: inout (@Sendable (SignalEvent<Element>) -> Void)?) -> SignalEvent<Element>? {
        state.withLock { state in
            guard !state.ended, let current = state.handler else {
                state.draining = false
                return nil
            }
            handler = current
            if let element = state.buffer.popFirst() {
                return .value(element)
            }
            if state.finishPending {
                // Terminal: release the handler so nothing it captured outlives the signal.
                state.handler = nil
                state.ended = true
                state.draining = false
                return .finished
            }
            state.draining = false
            return nil
        }
    }

    /// Delivers, for its lane, the runs up to ticket `seq` and then the end if its ticket is at or before `seq`.
    @inlinable
    func deliver(through seq: UInt64) {
        var handler: (@Sendable (SignalEvent<Element>) -> Void)?
        while let event = nextLaned(through: seq, handler: &handler), let handler {
            handler(event)
        }
    }

    /// The next event of the runs up to ticket `seq`, with the handler to deliver it to (as ``nextDelivery(handler:)``).
    @inlinable
    func nextLaned(through seq: UInt64, handler: inout (@Sendable (SignalEvent<Element>) -> Void)?)
        -> SignalEvent<Element>?
    {
        state.withLock { state in
            guard !state.ended, let current = state.handler else { return nil }
            if let run = state.runs.first, run.seq <= seq, let element = state.buffer.popFirst() {
                if run.count <= 1 { _ = state.runs.popFirst() } else { state.runs.updateFirst { $0.count -= 1 } }
                handler = current
                return .value(element)
            }
            guard state.finishPending, state.buffer.isEmpty, state.finishSeq <= seq else { return nil }
            // Terminal: release the handler so nothing it captured outlives the signal.
            handler = current
            state.handler = nil
            state.ended = true
            return .finished
        }
    }

    // MARK: pull

    /// Takes the next element without waiting; `.end` once the signal finished (after the buffer) or the
    /// box was cancelled.
    @inlinable
    package func poll() -> Poll {
        state.withLock { state in
            if let element = state.buffer.popFirst() {
                if !state.finishPending { state.taken.append(element) }  // after the end no send releases it
                return .element(element)
            }
            guard state.finishPending || state.ended else { return .empty }
            state.ended = true
            state.taken.removeAll()
            return .end
        }
    }

    /// Suspends until an element or the end is available (or the task is cancelled, which cancels the box).
    ///
    /// The continuation is unchecked: it is stored and taken out only under the lock, so exactly one of a
    /// send, the end or a cancellation resumes it, once (a checked one allocates a canary per wait).
    #if compiler(>=6.2)
        /// On the caller's executor (`nonisolated(nonsending)`): a loop's wait hops to no other executor, and
        /// with many subscriptions a loop waits once per message.
        @usableFromInline
        nonisolated(nonsending) package func wait() async {
            await withTaskCancellationHandler {
                await withUnsafeContinuation { waiter in if !park(waiter) { waiter.resume() } }
            } onCancel: {
                cancel()
            }
        }
    #else
        @usableFromInline
        package func wait() async {
            await withTaskCancellationHandler {
                await withUnsafeContinuation { waiter in if !park(waiter) { waiter.resume() } }
            } onCancel: {
                cancel()
            }
        }
    #endif

    /// Stores `waiter` for the next send, unless something is ready now (then returns `false`).
    private func park(_ waiter: UnsafeContinuation<Void, Never>) -> Bool {
        state.withLock { state -> Bool in
            if !state.buffer.isEmpty || state.finishPending || state.ended { return false }
            state.waiter = waiter
            return true
        }
    }

    // MARK: both

    /// Stops delivery, drops what is buffered and releases the handler; a waiting consumer resumes and ends.
    @usableFromInline
    package func cancel() {
        let (handler, waiter, taken, registration, staleTickets) = state.withLock {
            state -> (
                (@Sendable (SignalEvent<Element>) -> Void)?, UnsafeContinuation<Void, Never>?, [Element],
                (source: any ObserverSource, id: UInt64)?, [UInt64]
            ) in
            var stale = state.runs.elements.map(\.seq)
            if lane != nil, state.finishPending, !state.ended { stale.append(state.finishSeq) }
            state.ended = true
            state.cancelled = true
            state.buffer.removeAll()
            state.runs.removeAll()
            defer {
                state.handler = nil
                state.waiter = nil
                state.taken = []
                state.source = nil
            }
            return (state.handler, state.waiter, state.taken, state.source.map { ($0, state.sourceID) }, stale)
        }
        // The lane's tickets for this box now deliver nothing; let it compact them away.
        if let lane, !staleTickets.isEmpty { lane.markStale(staleTickets) }
        // Outside the box's lock: a source calls into boxes under its own lock, never the other way round.
        if let registration { registration.source.removeObserver(id: registration.id) }
        // The handler (and what it captured) and the taken elements are released here, outside the lock.
        _ = (handler, taken)
        waiter?.resume()
    }

    /// Records that `source` holds this box under `id`, so that ``cancel()`` unregisters it (and lets go of the
    /// source, which may be what the handler captured). Call it once, after the source registered the box; a
    /// box cancelled meanwhile is unregistered at once.
    func register(with source: any ObserverSource, id: UInt64) {
        let cancelled = state.withLock { state -> Bool in
            if state.cancelled { return true }
            state.source = source
            state.sourceID = id
            return false
        }
        if cancelled { source.removeObserver(id: id) }
    }

    package var droppedCount: Int { state.withLock { $0.buffer.droppedCount } }

    /// Whether ``cancel()`` ran.
    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Whether a pull consumer is suspended in ``wait()`` (for tests).
    package var isWaiting: Bool { state.withLock { $0.waiter != nil } }

    /// How many taken elements wait for the next send to release them (for tests).
    package var takenAwaitingRelease: Int { state.withLock { $0.taken.count } }
}

/// The observers of one source, with the ids their tokens use to remove them.
@usableFromInline
struct ObserverList<Element: Sendable> {
    @usableFromInline var entries: [(id: UInt64, box: ObserverBox<Element>)] = []
    @usableFromInline var nextID: UInt64 = 0

    @inlinable init() {}

    @inlinable var isEmpty: Bool { entries.isEmpty }

    @inlinable
    mutating func insert(_ box: ObserverBox<Element>) -> UInt64 {
        nextID += 1
        entries.append((nextID, box))
        return nextID
    }

    @inlinable
    mutating func remove(id: UInt64) {
        entries.removeAll { $0.id == id }
    }

    @inlinable
    mutating func removeAll() -> [ObserverBox<Element>] {
        defer { entries.removeAll() }
        return entries.map(\.box)
    }

    /// Buffers `elements` in every observer; returns the wakes the caller must run after its lock.
    @inlinable
    func enqueue(contentsOf elements: some Collection<Element>, dropped: inout Int) -> WakeList {
        var list = WakeList()
        enqueue(contentsOf: elements, dropped: &dropped, into: &list)
        return list
    }

    /// Buffers `elements` in every observer, adding the wakes to run after the lock to `wakes`.
    @inlinable
    func enqueue(contentsOf elements: some Collection<Element>, dropped: inout Int, into wakes: inout WakeList) {
        for entry in entries { wakes.append(entry.box.enqueue(contentsOf: elements, dropped: &dropped)) }
    }

    @inlinable
    func enqueue(_ element: Element) -> WakeList {
        var dropped = 0
        return enqueue(contentsOf: CollectionOfOne(element), dropped: &dropped)
    }
}

/// What a source must do for one observer after releasing its lock: start its push drain, or resume its
/// waiting pull consumer. A struct of optionals rather than an enum: an enum with these payloads is handled by
/// run-time calls (multi-payload enum tags) on the hot path.
///
/// The drain is a box and a function that starts it, made by the box's inlinable ``ObserverBox/wake(_:)``:
/// where the send path is inlined (a module sending to a stream of a concrete element type), the function is
/// specialized for that type and captures nothing. Calling the box through a protocol instead ran the generic
/// drain, which looks up type metadata at run time for every delivery (about 1 µs each).
@usableFromInline
package struct Wake: Sendable {
    @usableFromInline let box: (any AnyObject & Sendable)?
    @usableFromInline let startDrain: (@Sendable (any AnyObject & Sendable) -> Void)?
    @usableFromInline let waiter: UnsafeContinuation<Void, Never>?

    /// Nothing to do.
    @inlinable
    static var none: Wake { Wake(box: nil, startDrain: nil, waiter: nil) }

    @inlinable
    var isNone: Bool { box == nil && waiter == nil }

    @inlinable
    static func drain(
        _ box: any AnyObject & Sendable, _ start: @escaping @Sendable (any AnyObject & Sendable) -> Void
    ) -> Wake {
        Wake(box: box, startDrain: start, waiter: nil)
    }

    /// Start `lane`'s drain.
    @inlinable
    static func lane(_ lane: DeliveryLane) -> Wake {
        Wake(box: lane, startDrain: { unsafeDowncast($0, to: DeliveryLane.self).start() }, waiter: nil)
    }

    @inlinable
    static func resume(_ waiter: UnsafeContinuation<Void, Never>) -> Wake {
        Wake(box: nil, startDrain: nil, waiter: waiter)
    }

    @inlinable
    init(
        box: (any AnyObject & Sendable)?, startDrain: (@Sendable (any AnyObject & Sendable) -> Void)?,
        waiter: UnsafeContinuation<Void, Never>?
    ) {
        self.box = box
        self.startDrain = startDrain
        self.waiter = waiter
    }

    /// Starts the drain, if this wake has one.
    @inlinable
    func startDrainIfAny() {
        if let box, let startDrain { startDrain(box) }
    }

    @inlinable
    package func run() {
        startDrainIfAny()
        waiter?.resume()
    }
}

/// Wakes to run after a source releases its lock; holds one without allocating.
@usableFromInline
package struct WakeList: Sendable {
    @usableFromInline var first = Wake.none
    @usableFromInline var rest: [Wake] = []

    @inlinable package init() {}

    @inlinable
    mutating func append(_ wake: Wake) {
        if wake.isNone { return }
        if first.isNone { first = wake } else { rest.append(wake) }
    }

    /// Starts the push drains here, in order, and resumes the waiting pull consumers: here when there is one,
    /// in one job on the global pool when there are several.
    ///
    /// A resume from this thread wakes a pool thread, and the kernel lets the woken thread run at once; on a
    /// busy core it runs the one consumer, finds nothing more to do and sleeps before this thread resumes the
    /// next, so every resume cost two context switches. One job that resumes them all wakes the pool once, and
    /// the consumers it resumes run one after another on the threads already awake.
    @inlinable
    package func run() {
        guard !rest.isEmpty else { return first.run() }
        var waiters: [UnsafeContinuation<Void, Never>] = []
        waiters.reserveCapacity(rest.count + 1)
        func start(_ wake: Wake) {
            wake.startDrainIfAny()
            if let waiter = wake.waiter { waiters.append(waiter) }
        }
        start(first)
        rest.forEach(start)
        guard waiters.count > 1 else { return waiters.first?.resume() ?? () }
        DispatchQueue.global().async { [waiters] in
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Runs the wakes and empties the list, keeping its storage.
    @inlinable
    package mutating func runAll() {
        run()
        first = .none
        rest.removeAll(keepingCapacity: true)
    }
}
