#if canImport(Combine)
    import Combine

    extension Signal {
        /// The signal as a Combine publisher that never fails.
        ///
        /// Each subscriber gets its own observation, started on subscription. Values wait in an unbounded
        /// buffer until the subscriber demands them; cancelling the subscription stops the observation.
        ///
        /// ```swift
        /// client.state.publisher
        ///     .receive(on: DispatchQueue.main)
        ///     .sink { state in label.text = "\(state)" }
        ///     .store(in: &cancellables)
        /// ```
        @available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
        public var publisher: SignalPublisher<Self> { SignalPublisher(signal: self) }
    }

    /// A Combine `Publisher` over a ``Signal``; see ``Signal/publisher``.
    @available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
    public struct SignalPublisher<Base: Signal>: Publisher {
        public typealias Output = Base.Element
        public typealias Failure = Never

        let signal: Base

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Never {
            let subscription = SignalSubscription<Output>(subscriber: AnySubscriber(subscriber))
            subscriber.receive(subscription: subscription)
            subscription.start(signal)
        }
    }

    /// One Combine subscription: buffers values until demanded.
    ///
    /// Generic over the value type, not the subscriber's type: the observer closure captures `self`, and a
    /// subscriber's metatype is not Sendable (SE-0470, Swift 6.2), while a Sendable `Input`'s is. The subscriber
    /// is held type-erased.
    @available(iOS 13, macOS 10.15, tvOS 13, watchOS 6, *)
    private final class SignalSubscription<Input: Sendable>: Subscription, @unchecked Sendable {
        // Guarded by `state`'s lock: the subscriber, demand and buffer are only touched inside `withLock`,
        // and the subscriber is called outside it, one call at a time (`delivering`).
        private struct State {
            var subscriber: AnySubscriber<Input, Never>?
            var demand = Subscribers.Demand.none
            var buffer: [Input] = []
            var finished = false
            var delivering = false
            var observation: SignalObservation?
        }

        private let state: Locked<State>

        init(subscriber: AnySubscriber<Input, Never>) {
            state = Locked(State(subscriber: subscriber))
        }

        func start<Base: Signal>(_ signal: Base) where Base.Element == Input {
            let token = signal.observeEvents(on: nil, buffering: .unbounded) { [weak self] event in
                self?.receive(event)
            }
            let keep = state.withLock { state -> Bool in
                guard state.subscriber != nil else { return false }
                state.observation = token
                return true
            }
            if !keep { token.cancel() }
        }

        private func receive(_ event: SignalEvent<Input>) {
            state.withLock { state in
                switch event {
                case .value(let value): state.buffer.append(value)
                case .finished: state.finished = true
                }
            }
            deliver()
        }

        func request(_ demand: Subscribers.Demand) {
            state.withLock { $0.demand += demand }
            deliver()
        }

        func cancel() {
            let token = state.withLock { state -> SignalObservation? in
                state.subscriber = nil
                state.buffer.removeAll()
                defer { state.observation = nil }
                return state.observation
            }
            token?.cancel()
        }

        private enum Step {
            case value(AnySubscriber<Input, Never>, Input)
            case finish(AnySubscriber<Input, Never>)
            case idle
        }

        private func deliver() {
            while true {
                let step = state.withLock { state -> Step in
                    guard !state.delivering, let subscriber = state.subscriber else { return .idle }
                    if state.demand > 0, !state.buffer.isEmpty {
                        state.demand -= 1
                        state.delivering = true
                        return .value(subscriber, state.buffer.removeFirst())
                    }
                    if state.buffer.isEmpty, state.finished {
                        state.subscriber = nil
                        return .finish(subscriber)
                    }
                    return .idle
                }
                switch step {
                case .value(let subscriber, let value):
                    let more = subscriber.receive(value)
                    state.withLock { state in
                        state.delivering = false
                        state.demand += more
                    }
                case .finish(let subscriber):
                    subscriber.receive(completion: .finished)
                    return
                case .idle:
                    return
                }
            }
        }
    }
#endif
