/// The token of one observer: delivery lasts until it is cancelled or released.
///
/// Releasing the last reference cancels it, so store it for as long as you want values
/// (in a property, or in a `Set<SignalObservation>` with ``store(in:)``). Cancelling stops delivery and releases
/// the observer closure, which breaks any reference cycle through it. An event already being delivered
/// when `cancel()` is called on another thread still completes.
public final class SignalObservation: Sendable, Hashable {
    /// Closures, or an observer box itself, so that an observer of the library's own sources (a stream's or a
    /// state's storage) costs no lock and no closures beyond its box.
    private enum Target: Sendable {
        /// `cancel` runs once, taken out under the lock.
        case closures(cancel: Locked<(@Sendable () -> Void)?>, droppedCount: @Sendable () -> Int)
        case box(any ObservationTarget)
    }

    private let target: Target

    /// Creates a token that runs `cancel` once, on the first ``cancel()`` or on release.
    ///
    /// - Parameters:
    ///   - cancel: stops the observation; called at most once.
    ///   - droppedCount: reads how many elements this observer's buffer has dropped.
    public init(cancel: @escaping @Sendable () -> Void, droppedCount: @escaping @Sendable () -> Int = { 0 }) {
        target = .closures(cancel: Locked(cancel), droppedCount: droppedCount)
    }

    /// The token of `box`, which unregisters itself from its source when cancelled (see
    /// `ObserverBox.register(with:id:)`).
    init<Element>(box: ObserverBox<Element>) {
        target = .box(box)
    }

    deinit { cancel() }

    /// Stops delivery. Safe to call more than once and from any thread, including from the observer itself.
    public func cancel() {
        switch target {
        case .closures(let cancel, _):
            let action = cancel.withLock { action -> (@Sendable () -> Void)? in
                defer { action = nil }
                return action
            }
            action?()
        case .box(let box):
            box.cancel()
        }
    }

    /// Whether ``cancel()`` has run.
    public var isCancelled: Bool {
        switch target {
        case .closures(let cancel, _): cancel.withLock { $0 == nil }
        case .box(let box): box.isCancelled
        }
    }

    /// How many elements this observer's buffer has dropped under its ``BufferingPolicy``.
    public var droppedCount: Int {
        switch target {
        case .closures(_, let droppedCount): droppedCount()
        case .box(let box): box.droppedCount
        }
    }

    /// Keeps this token in `set`, the usual way to tie observations to an owner's lifetime.
    public func store(in set: inout Set<SignalObservation>) {
        set.insert(self)
    }

    /// Observations are equal when they are the same token.
    public static func == (lhs: SignalObservation, rhs: SignalObservation) -> Bool { lhs === rhs }
    /// Hashes the token's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// What a source of observations (a stream's or a state's storage) unregisters an observer through.
@usableFromInline
protocol ObserverSource: AnyObject, Sendable {
    /// Forgets the observer registered under `id`; nothing if it is already gone.
    func removeObserver(id: UInt64)
}

/// An observer box, as its ``SignalObservation`` sees it: cancelling is idempotent (the box unregisters once and ends
/// once), so the token needs no lock of its own.
protocol ObservationTarget: AnyObject, Sendable {
    func cancel()
    var isCancelled: Bool { get }
    var droppedCount: Int { get }
}

extension SignalObservation {
    /// This observation, keeping `owner` alive until it is cancelled or released (how a view that keeps its
    /// owner hands the owner on to the observations made through it); itself when `owner` is nil.
    func keeping(_ owner: (any AnyObject & Sendable)?) -> SignalObservation {
        guard let owner else { return self }
        return SignalObservation(
            cancel: {
                self.cancel()
                _ = owner
            }, droppedCount: { self.droppedCount })
    }
}
