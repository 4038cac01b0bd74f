/// The values of a ``Signal`` as an `AsyncSequence`; each loop gets its own buffered iterator.
///
/// The iterator starts observing when it is created (when a `for await` loop begins) and stops when it is
/// released, when the signal finishes, or when the iterating task is cancelled (the loop then ends). No
/// `Task` is started per value: values wait in the iterator's buffer, governed by its ``BufferingPolicy``.
///
/// ```swift
/// for await state in client.state.values {
///     print(state)
/// }
/// ```
public struct SignalValues<Base: Signal>: AsyncSequence, Sendable {
    /// The values the base signal emits.
    public typealias Element = Base.Element

    let base: Base
    let buffering: BufferingPolicy

    /// Starts observing the base signal; observation ends when the iterator is released or the loop ends.
    public func makeAsyncIterator() -> Iterator {
        Iterator(storage: IteratorStorage(base: base, buffering: buffering))
    }

    /// The iterator of one loop. It is not `Sendable`: iterate from one task.
    public struct Iterator: AsyncIteratorProtocol {
        let storage: IteratorStorage<Element>

        /// Returns the next value, waiting for one if the buffer is empty, or `nil` once the signal has
        /// finished or the task is cancelled.
        public mutating func next() async -> Element? {
            await storage.next()
        }

        /// How many values this iterator's buffer has dropped.
        public var droppedCount: Int { storage.droppedCount }
    }
}

@available(*, unavailable)
extension SignalValues.Iterator: Sendable {}

extension Signal {
    /// The values as an `AsyncSequence` whose iterators keep every value they have not consumed yet.
    public var values: SignalValues<Self> { SignalValues(base: self, buffering: .unbounded) }

    /// The values as an `AsyncSequence` whose iterators buffer according to `buffering`.
    public func values(buffering: BufferingPolicy) -> SignalValues<Self> {
        SignalValues(base: self, buffering: buffering)
    }

    /// Waits for the first value that satisfies `predicate` and returns it.
    ///
    /// ```swift
    /// let connected = await client.state.first { $0 == .connected }
    /// ```
    ///
    /// - Returns: the value, or `nil` if the signal finishes first or the task is cancelled.
    public func first(where predicate: (Element) throws -> Bool) async rethrows -> Element? {
        for await value in values where try predicate(value) {
            return value
        }
        return nil
    }

    /// Waits for the first value and returns it; `nil` if the signal finishes first or the task is cancelled.
    public func first() async -> Element? {
        await first { _ in true }
    }
}

/// The buffer and waiting continuation behind one ``SignalValues/Iterator``.
final class IteratorStorage<Element: Sendable>: Sendable {
    private struct State {
        var buffer: PolicyBuffer<Element>
        var finished = false
        var waiter: CheckedContinuation<Element?, Never>?
    }

    private enum Poll {
        case element(Element)
        case end
        case empty
    }

    private let state: Locked<State>
    private let observation: Locked<Observation?> = Locked(nil)

    init<Base: Signal>(base: Base, buffering: BufferingPolicy) where Base.Element == Element {
        state = Locked(State(buffer: PolicyBuffer(policy: buffering)))
        let token = base.observeEvents(on: nil, buffering: .unbounded) { [weak self] event in
            self?.receive(event)
        }
        observation.withLock { $0 = token }
    }

    deinit {
        observation.withLock { $0 }?.cancel()
    }

    var droppedCount: Int { state.withLock { $0.buffer.droppedCount } }

    private func receive(_ event: SignalEvent<Element>) {
        let resume = state.withLock { state -> (CheckedContinuation<Element?, Never>, Element?)? in
            guard !state.finished else { return nil }
            switch event {
            case .value(let value):
                if let waiter = state.waiter {
                    state.waiter = nil
                    return (waiter, value)
                }
                state.buffer.push(value)
                return nil
            case .finished:
                state.finished = true
                guard let waiter = state.waiter else { return nil }
                state.waiter = nil
                return (waiter, nil)
            }
        }
        if let (waiter, value) = resume { waiter.resume(returning: value) }
    }

    private func poll() -> Poll {
        state.withLock { state in
            if let element = state.buffer.popFirst() { return .element(element) }
            return state.finished ? .end : .empty
        }
    }

    func next() async -> Element? {
        switch poll() {
        case .element(let element): return element
        case .end: return nil
        case .empty: break
        }
        if Task.isCancelled {
            end()
            return nil
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let immediate = state.withLock { state -> Poll in
                    if let element = state.buffer.popFirst() { return .element(element) }
                    if state.finished { return .end }
                    state.waiter = continuation
                    return .empty
                }
                switch immediate {
                case .element(let element): continuation.resume(returning: element)
                case .end: continuation.resume(returning: nil)
                case .empty: break
                }
            }
        } onCancel: {
            end()
        }
    }

    /// Stops observing and ends the iteration; a waiting `next()` returns nil.
    private func end() {
        let waiter = state.withLock { state -> CheckedContinuation<Element?, Never>? in
            state.finished = true
            state.buffer.removeAll()
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
        observation.withLock { $0 }?.cancel()
    }
}
