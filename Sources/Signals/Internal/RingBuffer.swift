/// A FIFO ring buffer that grows by doubling; the storage behind every observer's buffer, and the only ring
/// buffer in the package.
///
/// Inlinable, so that a module that buffers its own element type (CableReactive's messages) gets it
/// specialized: unspecialized, every push and pop looks up generic metadata at run time, which costs more
/// than the buffer's own work.
@usableFromInline
package struct RingBuffer<Element> {
    @usableFromInline var storage: ContiguousArray<Element?>
    @usableFromInline var head = 0
    @usableFromInline package private(set) var count = 0

    @inlinable
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

    @inlinable package var isEmpty: Bool { count == 0 }
    @inlinable package var capacity: Int { storage.count }

    @inlinable
    package mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        var slot = head + count
        if slot >= storage.count { slot -= storage.count }
        storage[slot] = element
        count += 1
    }

    @inlinable
    package mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        var element: Element?
        swap(&element, &storage[head])  // moves it out: no retain of the copy, no release of the slot
        head += 1
        if head == storage.count { head = 0 }
        count -= 1
        return element
    }

    @inlinable
    package mutating func removeAll() {
        while popFirst() != nil {}
        head = 0
    }

    /// The oldest element, left in place.
    @inlinable package var first: Element? { count > 0 ? storage[head] : nil }

    /// Changes the oldest element in place and returns what `body` returns; nil (and `body` not called) when empty.
    @inlinable
    @discardableResult
    package mutating func updateFirst<R>(_ body: (inout Element) -> R) -> R? {
        guard count > 0, var element = storage[head] else { return nil }
        storage[head] = nil  // unique while `body` runs: no copy-on-write of the element's storage
        defer { storage[head] = element }
        return body(&element)
    }

    /// Changes the newest element in place and returns what `body` returns; false (and `body` not called) when
    /// empty.
    @inlinable
    package mutating func updateLast(_ body: (inout Element) -> Bool) -> Bool {
        guard count > 0 else { return false }
        var slot = head + count - 1
        if slot >= storage.count { slot -= storage.count }
        guard var element = storage[slot] else { return false }
        storage[slot] = nil
        defer { storage[slot] = element }
        return body(&element)
    }

    /// Removes the elements for which `shouldRemove` is true, keeping the order of the rest.
    package mutating func removeAll(where shouldRemove: (Element) -> Bool) {
        var kept = RingBuffer(capacity: 0)
        while let element = popFirst() {
            if !shouldRemove(element) { kept.append(element) }
        }
        self = kept
    }

    package var elements: [Element] {
        (0..<count).compactMap { offset in
            var slot = head + offset
            if slot >= storage.count { slot -= storage.count }
            return storage[slot]
        }
    }

    @inlinable
    mutating func grow() {
        let newCapacity = Swift.max(8, storage.count * 2)
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
@usableFromInline
package struct PolicyBuffer<Element> {
    @usableFromInline package let policy: BufferingPolicy
    @usableFromInline package private(set) var buffer: RingBuffer<Element>
    @usableFromInline package private(set) var droppedCount = 0

    /// An empty buffer that allocates nothing until the first push: most buffers (an idle subscription's,
    /// a stream's hold once its first observer took the held values) stay empty.
    @inlinable
    package init(policy: BufferingPolicy) {
        self.policy = policy
        buffer = RingBuffer()
    }

    @inlinable package var isEmpty: Bool { buffer.isEmpty }
    @inlinable package var count: Int { buffer.count }

    /// Adds `element`, dropping one element if the policy says so. Returns true if something was dropped.
    @inlinable
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

    @inlinable package mutating func popFirst() -> Element? { buffer.popFirst() }
    /// The oldest element, left in place.
    @inlinable package var first: Element? { buffer.first }
    @inlinable package mutating func removeAll() { buffer.removeAll() }

    /// Takes every buffered element, oldest first, and lets go of the storage; the drop count stays.
    @inlinable
    package mutating func takeAll() -> [Element] {
        var elements: [Element] = []
        elements.reserveCapacity(buffer.count)
        while let element = buffer.popFirst() { elements.append(element) }
        buffer = RingBuffer()
        return elements
    }
}

// Checked: a ring of Sendable elements may move between threads (the buffers `zip` and `delay` keep in state).
extension RingBuffer: Sendable where Element: Sendable {}
extension PolicyBuffer: Sendable where Element: Sendable {}
