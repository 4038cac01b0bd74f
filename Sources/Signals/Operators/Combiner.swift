import Dispatch

/// The engine of the operators that feed one downstream observer from several inputs (`combineLatest`, `merge`,
/// `zip`, `withLatestFrom`, `switchToLatest`).
///
/// Input events are folded into `State` under one lock, and the resulting downstream events are queued in
/// the downstream observer's buffer under that same lock, so every downstream observer sees one
/// consistent order even when the inputs send from different threads. ``signal(inputs:initial:step:)``
/// observes a fixed list of inputs; an operator whose inputs come and go (`switchToLatest`) builds a combiner
/// itself, feeds it with ``receive(_:from:)`` and changes its state with ``update(_:)``.
final class Combiner<Input: Sendable, State: Sendable, Output: Sendable>: Sendable {
    typealias Step = @Sendable (inout State, Int, SignalEvent<Input>, (SignalEvent<Output>) -> Void) -> Void

    private let state: Locked<State>
    /// The downstream observer.
    let box: ObserverBox<Output>
    private let step: Step

    init(_ initial: State, box: ObserverBox<Output>, step: @escaping Step) {
        state = Locked(initial)
        self.box = box
        self.step = step
    }

    /// Folds `event` of input `index` into the state with `step`.
    func receive(_ event: SignalEvent<Input>, from index: Int) {
        update { state, send in step(&state, index, event, send) }
    }

    /// Runs `body` under the lock with the state and a `send` that queues downstream events in order; starts
    /// the delivery after releasing the lock. `body` must not call code the combiner does not own, nor release
    /// an observation (its cancel runs another source's code): return it, and cancel it after.
    @discardableResult
    func update<R>(_ body: (inout State, (SignalEvent<Output>) -> Void) -> R) -> R {
        let (result, wake) = state.withLock { state in
            var wakes = WakeList()  // one box: at most one wake is ever claimed
            let result = body(&state) { output in
                switch output {
                case .value(let value): wakes.append(box.enqueue(value))
                case .finished: wakes.append(box.enqueueFinish())
                }
            }
            return (result, wakes)
        }
        wake.run()
        return result
    }

    /// A signal that, for each observer, observes every input and combines them with `step`.
    static func signal(
        inputs: [AnySignal<Input>],
        initial: State,
        step: @escaping Step
    ) -> AnySignal<Output> {
        signal(inputs: inputs, initial: { _ in initial }, droppedCount: { _ in 0 }, step: step)
    }

    /// ``signal(inputs:initial:step:)`` whose state depends on the observer's policy (an operator that buffers
    /// per input bounds its buffers by it), and whose own drops, read from the state, count in the
    /// observation's ``SignalObservation/droppedCount``.
    static func signal(
        inputs: [AnySignal<Input>],
        initial: @escaping @Sendable (BufferingPolicy) -> State,
        droppedCount: @escaping @Sendable (State) -> Int,
        step: @escaping Step
    ) -> AnySignal<Output> {
        AnySignal { queue, buffering, handler in
            let box = ObserverBox(queue: queue, buffering: buffering, handler: handler)
            let combiner = Combiner(initial(buffering), box: box, step: step)
            let upstreams = inputs.enumerated().map { index, input in
                input.observeEvents(on: nil, buffering: .unbounded) { [weak combiner] event in
                    combiner?.receive(event, from: index)
                }
            }
            // The state's drops, kept when cancelling releases the combiner (and what its state buffers).
            let keptDrops = Locked(0)
            return SignalObservation(
                cancel: {
                    for upstream in upstreams { upstream.cancel() }
                    combiner.box.cancel()
                    let drops = combiner.state.withLock { droppedCount($0) }
                    keptDrops.withLock { $0 = drops }
                },
                droppedCount: { [weak combiner] in
                    box.droppedCount + (combiner?.state.withLock { droppedCount($0) } ?? keptDrops.withLock { $0 })
                }
            )
        }
    }
}
