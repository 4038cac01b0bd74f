/// The newest `limit` elements of a sequence, oldest first: what a `MessagesMirror` shows. A value type, so
/// both mirrors (the `@Observable` one and the `ObservableObject` one) keep their list by the same rule.
struct RecentElements<Element> {
    /// The elements kept, oldest first; never more than ``limit``.
    private(set) var elements: [Element] = []
    /// How many elements are kept; at least 1.
    let limit: Int

    /// An empty list that keeps the newest `limit` elements (`limit` below 1 is taken as 1).
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Adds `element` as the newest, dropping the oldest beyond ``limit``.
    mutating func append(_ element: Element) {
        if elements.count == limit { elements.removeFirst() }
        elements.append(element)
    }

    /// Forgets every element.
    mutating func removeAll() {
        elements.removeAll()
    }
}

extension RecentElements: Sendable where Element: Sendable {}
extension RecentElements: Equatable where Element: Equatable {}
