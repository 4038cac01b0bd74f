/// The token of one observer: delivery lasts until it is cancelled or released.
///
/// Releasing the last reference cancels it, so store it for as long as you want values
/// (in a property, or in a `Set<Observation>` with ``store(in:)``). Cancelling stops delivery and releases
/// the observer closure, which breaks any reference cycle through it. An event already being delivered
/// when `cancel()` is called on another thread still completes.
public final class Observation: Sendable, Hashable {
    private let target: any ObservationTarget

    /// Creates a token that runs `cancel` once, on the first ``cancel()`` or on release.
    ///
    /// - Parameters:
    ///   - cancel: stops the observation; called at most once.
    ///   - droppedCount: reads how many elements this observer's buffer has dropped.
    public init(cancel: @escaping @Sendable () -> Void, droppedCount: @escaping @Sendable () -> Int = { 0 }) {
        target = ClosureTarget(cancel: cancel, droppedCount: droppedCount)
    }

    /// The token of `box`, which unregisters itself from its source when cancelled (see
    /// `ObserverBox.register(with:id:)`).
    init<Element>(box: ObserverBox<Element>) {
        target = box
    }

    deinit { cancel() }

    /// Stops delivery. Safe to call more than once and from any thread, including from the observer itself.
    public func cancel() {
        target.cancel()
    }

    /// Whether ``cancel()`` has run.
    public var isCancelled: Bool { target.isCancelled }

    /// How many elements this observer's buffer has dropped under its ``BufferingPolicy``.
    public var droppedCount: Int { target.droppedCount }

    /// Keeps this token in `set`, the usual way to tie observations to an owner's lifetime.
    public func store(in set: inout Set<Observation>) {
        set.insert(self)
    }

    /// Observations are equal when they are the same token.
    public static func == (lhs: Observation, rhs: Observation) -> Bool { lhs === rhs }
    /// Hashes the token's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// What a source of observations (a stream's or a state's storage) unregisters an observer through.
@usableFromInline
protocol ObserverSource: AnyObject, Sendable {
    /// Forgets the observer registered under `id`; nothing if it is already gone.
    func removeObserver(id: UInt64)
}

/// What an ``Observation`` cancels and reads: closures, or an observer box itself, so that an observer of the
/// library's own sources costs no lock and no closures beyond its box.
protocol ObservationTarget: AnyObject, Sendable {
    /// Stops the observation; idempotent.
    func cancel()
    var isCancelled: Bool { get }
    var droppedCount: Int { get }
}

/// An observation made of closures: `cancel` runs once, under a lock.
private final class ClosureTarget: ObservationTarget {
    private let onCancel: Locked<(@Sendable () -> Void)?>
    private let dropped: @Sendable () -> Int

    init(cancel: @escaping @Sendable () -> Void, droppedCount: @escaping @Sendable () -> Int) {
        onCancel = Locked(cancel)
        dropped = droppedCount
    }

    func cancel() {
        let action = onCancel.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }

    var isCancelled: Bool { onCancel.withLock { $0 == nil } }
    var droppedCount: Int { dropped() }
}
