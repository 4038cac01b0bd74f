#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// Many deadlines behind one scheduler timer: a client's pending subscribe re-sends, by identifier.
///
/// A Dispatch timer per subscription cost about 800 bytes while it waited (two, with `DispatchScheduler`'s
/// two deadlines), and a cancelled one lingered until its deadline: 1,000 subscriptions made at once held
/// 0.8 MiB of timers. The queue keeps one entry per key and says when its one timer must be armed.
struct DeadlineQueue<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Entry: Sendable {
        let deadline: TimeInterval
        /// Set order, which breaks ties between equal deadlines.
        let order: UInt64
        let value: Value
    }

    private var pending: [Key: Entry] = [:]
    private var nextOrder: UInt64 = 0
    /// The deadline the timer is armed for, if it is armed.
    private(set) var armedFor: TimeInterval?

    /// How many deadlines are pending.
    var count: Int { pending.count }

    /// Sets `key`'s deadline and value, replacing any earlier ones.
    ///
    /// - Returns: the deadline to arm the timer for, when it must be armed (again): nil when the armed timer
    ///   already fires at or before `deadline`.
    mutating func set(_ key: Key, _ value: Value, at deadline: TimeInterval) -> TimeInterval? {
        nextOrder += 1
        pending[key] = Entry(deadline: deadline, order: nextOrder, value: value)
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
        armedFor = nil
        return true
    }

    /// The timer fired at `now`: removes the entries that are due and returns them, earliest first, with the
    /// deadline to arm the timer for next (nil: nothing is pending). A timer that fires early finds nothing
    /// due and is armed again.
    mutating func fire(now: TimeInterval) -> (due: [(key: Key, value: Value)], next: TimeInterval?) {
        // A millisecond of slack, as the connection watchdog has: a remainder below the clock's resolution
        // would re-arm the timer for the same instant.
        let due = pending.filter { $0.value.deadline <= now + 0.001 }
            .sorted { ($0.value.deadline, $0.value.order) < ($1.value.deadline, $1.value.order) }
        for entry in due { pending[entry.key] = nil }
        armedFor = pending.values.map(\.deadline).min()
        return (due.map { (key: $0.key, value: $0.value.value) }, armedFor)
    }
}
