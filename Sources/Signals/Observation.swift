/// The token of one observer: delivery lasts until it is cancelled or released.
///
/// Releasing the last reference cancels it, so store it for as long as you want values
/// (in a property, or in a `Set<Observation>` with ``store(in:)``). Cancelling stops delivery and releases
/// the observer closure, which breaks any reference cycle through it. An event already being delivered
/// when `cancel()` is called on another thread still completes.
public final class Observation: Sendable, Hashable {
    private let onCancel: Locked<(@Sendable () -> Void)?>
    private let dropped: @Sendable () -> Int

    /// Creates a token that runs `cancel` once, on the first ``cancel()`` or on release.
    ///
    /// - Parameters:
    ///   - cancel: stops the observation; called at most once.
    ///   - droppedCount: reads how many elements this observer's buffer has dropped.
    public init(cancel: @escaping @Sendable () -> Void, droppedCount: @escaping @Sendable () -> Int = { 0 }) {
        onCancel = Locked(cancel)
        dropped = droppedCount
    }

    convenience init<Element>(box: ObserverBox<Element>, remove: @escaping @Sendable () -> Void) {
        self.init(
            cancel: {
                remove()
                box.cancel()
            },
            droppedCount: { box.droppedCount }
        )
    }

    deinit { cancel() }

    /// Stops delivery. Safe to call more than once and from any thread, including from the observer itself.
    public func cancel() {
        let action = onCancel.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }

    /// Whether ``cancel()`` has run.
    public var isCancelled: Bool { onCancel.withLock { $0 == nil } }

    /// How many elements this observer's buffer has dropped under its ``BufferingPolicy``.
    public var droppedCount: Int { dropped() }

    /// Keeps this token in `set`, the usual way to tie observations to an owner's lifetime.
    public func store(in set: inout Set<Observation>) {
        set.insert(self)
    }

    /// Observations are equal when they are the same token.
    public static func == (lhs: Observation, rhs: Observation) -> Bool { lhs === rhs }
    /// Hashes the token's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
