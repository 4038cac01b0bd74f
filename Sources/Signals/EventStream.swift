import Dispatch

/// The shared storage of a ``MutableEventStream`` and its read-only ``EventStream`` views.
final class StreamStorage<Element: Sendable>: Sendable {
    struct State {
        var observers = ObserverList<Element>()
        var finished = false
    }

    let state = Locked(State())

    @discardableResult
    func send(_ element: Element) -> Bool {
        let drains = state.withLock { state -> DrainList<Element>? in
            guard !state.finished else { return nil }
            return state.observers.enqueue(element)
        }
        drains?.run()
        return drains != nil
    }

    func finish() {
        let boxes = state.withLock { state -> [ObserverBox<Element>] in
            guard !state.finished else { return [] }
            state.finished = true
            return state.observers.removeAll()
        }
        for box in boxes where box.enqueueFinish() { box.scheduleDrain() }
    }

    var isFinished: Bool { state.withLock { $0.finished } }

    func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) -> Observation {
        let box = ObserverBox(queue: queue, buffering: buffering, handler: handler)
        let id = state.withLock { state -> UInt64? in
            state.finished ? nil : state.observers.insert(box)
        }
        guard let id else {
            // A finished stream replays its completion to late observers.
            if box.enqueueFinish() { box.scheduleDrain() }
            return Observation(box: box) {}
        }
        return Observation(box: box) { [weak self] in
            self?.state.withLock { $0.observers.remove(id: id) }
        }
    }
}

/// A read-only view of a hot, multicast stream of events.
///
/// Observers receive the values sent after they start observing (nothing is replayed), each through its
/// own buffer (``BufferingPolicy``). When the stream finishes, every observer gets `.finished`, and so does
/// any observer that comes later.
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
    let storage: StreamStorage<Element>

    init(storage: StreamStorage<Element>) {
        self.storage = storage
    }

    /// Whether the stream has finished.
    public var isFinished: Bool { storage.isFinished }

    /// Observes the stream's future events; see ``Signal/observeEvents(on:buffering:_:)``.
    public func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) -> Observation {
        storage.observeEvents(on: queue, buffering: buffering, handler)
    }
}

/// The owner's side of an ``EventStream``: sends values and finishes the stream.
///
/// Releasing the last reference to the owner finishes the stream, so async loops over it end.
///
/// Threading: `send` and `finish` may be called from any thread; see ``Signal`` for delivery.
public final class MutableEventStream<Element: Sendable>: Signal {
    let storage = StreamStorage<Element>()

    /// The read-only view to hand to other code.
    public let readOnly: EventStream<Element>

    /// Creates a stream with no observers. Releasing it finishes the stream for every observer.
    public init() {
        readOnly = EventStream(storage: storage)
    }

    deinit { storage.finish() }

    /// Sends `element` to every current observer.
    ///
    /// - Returns: false if the stream has already finished (the element goes nowhere).
    @discardableResult
    public func send(_ element: Element) -> Bool {
        storage.send(element)
    }

    /// Ends the stream. Later sends are ignored; later observers get `.finished` at once. Idempotent.
    public func finish() {
        storage.finish()
    }

    /// Whether the stream has finished.
    public var isFinished: Bool { storage.isFinished }

    /// Observes the stream's future events; see ``Signal/observeEvents(on:buffering:_:)``.
    public func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) -> Observation {
        storage.observeEvents(on: queue, buffering: buffering, handler)
    }
}
