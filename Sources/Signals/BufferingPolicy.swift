/// How many undelivered elements one observer may hold, and which ones it drops when full.
///
/// Every observer (a ``SignalObservation`` or an async iterator) has its own buffer. Elements wait there while
/// the observer is busy, for example when it runs on a slow `DispatchQueue` or when an async loop has not
/// asked for the next element yet. Dropped elements are counted (``SignalObservation/droppedCount``).
///
/// ```swift
/// let ticks = MutableEventStream<Int>()
/// let newest = ticks.values(buffering: .bufferingNewest(1))   // a slow reader sees the latest tick
/// ```
public struct BufferingPolicy: Sendable, Hashable, CustomStringConvertible {
    @usableFromInline
    enum Kind: Hashable, Sendable {
        case unbounded
        case newest(Int)
        case oldest(Int)
    }

    @usableFromInline let kind: Kind

    /// Keeps every element. Memory grows with a slow observer; use it only where the producer is bounded.
    public static let unbounded = BufferingPolicy(kind: .unbounded)

    /// Keeps the newest `limit` elements: when full, the oldest buffered element is dropped.
    ///
    /// - Precondition: `limit >= 1`.
    public static func bufferingNewest(_ limit: Int) -> BufferingPolicy {
        precondition(limit >= 1, "API misuse: bufferingNewest needs a limit of at least 1")
        return BufferingPolicy(kind: .newest(limit))
    }

    /// Keeps the oldest `limit` elements: when full, the new element is dropped.
    ///
    /// - Precondition: `limit >= 1`.
    public static func bufferingOldest(_ limit: Int) -> BufferingPolicy {
        precondition(limit >= 1, "API misuse: bufferingOldest needs a limit of at least 1")
        return BufferingPolicy(kind: .oldest(limit))
    }

    /// The largest number of elements the buffer holds, or `nil` when unbounded.
    @inlinable
    public var limit: Int? {
        switch kind {
        case .unbounded: nil
        case .newest(let limit), .oldest(let limit): limit
        }
    }

    /// This policy with room for at most `limit` elements: a larger limit is lowered to `limit`, and
    /// ``unbounded`` becomes ``bufferingNewest(_:)``.
    ///
    /// ```swift
    /// BufferingPolicy.unbounded.capped(at: 128)               // bufferingNewest(128)
    /// BufferingPolicy.bufferingOldest(500).capped(at: 128)    // bufferingOldest(128)
    /// ```
    ///
    /// - Precondition: `limit >= 1`.
    public func capped(at limit: Int) -> BufferingPolicy {
        switch kind {
        case .unbounded: .bufferingNewest(limit)
        case .newest(let own): .bufferingNewest(min(own, limit))
        case .oldest(let own): .bufferingOldest(min(own, limit))
        }
    }

    /// A short description, such as `bufferingNewest(128)`.
    public var description: String {
        switch kind {
        case .unbounded: "unbounded"
        case .newest(let limit): "bufferingNewest(\(limit))"
        case .oldest(let limit): "bufferingOldest(\(limit))"
        }
    }
}
