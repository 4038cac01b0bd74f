import Dispatch

/// Where a main-actor observer runs: ``main``, the main actor (the main queue). What
/// `observe(on: .main) { ... }` names, so that the observer is `@MainActor` and may touch a view model's state.
///
/// A value of its own, rather than `DispatchQueue.main`, so that the compiler knows the observer's isolation:
/// an observer passed with `on: DispatchQueue.main` is still a plain `@Sendable` closure.
public struct MainActorDelivery: Sendable {
    private init() {}

    /// The main actor.
    public static var main: MainActorDelivery { MainActorDelivery() }
}

extension Signal {
    /// Calls `onValue` on the main actor for every value until the returned token is cancelled or released: the
    /// form for a `@MainActor` view model, whose observer may set its properties.
    ///
    /// ```swift
    /// @MainActor final class RoomModel {
    ///     private(set) var status = "offline"
    ///     private var token: SignalObservation?
    ///
    ///     init(client: ActionCableClient) {
    ///         token = client.state.observe(on: .main) { [weak self] state in self?.status = "\(state)" }
    ///     }
    /// }
    /// ```
    ///
    /// Values are delivered on the main queue, one at a time and in order, as `observe(on: DispatchQueue.main)`
    /// delivers them: a value sent from another thread at the main queue's next turn, and one sent on the main
    /// actor at once, before the send returns (so a view, a preview or a test driving the source sees it in the same
    /// turn). Likewise a ``StateValue`` delivers its current value first: before this call returns when it is made on
    /// the main actor.
    ///
    /// - Parameters:
    ///   - delivery: ``MainActorDelivery/main``.
    ///   - buffering: this observer's buffer policy; the default keeps everything.
    ///   - onValue: called on the main actor with each value, serially and in order.
    /// - Returns: the token that keeps the observation alive. It does not keep the observer's owner alive:
    ///   capture `self` weakly, and keep the token in the owner, so that releasing the owner ends the observation.
    public func observe(
        on delivery: MainActorDelivery,
        buffering: BufferingPolicy = .unbounded,
        _ onValue: @escaping @MainActor @Sendable (Element) -> Void
    ) -> SignalObservation {
        observeEvents(on: .main, buffering: buffering) { event in
            guard case .value(let value) = event else { return }
            MainActor.assumeIsolated { onValue(value) }  // the main queue is the main actor's executor
        }
    }

    /// Calls `onValue` on the main actor for every value and `onFinish` once when the signal ends; see
    /// ``observe(on:buffering:_:)-(MainActorDelivery,_,_)``.
    public func observe(
        on delivery: MainActorDelivery,
        buffering: BufferingPolicy = .unbounded,
        onValue: @escaping @MainActor @Sendable (Element) -> Void,
        onFinish: @escaping @MainActor @Sendable () -> Void
    ) -> SignalObservation {
        observeEvents(on: .main, buffering: buffering) { event in
            MainActor.assumeIsolated {
                switch event {
                case .value(let value): onValue(value)
                case .finished: onFinish()
                }
            }
        }
    }
}
