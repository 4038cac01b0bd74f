@testable import Signals

/// Records every event an observer receives, for whole-history assertions.
final class Recorder<Element: Sendable>: Sendable {
    private let events: Locked<[SignalEvent<Element>]>
    let observation: SignalObservation?

    init() {
        events = Locked([])
        observation = nil
    }

    init<S: Signal>(_ signal: S, buffering: BufferingPolicy = .unbounded) where S.Element == Element {
        let events = Locked<[SignalEvent<Element>]>([])
        self.events = events
        observation = signal.observeEvents(on: nil, buffering: buffering) { event in
            events.withLock { $0.append(event) }
        }
    }

    var history: [SignalEvent<Element>] { events.withLock { $0 } }

    var values: [Element] {
        history.compactMap { event in
            if case .value(let value) = event { return value }
            return nil
        }
    }

    var isFinished: Bool {
        history.contains { event in
            if case .finished = event { return true }
            return false
        }
    }
}

/// Counts its live instances in a per-test counter, to prove that cancelled observations leave nothing behind.
/// (A per-test counter, not a global one: Swift Testing runs tests in parallel.)
final class LifetimeTracked: Sendable {
    let live: Locked<Int>
    let id: Int

    init(_ live: Locked<Int>, id: Int = 0) {
        self.live = live
        self.id = id
        live.withLock { $0 += 1 }
    }

    deinit { live.withLock { $0 -= 1 } }
}
