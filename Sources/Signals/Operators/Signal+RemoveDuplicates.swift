extension Signal {
    /// Drops a value that is a duplicate of the previous value passed on, per `isDuplicate`.
    ///
    /// Only the last emitted value is remembered: a value repeated after a different one is emitted again.
    ///
    /// | input  | 1 | 1 | 2 | 2 | 1 |
    /// |--------|---|---|---|---|---|
    /// | output | 1 |   | 2 |   | 1 |
    public func removeDuplicates(by isDuplicate: @escaping @Sendable (Element, Element) -> Bool) -> AnySignal<Element> {
        stateful(initial: Element?.none) { previous, event, send in
            switch event {
            case .value(let value):
                if let last = previous, isDuplicate(last, value) { return }
                previous = value
                send(.value(value))
            case .finished:
                send(.finished)
            }
        }
    }
}

extension Signal where Element: Equatable {
    /// Drops a value equal to the previous value passed on.
    ///
    /// | input  | 1 | 1 | 2 | 2 | 1 |
    /// |--------|---|---|---|---|---|
    /// | output | 1 |   | 2 |   | 1 |
    public func removeDuplicates() -> AnySignal<Element> {
        removeDuplicates(by: ==)
    }
}
