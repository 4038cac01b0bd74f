/// A FIFO ring buffer that grows by doubling; the storage behind every observer's buffer.
package struct RingBuffer<Element> {
    private var storage: ContiguousArray<Element?>
    private var head = 0
    package private(set) var count = 0

    package init(capacity: Int = 0) {
        storage = ContiguousArray(repeating: nil, count: max(capacity, 0))
    }

    /// Test hook: a buffer whose live elements start at physical slot `head`, so wrap-around layouts
    /// can be built on purpose.
    package init(capacity: Int, head: Int, contents: [Element]) {
        precondition(capacity >= contents.count && (capacity == 0 || (0..<capacity).contains(head)))
        storage = ContiguousArray(repeating: nil, count: capacity)
        self.head = head
        for element in contents { append(element) }
    }

    package var isEmpty: Bool { count == 0 }
    package var capacity: Int { storage.count }

    package mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        var slot = head + count
        if slot >= storage.count { slot -= storage.count }
        storage[slot] = element
        count += 1
    }

    package mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head += 1
        if head == storage.count { head = 0 }
        count -= 1
        return element
    }

    package mutating func removeAll() {
        while popFirst() != nil {}
        head = 0
    }

    package var elements: [Element] {
        (0..<count).compactMap { offset in
            var slot = head + offset
            if slot >= storage.count { slot -= storage.count }
            return storage[slot]
        }
    }

    private mutating func grow() {
        let newCapacity = Swift.max(4, storage.count * 2)
        var grown = ContiguousArray<Element?>(repeating: nil, count: newCapacity)
        for offset in 0..<count {
            var slot = head + offset
            if slot >= storage.count { slot -= storage.count }
            grown[offset] = storage[slot]
        }
        storage = grown
        head = 0
    }
}

/// A ``RingBuffer`` that applies a ``BufferingPolicy`` and counts what it drops.
package struct PolicyBuffer<Element> {
    package let policy: BufferingPolicy
    package private(set) var buffer: RingBuffer<Element>
    package private(set) var droppedCount = 0

    package init(policy: BufferingPolicy) {
        self.policy = policy
        buffer = RingBuffer(capacity: policy.limit.map { Swift.min($0, 16) } ?? 0)
    }

    package var isEmpty: Bool { buffer.isEmpty }
    package var count: Int { buffer.count }

    /// Adds `element`, dropping one element if the policy says so. Returns true if something was dropped.
    @discardableResult
    package mutating func push(_ element: Element) -> Bool {
        switch policy.kind {
        case .unbounded:
            buffer.append(element)
            return false
        case .newest(let limit):
            var dropped = false
            if buffer.count >= limit {
                _ = buffer.popFirst()
                droppedCount += 1
                dropped = true
            }
            buffer.append(element)
            return dropped
        case .oldest(let limit):
            guard buffer.count < limit else {
                droppedCount += 1
                return true
            }
            buffer.append(element)
            return false
        }
    }

    package mutating func popFirst() -> Element? { buffer.popFirst() }
    package mutating func removeAll() { buffer.removeAll() }
}
