extension Signal where Element: Signal {
    /// Observes the newest signal this signal has sent and passes its values on, cancelling the observation of
    /// the one before.
    ///
    /// | self   | A |    | B  |    |    | finished |          |
    /// |--------|---|----|----|----|----|----------|----------|
    /// | A      |   | a1 |    | a2 |    |          |          |
    /// | B      |   |    |    |    | b1 |          | finished |
    /// | output |   | a1 |    |    | b1 |          | finished |
    ///
    /// Switching cancels the observation of the previous inner signal first, and no event of it that arrives
    /// after the switch reaches the observer, even one sent on another thread at that moment. An inner signal's
    /// end does not end the output: it finishes once this signal has finished and the current inner signal has
    /// finished too (or none was sent), as in Combine.
    ///
    /// A view model that shows the messages of the room the user picked:
    ///
    /// ```swift
    /// let shown = selectedRoom.map { room in messages(of: room) }.switchToLatest()
    /// ```
    ///
    /// A `flatMapLatest(_:)` would only spell `map(_:)` and `switchToLatest()` as one call, so there is none.
    ///
    /// Threading: an inner signal's values are delivered on the thread that sent them (or on the observer's
    /// queue). An inner signal that delivers while being observed (a ``StateValue``'s current value) does so
    /// on the thread that sent it, inside that send. Cancelling the observation cancels the observations of
    /// this signal and of the current inner signal; a replaced inner signal's observation is cancelled at the
    /// switch.
    public func switchToLatest() -> AnySignal<Element.Element> {
        AnySignal { queue, buffering, handler in
            let box = ObserverBox(queue: queue, buffering: buffering, handler: handler)
            let switcher = Switcher<Element>(box: box)
            let outer = observeEvents(on: nil, buffering: .unbounded) { [weak switcher] event in
                switcher?.receiveOuter(event)
            }
            return SignalObservation(
                cancel: {
                    outer.cancel()
                    switcher.cancel()
                },
                droppedCount: { box.droppedCount }
            )
        }
    }
}

/// The state of one `switchToLatest` observation: which inner signal is current, and what has finished.
private struct SwitchState: Sendable {
    /// The number of the current inner signal: its events are the only ones passed on.
    var generation = 0
    /// The observation of the current inner signal, cancelled at the next switch or on cancel.
    var current: SignalObservation?
    var outerFinished = false
    /// The current inner signal finished, or none was sent yet.
    var innerFinished = true
    /// Finished or cancelled: nothing more is passed on or observed.
    var done = false
}

/// One `switchToLatest` observation: a ``Combiner`` whose inputs are the inner signals, numbered by
/// generation, so that their events and the switches are ordered under one lock.
private final class Switcher<Inner: Signal>: Sendable {
    private let combiner: Combiner<Inner.Element, SwitchState, Inner.Element>

    init(box: ObserverBox<Inner.Element>) {
        combiner = Combiner(SwitchState(), box: box) { state, generation, event, send in
            guard generation == state.generation, !state.done else { return }  // a replaced inner signal
            switch event {
            case .value(let value):
                send(.value(value))
            case .finished:
                state.innerFinished = true
                if state.outerFinished {
                    state.done = true
                    send(.finished)
                }
            }
        }
    }

    /// The outer signal sent a new inner signal, or finished. Outer events arrive serially.
    func receiveOuter(_ event: SignalEvent<Inner>) {
        switch event {
        case .value(let inner):
            switchTo(inner)
        case .finished:
            combiner.update { state, send in
                guard !state.done else { return }
                state.outerFinished = true
                if state.innerFinished {
                    state.done = true
                    send(.finished)
                }
            }
        }
    }

    private func switchTo(_ inner: Inner) {
        let (generation, replaced) = combiner.update { state, _ -> (Int?, SignalObservation?) in
            guard !state.done else { return (nil, nil) }
            state.generation += 1
            state.innerFinished = false
            defer { state.current = nil }
            return (state.generation, state.current)
        }
        replaced?.cancel()
        guard let generation else { return }
        // Not under the lock: the inner signal may deliver inside `observeEvents`.
        let observation = inner.observeEvents(on: nil, buffering: .unbounded) { [weak combiner] event in
            combiner?.receive(event, from: generation)
        }
        let stale = combiner.update { state, _ -> SignalObservation? in
            // Replaced or cancelled while it was being observed: its events were never passed on.
            guard state.generation == generation, !state.done else { return observation }
            state.current = observation
            return nil
        }
        stale?.cancel()
    }

    /// Stops passing events on and cancels the current inner signal's observation.
    func cancel() {
        let current = combiner.update { state, _ -> SignalObservation? in
            state.done = true
            state.generation += 1
            defer { state.current = nil }
            return state.current
        }
        current?.cancel()
        combiner.box.cancel()
    }
}
