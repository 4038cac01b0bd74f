extension Signal {
    /// Emits `values` first to each observer, then this signal's events.
    ///
    /// | self   |         | 3 | finished |
    /// |--------|---------|---|----------|
    /// | output | 1, 2    | 3 | finished |   (`prepend(1, 2)`)
    ///
    /// On a ``StateValue`` the prepended values come before its current value: `prepend(placeholder)` shows
    /// something before the first real value, and the state's replay follows at once.
    ///
    /// Threading: without a queue, the prepended values are delivered on the observing thread, inside
    /// `observe`, once this signal is observed (so a value the observer sends to it meanwhile is seen); with a
    /// queue, there. Either way they come before any of this signal's events.
    /// The values count against the observer's ``BufferingPolicy`` like any other. Cancelling the observation
    /// cancels the observation of this signal.
    ///
    /// ```swift
    /// let status = MutableEventStream<String>()
    /// let token = status.prepend("connecting…").observe { print($0) }   // Prints: connecting…
    /// status.send("online")                                            // Prints: online
    /// ```
    public func prepend(_ values: Element...) -> AnySignal<Element> {
        prepend(values)
    }

    /// Emits the elements of `values` first to each observer, then this signal's events, as the variadic
    /// `prepend(_:)` does.
    ///
    /// | self   |                  | c |
    /// |--------|------------------|---|
    /// | output | a, b             | c |   (`prepend(["a", "b"])`)
    ///
    /// ```swift
    /// let lines = liveLines.prepend(history)   // the history, then what arrives live
    /// ```
    public func prepend<Values: Sequence>(_ values: Values) -> AnySignal<Element> where Values.Element == Element {
        let values = Array(values)
        return AnySignal { queue, buffering, handler in
            let box = ObserverBox(queue: queue, buffering: buffering, handler: handler)
            var dropped = 0  // counted by the box's own buffer
            // Delivered once this signal is observed: what it delivers meanwhile (a state's current value) queues
            // behind the values, and a send from the observer while it receives them is seen.
            let delivery = box.enqueue(contentsOf: values, dropped: &dropped)
            let upstream = observeEvents(on: nil, buffering: .unbounded) { event in box.receive(event) }
            delivery.run()
            return SignalObservation(
                cancel: {
                    upstream.cancel()
                    box.cancel()
                },
                droppedCount: { box.droppedCount }
            )
        }
    }
}
