import Dispatch

extension Signal {
    /// Transforms each value with `transform`.
    ///
    /// | input  | 1 | 2 | 3 |
    /// |--------|---|---|---|
    /// | output | 2 | 4 | 6 |   (`map { $0 * 2 }`)
    ///
    /// `transform` runs in the observer's delivery context, serially, and must not block.
    @inlinable
    public func map<T: Sendable>(_ transform: @escaping @Sendable (Element) -> T) -> AnySignal<T> {
        compactMap(transform)
    }

    /// Transforms each value and drops the `nil` results.
    ///
    /// | input  | "1" | "x" | "3" |
    /// |--------|-----|-----|-----|
    /// | output | 1   |     | 3   |   (`compactMap { Int($0) }`)
    @inlinable
    public func compactMap<T: Sendable>(_ transform: @escaping @Sendable (Element) -> T?) -> AnySignal<T> {
        AnySignal { queue, buffering, handler in
            let upstream = observeEvents(on: queue, buffering: buffering) { event in
                switch event {
                case .value(let value):
                    if let mapped = transform(value) { handler(.value(mapped)) }
                case .finished:
                    handler(.finished)
                }
            }
            return SignalObservation(cancel: upstream.cancel, droppedCount: { upstream.droppedCount })
        }
    }

    /// Passes on only the values for which `isIncluded` returns true.
    ///
    /// | input  | 1 | 2 | 3 | 4 |
    /// |--------|---|---|---|---|
    /// | output |   | 2 |   | 4 |   (`filter { $0.isMultiple(of: 2) }`)
    @inlinable
    public func filter(_ isIncluded: @escaping @Sendable (Element) -> Bool) -> AnySignal<Element> {
        compactMap { isIncluded($0) ? $0 : nil }
    }
}

extension Signal {
    /// Builds an operator whose per-observer state lives in `State`, a fresh copy of `initial` per observer.
    ///
    /// `step` receives each upstream event with the state and a `send` function for downstream events.
    /// Upstream delivery is serial, so the lock around the state is never contended; it exists to satisfy
    /// the compiler's Sendable checking.
    func stateful<State: Sendable, T: Sendable>(
        initial: State,
        _ step: @escaping @Sendable (inout State, SignalEvent<Element>, (SignalEvent<T>) -> Void) -> Void
    ) -> AnySignal<T> {
        AnySignal { queue, buffering, handler in
            let state = Locked(initial)
            let upstream = observeEvents(on: queue, buffering: buffering) { event in
                var outputs: [SignalEvent<T>] = []
                state.withLock { state in step(&state, event) { outputs.append($0) } }
                for output in outputs { handler(output) }
            }
            return SignalObservation(cancel: upstream.cancel, droppedCount: { upstream.droppedCount })
        }
    }
}
