#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// Many deadlines behind one scheduler timer: a client's pending subscribe re-sends, by identifier.
///
/// One Dispatch timer per subscription would hold a timer's memory for every subscription that waits (two
/// timers, with `DispatchScheduler`'s two deadlines), and a cancelled one lingers until its deadline, so
/// subscriptions made at once would pay for their timers all together. The queue keeps one entry per key and
/// says when its one timer must be armed.
///
/// The deadlines are a binary min-heap, so setting and firing cost O(log n) however many subscriptions wait.
/// Removing a key forgets its entry only; its heap slot goes stale and is skipped when it comes up.
struct DeadlineQueue<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entry: Sendable {
        let deadline: TimeInterval
        /// Set order: breaks ties between equal deadlines, and tells a heap slot from a stale one.
        let order: UInt64
        let value: Value
    }

    private struct Slot: Sendable {
        let deadline: TimeInterval
        let order: UInt64
        let key: Key

        func precedes(_ other: Slot) -> Bool { (deadline, order) < (other.deadline, other.order) }
    }

    /// The live entries; a heap slot whose order differs from its key's entry is stale.
    private var pending: [Key: Entry] = [:]
    private var heap: [Slot] = []
    private var nextOrder: UInt64 = 0
    /// The deadline the timer is armed for, if it is armed.
    private(set) var armedFor: TimeInterval?

    /// How many deadlines are pending.
    var count: Int { pending.count }
    /// How many heap slots there are, stale ones included (for tests): at most twice the pending count, plus 64.
    var slotCount: Int { heap.count }
    /// Whether the queue holds storage (for tests): none once it is empty.
    var holdsStorage: Bool { pending.capacity > 0 || heap.capacity > 0 }

    /// Sets `key`'s deadline and value, replacing any earlier ones.
    ///
    /// - Returns: the deadline to arm the timer for, when it must be armed (again): nil when the armed timer
    ///   already fires at or before `deadline`.
    mutating func set(_ key: Key, _ value: Value, at deadline: TimeInterval) -> TimeInterval? {
        nextOrder += 1
        pending[key] = Entry(deadline: deadline, order: nextOrder, value: value)
        push(Slot(deadline: deadline, order: nextOrder, key: key))
        if heap.count > 2 * pending.count + 64 { rebuild() }  // stale slots stay bounded
        if let armedFor, armedFor <= deadline { return nil }
        armedFor = deadline
        return deadline
    }

    /// Forgets `key`'s deadline.
    ///
    /// - Returns: whether nothing is pending any more, so the timer must be cancelled (the queue counts it as
    ///   not armed from now on). Otherwise the timer stays armed; when it fires with nothing due it is armed
    ///   for what is left.
    mutating func remove(_ key: Key) -> Bool {
        pending[key] = nil
        guard pending.isEmpty else { return false }
        // Empty between reconnects once every subscription answered: the storage goes, since its capacity,
        // sized for every subscription, would otherwise stay for the whole session to save two allocations on
        // the next reconnect.
        pending = [:]
        heap = []
        armedFor = nil
        return true
    }

    /// The timer fired at `now`: removes the entries that are due and returns them, earliest first, with the
    /// deadline to arm the timer for next (nil: nothing is pending). A timer that fires early finds nothing
    /// due and is armed again.
    mutating func fire(now: TimeInterval) -> (due: [(key: Key, value: Value)], next: TimeInterval?) {
        var due: [(key: Key, value: Value)] = []
        // A millisecond of slack, as the connection watchdog has: a remainder below the clock's resolution
        // would re-arm the timer for the same instant.
        while let top = liveTop(), top.deadline <= now + 0.001 {
            popTop()
            if let entry = pending.removeValue(forKey: top.key) { due.append((top.key, entry.value)) }
        }
        armedFor = liveTop()?.deadline
        if pending.isEmpty {
            pending = [:]
            heap = []
        }
        return (due, armedFor)
    }

    // MARK: heap

    /// The earliest slot that is still live, after dropping the stale ones above it.
    private mutating func liveTop() -> Slot? {
        while let top = heap.first {
            if pending[top.key]?.order == top.order { return top }
            popTop()
        }
        return nil
    }

    /// A heap of the live entries only.
    private mutating func rebuild() {
        let live = pending.map { Slot(deadline: $0.value.deadline, order: $0.value.order, key: $0.key) }
        heap.removeAll(keepingCapacity: true)
        for slot in live { push(slot) }
    }

    private mutating func push(_ slot: Slot) {
        heap.append(slot)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func popTop() {
        guard !heap.isEmpty else { return }
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            let right = left + 1
            let first = right < heap.count && heap[right].precedes(heap[left]) ? right : left
            guard heap[first].precedes(heap[parent]) else { return }
            heap.swapAt(first, parent)
            parent = first
        }
    }
}
