import CableReactive
import Signals

/// A path source a test drives by hand: it counts starts and reports what the test says.
final class FakePathSource: NetworkPathSource {
    private let state = Locked<(starts: Int, report: (@Sendable (NetworkPath) -> Void)?)>((0, nil))

    var starts: Int { state.withLock { $0.starts } }

    func start(reporting report: @escaping @Sendable (NetworkPath) -> Void) {
        state.withLock { $0 = ($0.starts + 1, report) }
    }

    /// Delivers `path` as the monitor would, outside the lock.
    func report(_ path: NetworkPath) {
        state.withLock { $0.report }?(path)
    }
}

/// A lifecycle source a test drives by hand.
final class FakeLifecycleSource: LifecycleSource {
    private let state = Locked<(starts: Int, report: (@Sendable (LifecycleEvent) -> Void)?)>((0, nil))

    var starts: Int { state.withLock { $0.starts } }

    func start(reporting report: @escaping @Sendable (LifecycleEvent) -> Void) {
        state.withLock { $0 = ($0.starts + 1, report) }
    }

    func report(_ event: LifecycleEvent) {
        state.withLock { $0.report }?(event)
    }
}

/// Every value a state delivers to one observer, its current value first.
final class ValueRecorder<Value: Sendable>: Sendable {
    private let values = Locked<[Value]>([])
    private let observation: SignalObservation

    init<S: Signal>(_ signal: S) where S.Element == Value {
        let values = self.values
        observation = signal.observe { value in values.withLock { $0.append(value) } }
    }

    var recorded: [Value] { values.withLock { $0 } }
}
