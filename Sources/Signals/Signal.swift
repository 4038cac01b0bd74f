import Dispatch

/// One event of a ``Signal``: a value, or the end of the signal.
public enum SignalEvent<Element: Sendable>: Sendable {
    /// The next value.
    case value(Element)
    /// The signal ended; no event follows.
    case finished
}

extension SignalEvent: Equatable where Element: Equatable {}

/// A source of values over time that any number of observers can watch: the abstraction behind
/// ``StateValue``, ``EventStream`` and every operator.
///
/// Delivery rules, the same for every signal:
/// - Each observer sees values in the order they were sent and is never called concurrently with itself.
/// - No lock is held while observer code runs, so an observer may send to this or any other signal.
/// - Without a `queue`, an observer runs on the thread that sent the value, before `send` returns, unless
///   another thread is delivering to that observer at that moment; that thread then delivers it too.
///   With a `queue`, the observer runs there, one event at a time; for the main queue, a value sent on the main
///   queue is delivered at once, before `send` returns (unless an earlier delivery to that observer is pending).
///   Any other queue is reached with `async`.
/// - Each observer has its own buffer, governed by a ``BufferingPolicy``; drops are counted.
///
/// Conform your own types by implementing ``observeEvents(on:buffering:_:)``; operators such as
/// ``map(_:)`` and ``combineLatest(_:_:)`` then come for free.
public protocol Signal<Element>: Sendable {
    /// The type of value the signal carries.
    associatedtype Element: Sendable

    /// Starts delivering events to `handler` until the returned ``SignalObservation`` is cancelled or released.
    ///
    /// - Parameters:
    ///   - queue: where `handler` runs; `nil` runs it on the sending thread (see the type's rules).
    ///   - buffering: the observer's buffer policy.
    ///   - handler: receives each value, then at most one `.finished`.
    /// - Returns: the token that keeps the observation alive. Releasing it stops delivery.
    func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) -> SignalObservation
}

extension Signal {
    /// Calls `onValue` for every value until the returned token is cancelled or released.
    ///
    /// A ``StateValue`` delivers its current value first. Keep the token as long as you want values:
    ///
    /// ```swift
    /// let count = MutableStateValue(0)
    /// let token = count.observe { print("count is", $0) }   // Prints: count is 0
    /// count.value = 1                                       // Prints: count is 1
    /// token.cancel()
    /// ```
    ///
    /// - Parameters:
    ///   - queue: where `onValue` runs; `nil` runs it on the sending thread.
    ///   - buffering: this observer's buffer policy; the default keeps everything.
    ///   - onValue: called with each value, serially and in order.
    ///
    /// `observe(on: .main) { ... }` is the main-actor form, ``observe(on:buffering:_:)-(MainActorDelivery,_,_)``,
    /// whose observer may set a `@MainActor` model's properties (this form is disfavoured so that `.main` names
    /// the main actor rather than `DispatchQueue.main`).
    @_disfavoredOverload
    @inlinable
    public func observe(
        on queue: DispatchQueue? = nil,
        buffering: BufferingPolicy = .unbounded,
        _ onValue: @escaping @Sendable (Element) -> Void
    ) -> SignalObservation {
        observeEvents(on: queue, buffering: buffering) { event in
            if case .value(let value) = event { onValue(value) }
        }
    }

    /// Calls `onValue` for every value and `onFinish` once when the signal ends.
    @_disfavoredOverload
    @inlinable
    public func observe(
        on queue: DispatchQueue? = nil,
        buffering: BufferingPolicy = .unbounded,
        onValue: @escaping @Sendable (Element) -> Void,
        onFinish: @escaping @Sendable () -> Void
    ) -> SignalObservation {
        observeEvents(on: queue, buffering: buffering) { event in
            switch event {
            case .value(let value): onValue(value)
            case .finished: onFinish()
            }
        }
    }

    /// Wraps this signal in an ``AnySignal``, hiding its concrete type.
    public func eraseToAnySignal() -> AnySignal<Element> {
        if let erased = self as? AnySignal<Element> { return erased }
        return AnySignal(self)
    }
}

/// A type-erased ``Signal``: what the operators return.
public struct AnySignal<Element: Sendable>: Signal {
    private let subscribe:
        @Sendable (DispatchQueue?, BufferingPolicy, @escaping @Sendable (SignalEvent<Element>) -> Void) ->
            SignalObservation

    /// Wraps `base`.
    public init<Base: Signal>(_ base: Base) where Base.Element == Element {
        subscribe = { queue, buffering, handler in base.observeEvents(on: queue, buffering: buffering, handler) }
    }

    /// Builds a signal from its subscribe function.
    public init(
        _ subscribe:
            @escaping @Sendable (DispatchQueue?, BufferingPolicy, @escaping @Sendable (SignalEvent<Element>) -> Void) ->
            SignalObservation
    ) {
        self.subscribe = subscribe
    }

    /// Observes the wrapped signal; see ``Signal/observeEvents(on:buffering:_:)``.
    public func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) -> SignalObservation {
        subscribe(queue, buffering, handler)
    }
}

extension AnySignal {
    /// A signal that delivers `value` to each observer, then finishes.
    public static func just(_ value: Element) -> AnySignal<Element> {
        AnySignal { queue, buffering, handler in
            let box = ObserverBox(queue: queue, buffering: buffering, handler: handler)
            box.enqueue(value).run()
            box.enqueueFinish().run()
            return SignalObservation(box: box)
        }
    }

    /// A signal that finishes at once for each observer, without values.
    public static var empty: AnySignal<Element> {
        AnySignal { queue, buffering, handler in
            let box = ObserverBox(queue: queue, buffering: buffering, handler: handler)
            box.enqueueFinish().run()
            return SignalObservation(box: box)
        }
    }
}
