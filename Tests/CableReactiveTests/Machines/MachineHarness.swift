import CableTesting
import Foundation
import Testing

@testable import CableReactive

/// Drives a ``ConnectionMachine`` with a virtual clock and a seeded random source.
struct MachineHarness {
    typealias Action = ConnectionMachine.Action
    var machine: ConnectionMachine
    var now: TimeInterval = 0
    var random = SeededRandom(seed: 42)
    var log: [Action] = []

    init(
        maxReconnectAttempts: Int? = nil, staleTimeout: TimeInterval = 15, min: TimeInterval = 1, max: TimeInterval = 30
    ) {
        machine = ConnectionMachine(
            config: .init(
                staleTimeout: staleTimeout, backoff: Backoff(min: min, max: max),
                maxReconnectAttempts: maxReconnectAttempts))
    }

    @discardableResult
    mutating func send(_ event: ConnectionMachine.Event) -> [Action] {
        let actions = machine.handle(event, now: now, random: &random)
        log += actions
        return actions
    }

    /// Inbound traffic on attempt `id`, now; returns whether `id` is the live session.
    @discardableResult
    mutating func noteFrame(_ id: UInt64) -> Bool {
        machine.noteFrame(id: id, now: now)
    }

    mutating func advance(_ seconds: TimeInterval) { now += seconds }

    var phase: ConnectionMachine.Phase { machine.phase }

    /// The id of the attempt in flight (preparing or opening or connected).
    var currentID: UInt64? {
        switch machine.phase {
        case .preparing(let id), .opening(let id), .connected(let id, _), .backingOff(let id): id
        case .refreshing(let id, _): id
        case .idle, .gated, .stopped, .closed: nil
        }
    }

    /// Connects with an open gate and returns the first attempt's id.
    @discardableResult
    mutating func start() -> UInt64 {
        send(.gate(true))
        send(.connect)
        return prepareAndOpen()
    }

    /// Finishes `onRequest` for the attempt in flight; returns its id.
    @discardableResult
    mutating func prepareAndOpen() -> UInt64 {
        if case .preparing(let id) = machine.phase { send(.requestReady(id: id)) }
        if case .opening(let id) = machine.phase { return id }
        return 0
    }

    /// Runs an attempt up to its welcome.
    @discardableResult
    mutating func welcomed() -> UInt64 {
        if machine.phase == .idle { start() }
        prepareAndOpen()
        guard case .opening(let id) = machine.phase else { return 0 }
        send(.welcome(id: id))
        return id
    }

    /// The last published state.
    var state: CableState? {
        log.reversed().lazy.compactMap { action -> CableState? in
            if case .publish(let state) = action { return state }
            return nil
        }.first
    }

    /// The delays of every timer of `kind` scheduled by the last event's actions.
    static func delays(_ actions: [Action], _ kind: ConnectionMachine.TimerKind) -> [TimeInterval] {
        actions.compactMap { action in
            if case .schedule(kind, _, let delay) = action { return delay }
            return nil
        }
    }

    /// Fails attempts until the machine is backing off; returns the backoff delay.
    mutating func failOpen() -> TimeInterval? {
        prepareAndOpen()
        guard case .opening(let id) = machine.phase else { return nil }
        let actions = send(.transportClosed(id: id, unauthorized: false))
        return Self.delays(actions, .backoff).first
    }

    /// Fires the pending backoff timer.
    mutating func fireBackoff() {
        if case .backingOff(let id) = machine.phase { send(.timerFired(.backoff, id: id)) }
    }
}

/// Records a test failure; returns Void so a `guard` can `return recordFailure(...)`.
func recordFailure(_ comment: Comment, sourceLocation: SourceLocation = #_sourceLocation) {
    Issue.record(comment, sourceLocation: sourceLocation)
}
