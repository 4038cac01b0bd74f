import Dispatch

/// The engine of `combineLatest` and `merge`: observes several inputs and feeds one downstream observer.
///
/// Input events are folded into `State` under one lock, and the resulting downstream events are queued in
/// the downstream observer's buffer under that same lock, so every downstream observer sees one
/// consistent order even when the inputs send from different threads.
final class Combiner<Input: Sendable, State: Sendable, Output: Sendable>: Sendable {
    typealias Step = @Sendable (inout State, Int, SignalEvent<Input>, (SignalEvent<Output>) -> Void) -> Void

    private let state: Locked<State>
    private let box: ObserverBox<Output>
    private let step: Step

    private init(_ initial: State, box: ObserverBox<Output>, step: @escaping Step) {
        state = Locked(initial)
        self.box = box
        self.step = step
    }

    private func receive(_ event: SignalEvent<Input>, from index: Int) {
        let wake = state.withLock { state in
            var wakes = WakeList()  // one box: at most one wake is ever claimed
            step(&state, index, event) { output in
                switch output {
                case .value(let value): wakes.append(box.enqueue(value))
                case .finished: wakes.append(box.enqueueFinish())
                }
            }
            return wakes
        }
        wake.run()
    }

    /// A signal that, for each observer, observes every input and combines them with `step`.
    static func signal(
        inputs: [AnySignal<Input>],
        initial: State,
        step: @escaping Step
    ) -> AnySignal<Output> {
        AnySignal { queue, buffering, handler in
            let box = ObserverBox(queue: queue, buffering: buffering, handler: handler)
            let combiner = Combiner(initial, box: box, step: step)
            let upstreams = inputs.enumerated().map { index, input in
                input.observeEvents(on: nil, buffering: .unbounded) { [weak combiner] event in
                    combiner?.receive(event, from: index)
                }
            }
            return SignalObservation(
                cancel: {
                    for upstream in upstreams { upstream.cancel() }
                    combiner.box.cancel()
                },
                droppedCount: { box.droppedCount }
            )
        }
    }
}
