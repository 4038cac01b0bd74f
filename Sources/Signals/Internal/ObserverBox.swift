import Dispatch

/// One observer: its handler, its buffer, and the drain loop that delivers serially without holding a lock.
///
/// Sources call ``enqueue(_:)`` while holding their own lock, so every observer receives events in the
/// order the source accepted them. Whoever gets `true` back must call ``scheduleDrain()`` after releasing
/// that lock; the drain loop then delivers until the buffer is empty. A send that arrives while a drain is
/// running (from another thread, or re-entrantly from the handler itself) only appends: the running loop
/// delivers it, so the handler never runs concurrently with itself and re-entrant sends cannot deadlock.
final class ObserverBox<Element: Sendable>: Sendable {
    private struct State {
        var buffer: PolicyBuffer<Element>
        var finishPending = false
        var draining = false
        var handler: (@Sendable (SignalEvent<Element>) -> Void)?
    }

    private let state: Locked<State>
    private let queue: DispatchQueue?

    init(queue: DispatchQueue?, buffering: BufferingPolicy, handler: @escaping @Sendable (SignalEvent<Element>) -> Void)
    {
        self.queue = queue
        state = Locked(State(buffer: PolicyBuffer(policy: buffering), handler: handler))
    }

    /// Buffers `element`. Returns true when the caller must call ``scheduleDrain()``.
    func enqueue(_ element: Element) -> Bool {
        state.withLock { state in
            guard state.handler != nil, !state.finishPending else { return false }
            state.buffer.push(element)
            return Self.claimDrain(&state)
        }
    }

    /// Marks the end of the signal. Returns true when the caller must call ``scheduleDrain()``.
    func enqueueFinish() -> Bool {
        state.withLock { state in
            guard state.handler != nil, !state.finishPending else { return false }
            state.finishPending = true
            return Self.claimDrain(&state)
        }
    }

    private static func claimDrain(_ state: inout State) -> Bool {
        if state.draining { return false }
        state.draining = true
        return true
    }

    func scheduleDrain() {
        if let queue {
            queue.async { self.drain() }
        } else {
            drain()
        }
    }

    private func drain() {
        while let (handler, event) = nextDelivery() {
            handler(event)
        }
    }

    private func nextDelivery() -> ((@Sendable (SignalEvent<Element>) -> Void), SignalEvent<Element>)? {
        state.withLock { state in
            guard let handler = state.handler else {
                state.draining = false
                return nil
            }
            if let element = state.buffer.popFirst() {
                return (handler, .value(element))
            }
            if state.finishPending {
                // Terminal: release the handler so nothing it captured outlives the signal.
                state.handler = nil
                state.draining = false
                return (handler, .finished)
            }
            state.draining = false
            return nil
        }
    }

    /// Stops delivery and releases the handler.
    func cancel() {
        let released = state.withLock { state -> (@Sendable (SignalEvent<Element>) -> Void)? in
            defer {
                state.handler = nil
                state.buffer.removeAll()
            }
            return state.handler
        }
        // The handler (and what it captured) is released here, outside the lock.
        _ = released
    }

    var droppedCount: Int { state.withLock { $0.buffer.droppedCount } }
}

/// The observers of one source, with the ids their tokens use to remove them.
struct ObserverList<Element: Sendable> {
    private var entries: [(id: UInt64, box: ObserverBox<Element>)] = []
    private var nextID: UInt64 = 0

    var isEmpty: Bool { entries.isEmpty }

    mutating func insert(_ box: ObserverBox<Element>) -> UInt64 {
        nextID += 1
        entries.append((nextID, box))
        return nextID
    }

    mutating func remove(id: UInt64) {
        entries.removeAll { $0.id == id }
    }

    mutating func removeAll() -> [ObserverBox<Element>] {
        defer { entries.removeAll() }
        return entries.map(\.box)
    }

    /// Buffers `element` in every observer; returns the ones whose drain the caller must schedule.
    func enqueue(_ element: Element) -> DrainList<Element> {
        var list = DrainList<Element>()
        for entry in entries where entry.box.enqueue(element) {
            list.append(entry.box)
        }
        return list
    }
}

/// Boxes to drain after a source releases its lock; holds one without allocating.
struct DrainList<Element: Sendable> {
    private var first: ObserverBox<Element>?
    private var rest: [ObserverBox<Element>] = []

    mutating func append(_ box: ObserverBox<Element>) {
        if first == nil { first = box } else { rest.append(box) }
    }

    func run() {
        first?.scheduleDrain()
        for box in rest { box.scheduleDrain() }
    }
}
