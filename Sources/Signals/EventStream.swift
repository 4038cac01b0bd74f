import Dispatch

/// The shared storage of a ``MutableEventStream`` and its read-only ``EventStream`` views.
@usableFromInline
package final class StreamStorage<Element: Sendable>: ObserverSource {
    @usableFromInline
    struct State {
        @usableFromInline var observers = ObserverList<Element>()
        @usableFromInline var finished = false
        /// Values sent while nobody observed, for the next observer (a holding stream only).
        @usableFromInline var held: PolicyBuffer<Element>?
        /// Every value dropped: by `held`, and by each observer's buffer.
        @usableFromInline var droppedCount = 0

        @inlinable
        init(held: PolicyBuffer<Element>?) {
            self.held = held
        }
    }

    @usableFromInline let state: Locked<State>

    @inlinable
    package init(holding: BufferingPolicy?) {
        state = Locked(State(held: holding.map(PolicyBuffer.init)))
    }

    /// A read-only view that keeps `owner` alive for as long as the view, or any observation or loop made
    /// through it, exists, and runs observers that name no queue on `lane` when one is given (as
    /// ``StateStorage/view(keeping:lane:)`` does for a state).
    package func view(keeping owner: (any AnyObject & Sendable)?, lane: DeliveryLane? = nil) -> EventStream<Element> {
        EventStream(storage: self, keeping: owner, lane: lane)
    }

    /// Sends `elements` in order to every observer (or holds them), under one lock; each observer is woken
    /// once. Returns nil if the stream has finished, else how many values were dropped.
    @inlinable
    package func send(contentsOf elements: some Collection<Element>) -> Int? {
        var wakes = WakeList()
        let dropped = send(contentsOf: elements, wakes: &wakes)
        wakes.run()
        return dropped
    }

    /// ``send(contentsOf:)`` whose wakes (observers to drain, waiting loops to resume) are added to `wakes`
    /// for the caller to run after its other sends: a batch for many streams wakes their consumers only once
    /// everything is buffered.
    @inlinable
    package func send(contentsOf elements: some Collection<Element>, wakes: inout WakeList) -> Int? {
        var dropped = 0
        let finished = state.withLock { state -> Bool in
            if state.finished { return true }
            if state.observers.isEmpty, state.held != nil {
                for element in elements where state.held?.push(element) == true { dropped += 1 }
            } else {
                state.observers.enqueue(contentsOf: elements, dropped: &dropped, into: &wakes)
            }
            state.droppedCount += dropped
            return false
        }
        return finished ? nil : dropped
    }

    package func finish() {
        let boxes = state.withLock { state -> [ObserverBox<Element>] in
            guard !state.finished else { return [] }
            state.finished = true
            return state.observers.removeAll()
        }
        for box in boxes { box.enqueueFinish().run() }
    }

    var isFinished: Bool { state.withLock { $0.finished } }

    package var droppedCount: Int { state.withLock { $0.droppedCount } }

    /// Counts `count` values the owner discarded before sending (ones that came too late to be sent in order,
    /// say) in ``droppedCount``, with the ones the buffers dropped.
    package func countDropped(_ count: Int) {
        state.withLock { $0.droppedCount += count }
    }

    /// How many observers and loops are registered (for lifetime tests).
    package var observerCount: Int { state.withLock { $0.observers.entries.count } }

    /// Registers `box`: it gets the held values first, if any, then every later event. A finished stream
    /// gives it the held values and its completion.
    @usableFromInline
    package func attach(_ box: ObserverBox<Element>) -> SignalObservation {
        var wakes = WakeList()
        let id = state.withLock { state -> UInt64? in
            if var held = state.held, !held.isEmpty {
                let values = held.takeAll()  // the hold's storage goes too: it may never be needed again
                state.held = held
                var dropped = 0
                wakes.append(box.enqueue(contentsOf: values, dropped: &dropped))
                state.droppedCount += dropped
            }
            return state.finished ? nil : state.observers.insert(box)
        }
        guard let id else {
            // A finished stream replays its completion to late observers.
            wakes.append(box.enqueueFinish())
            wakes.run()
            return SignalObservation(box: box)
        }
        wakes.run()
        box.register(with: self, id: id)
        return SignalObservation(box: box)
    }

    @usableFromInline
    func removeObserver(id: UInt64) {
        state.withLock { $0.observers.remove(id: id) }
    }

    func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) -> SignalObservation {
        attach(ObserverBox(queue: queue, buffering: buffering, handler: handler))
    }

    /// Observes through `lane` (a module's own executor's, or a queue's) instead of a queue.
    package func observeEvents(
        lane: DeliveryLane,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) -> SignalObservation {
        attach(ObserverBox(lane: lane, buffering: buffering, handler: handler))
    }
}

/// A read-only view of a hot, multicast stream of events.
///
/// Observers receive the values sent after they start observing, each through its own buffer
/// (``BufferingPolicy``). A stream made with ``MutableEventStream/init(holdingUpTo:)`` also holds the values
/// sent while nobody observes and gives them to the next observer. When the stream finishes, every
/// observer gets `.finished`, and so does any observer that comes later.
///
/// ```swift
/// let source = MutableEventStream<String>()
/// let messages: EventStream<String> = source.readOnly
/// let token = messages.observe { print("got", $0) }
/// source.send("hi")                                    // Prints: got hi
/// for await message in messages.values { ... }         // or iterate asynchronously
/// ```
///
/// Threading: see ``Signal``. Lifetime: a view keeps the storage alive; observations do not.
public final class EventStream<Element: Sendable>: Signal {
    @usableFromInline package let storage: StreamStorage<Element>
    /// What this view keeps alive, as does every observation made through it.
    let owner: (any AnyObject & Sendable)?
    /// Where an observer that names no queue runs; nil: on the sending thread.
    let lane: DeliveryLane?

    init(storage: StreamStorage<Element>, keeping owner: (any AnyObject & Sendable)? = nil, lane: DeliveryLane? = nil) {
        self.storage = storage
        self.owner = owner
        self.lane = lane
    }

    /// Whether the stream has finished.
    public var isFinished: Bool { storage.isFinished }

    /// How many values were dropped: held values that did not fit, and every observer's buffer overflows
    /// (each observer's own count is its ``SignalObservation/droppedCount``).
    public var droppedCount: Int { storage.droppedCount }

    /// Observes the stream's future events; see ``Signal/observeEvents(on:buffering:_:)``. A view a library hands
    /// out may run observers that name no queue on the library's own queue; its documentation says so.
    public func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) -> SignalObservation {
        let lane = queue.map(DeliveryLane.serving) ?? lane
        return storage.attach(ObserverBox(lane: lane, buffering: buffering, handler: handler)).keeping(owner)
    }
}

/// The owner's side of an ``EventStream``: sends values and finishes the stream.
///
/// Releasing the last reference to the owner finishes the stream, so async loops over it end.
///
/// ```swift
/// let inbox = MutableEventStream<String>(holdingUpTo: 16)
/// inbox.send("early")                                  // held: nobody observes yet
/// let token = inbox.readOnly.observe { print($0) }     // Prints: early
/// ```
///
/// Threading: `send` and `finish` may be called from any thread; see ``Signal`` for delivery.
public final class MutableEventStream<Element: Sendable>: Signal {
    @usableFromInline package let storage: StreamStorage<Element>

    /// The read-only view to hand to other code.
    public let readOnly: EventStream<Element>

    /// Creates a stream with no observers; values sent while nobody observes go nowhere. Releasing it
    /// finishes the stream for every observer.
    public init() {
        storage = StreamStorage(holding: nil)
        readOnly = EventStream(storage: storage)
    }

    /// Creates a stream that holds values sent while nobody observes, the newest `limit` of them, and
    /// delivers them to the next observer before anything else. Observers that start while another one
    /// observes see only later values. Held values that do not fit are counted in ``droppedCount``.
    ///
    /// - Precondition: `limit >= 1`.
    public init(holdingUpTo limit: Int) {
        storage = StreamStorage(holding: .bufferingNewest(limit))
        readOnly = EventStream(storage: storage)
    }

    deinit { storage.finish() }

    /// Sends `element` to every current observer (or holds it; see ``init(holdingUpTo:)``).
    ///
    /// - Returns: false if the stream has already finished (the element goes nowhere).
    @inlinable
    @discardableResult
    public func send(_ element: Element) -> Bool {
        storage.send(contentsOf: CollectionOfOne(element)) != nil
    }

    /// Sends `elements` in order under one lock; each observer is woken once for all of them.
    ///
    /// Each observer buffers the whole batch before its delivery starts, so an observer whose policy holds
    /// fewer values than the batch drops the excess even if it keeps up with single sends.
    ///
    /// - Returns: false if the stream has already finished (the elements go nowhere).
    @inlinable
    @discardableResult
    public func send(contentsOf elements: some Collection<Element>) -> Bool {
        storage.send(contentsOf: elements) != nil
    }

    /// Ends the stream. Later sends are ignored; later observers get `.finished` at once. Idempotent.
    public func finish() {
        storage.finish()
    }

    /// Whether the stream has finished.
    public var isFinished: Bool { storage.isFinished }

    /// How many values were dropped; see ``EventStream/droppedCount``.
    public var droppedCount: Int { storage.droppedCount }

    /// How many observers and loops are registered (for lifetime tests).
    package var observerCount: Int { storage.observerCount }

    /// Observes the stream's future events; see ``Signal/observeEvents(on:buffering:_:)``.
    public func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) -> SignalObservation {
        storage.observeEvents(on: queue, buffering: buffering, handler)
    }
}
