import CableReactive
import CableTesting
import Dispatch
import Foundation
import Signals
import Testing

// What ReentrancyTests run on: scenarios on threads of their own with a deadline, bounded waits that wake on
// change, a scheduler that runs zero-delay work inline, and recorders. Public API only (no `@testable`).

/// A value behind a lock of its own, for the tests' records.
final class Guarded<Value: Sendable>: @unchecked Sendable {
    // Guarded by `lock`: `value` is only read and written inside `withLock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    var current: Value { withLock { $0 } }
}

/// What a bounded wait sleeps on: everything a wait may be waiting for calls ``notify()`` after it changed
/// (the transports after a send, a close or a delivery, the recorders after a value).
final class Changes: @unchecked Sendable {
    // Guarded by `condition`: `generation` is only read and written while it is locked.
    private let condition = NSCondition()
    private var generation: UInt64 = 0

    func notify() {
        condition.lock()
        generation &+= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Whether `holds()` became true before `deadline`. It is evaluated with no lock held (it may read the client,
    /// or run a manual scheduler's work), at once and after every change, and once more at the deadline (which
    /// ends the wait however often things change: a client that loops must not keep a wait from ending).
    func wait(until deadline: Date, _ holds: () -> Bool) -> Bool {
        while true {
            condition.lock()
            let seen = generation
            condition.unlock()
            if holds() { return true }
            if Date() >= deadline { return false }
            condition.lock()
            while generation == seen {
                guard condition.wait(until: deadline) else {
                    condition.unlock()
                    return holds()
                }
            }
            condition.unlock()
        }
    }
}

/// A bounded wait or a scenario ran out of time: the client is stuck (a deadlock) or lost what was awaited.
struct Stuck: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One scenario's run: its deadline, its bounded waits and the objects it must keep alive.
///
/// A scenario keeps every client, subscription and transport it makes (``keep(_:)``) until after it has handed its
/// result to the test: releasing a client or a handle calls into the client (`close`, `unsubscribe`), which hangs
/// when the client is deadlocked, and must not stop a failed scenario from reporting why.
final class Scenario: @unchecked Sendable {
    /// Every bounded wait of the scenario gives up at this moment.
    let deadline: Date
    /// What the scenario's waits wake on.
    let changes = Changes()
    // Guarded by `lock`: `kept` and `currentStep` are only read and written while it is held.
    private let lock = NSLock()
    private var kept: [AnyObject] = []
    private var currentStep = "start"

    init(seconds: Double) {
        deadline = Date(timeIntervalSinceNow: seconds)
    }

    /// Keeps `object` alive until the scenario has reported.
    @discardableResult
    func keep<T: AnyObject>(_ object: T) -> T {
        lock.lock()
        kept.append(object)
        lock.unlock()
        return object
    }

    /// Names what the scenario does now, for the message of a scenario that never ends.
    func step(_ name: String) {
        lock.lock()
        currentStep = name
        lock.unlock()
    }

    var lastStep: String {
        lock.lock()
        defer { lock.unlock() }
        return currentStep
    }

    /// Waits until `holds()`, re-checking it after every change; throws ``Stuck`` at the deadline.
    ///
    /// - Parameter detail: what the failure message adds: the state that was reached instead.
    func waitUntil(_ what: String, detail: () -> String = { "" }, _ holds: () -> Bool) throws {
        step("waiting until \(what)")
        guard changes.wait(until: deadline, holds) else {
            let found = detail()
            throw Stuck("timed out waiting until \(what)" + (found.isEmpty ? "" : "; found: \(found)"))
        }
    }

    /// Runs `body(0)` … `body(count - 1)`, each on a thread of its own, at once.
    func spawn(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> DispatchGroup {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                body(index)
                group.leave()
            }
            thread.start()
        }
        return group
    }

    /// Waits until every thread of `group` has returned; throws ``Stuck`` at the deadline (the threads are left
    /// stuck: they hold what they captured, so nothing of a deadlocked client is released).
    func join(_ group: DispatchGroup, _ what: String, detail: () -> String = { "" }) throws {
        step("waiting for \(what)")
        let timeout = DispatchWallTime.now() + max(deadline.timeIntervalSinceNow, 0)
        guard group.wait(wallTimeout: timeout) == .success else {
            let found = detail()
            throw Stuck(
                "\(what) did not return before the deadline: a deadlock" + (found.isEmpty ? "" : "; \(found)"))
        }
    }

    /// Lets go of what ``keep(_:)`` kept.
    fileprivate func release() {
        lock.lock()
        let objects = kept
        kept = []
        lock.unlock()
        withExtendedLifetime(objects) {}
    }
}

/// Runs `body` on a thread of its own and returns its result, or throws ``Stuck`` when it has not returned
/// `seconds` (plus a grace for its own waits to report) after it started. The test's task only awaits: no
/// thread of the cooperative pool blocks, however the scenario hangs. A scenario that never returns leaks its
/// thread and what it holds.
func bounded<T: Sendable>(
    seconds: Double = 20, _ body: @escaping @Sendable (Scenario) throws -> T
) async throws -> T {
    let scenario = Scenario(seconds: seconds)
    let result = Guarded<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let worker = Thread {
        let outcome = Result { try body(scenario) }
        result.withLock { $0 = outcome }
        done.signal()
        scenario.release()  // after reporting: releasing a deadlocked client's handles would hang here
    }
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let watcher = Thread {
            let grace = seconds + 5
            if done.wait(wallTimeout: .now() + grace) == .timedOut {
                continuation.resume(
                    throwing: Stuck(
                        "the scenario did not return within \(grace) s, stuck inside a call into the client "
                            + "(a deadlock); its last step: \(scenario.lastStep)"))
            } else {
                continuation.resume(with: result.current!)
            }
        }
        watcher.start()
        worker.start()
    }
}

/// Every value a signal delivers, in order; each one notifies `changes`.
final class Recorder<Value: Sendable>: Sendable {
    private let values = Guarded<[Value]>([])
    private let observation = Guarded<SignalObservation?>(nil)

    init(_ signal: some Signal<Value>, _ changes: Changes) {
        let values = values
        let token = signal.observe { value in
            values.withLock { $0.append(value) }
            changes.notify()
        }
        observation.withLock { $0 = token }
    }

    var all: [Value] { values.current }
    var last: Value? { values.current.last }

    func cancel() { observation.current?.cancel() }
}

/// A `CableScheduler` that runs zero-delay work where it is asked for: `schedule(after: 0)` (or less) and
/// `perform` run the work on the calling thread before returning. Work with a positive delay is recorded and
/// never runs (these scenarios end long before a stale watchdog or a backoff would fire).
///
/// The protocol's documentation asks for neither; the client promises to work with it anyway: it calls its
/// scheduler with no lock held, so work that runs inline cannot deadlock or reorder it.
final class InlineScheduler: CableScheduler {
    private struct Pending: Sendable {
        var nextID = 0
        var delays: [Int: TimeInterval] = [:]
    }

    private let pending = Guarded(Pending())
    private let inlineRuns = Guarded(0)
    /// Called at the start of every `schedule` and `perform`, on the client's thread.
    private let probe: (@Sendable (String) -> Void)?

    init(probe: (@Sendable (String) -> Void)? = nil) {
        self.probe = probe
    }

    var now: TimeInterval { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// How many pieces of work ran inline (every `perform`, every zero-delay `schedule`).
    var ranInline: Int { inlineRuns.current }

    /// The delays of the positive-delay work that was scheduled and not cancelled.
    var pendingDelays: [TimeInterval] { pending.current.delays.values.sorted() }

    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        probe?("scheduler.schedule")
        guard delay > 0 else {
            inlineRuns.withLock { $0 += 1 }
            work()
            return Token(onCancel: {})
        }
        let pending = pending
        let id = pending.withLock { state -> Int in
            state.nextID += 1
            state.delays[state.nextID] = delay
            return state.nextID
        }
        return Token(onCancel: { _ = pending.withLock { $0.delays.removeValue(forKey: id) } })
    }

    func perform(_ work: @escaping @Sendable () -> Void) {
        probe?("scheduler.perform")
        inlineRuns.withLock { $0 += 1 }
        work()
    }

    private struct Token: ScheduledWork {
        let onCancel: @Sendable () -> Void
        func cancel() { onCancel() }
    }
}

/// Which scheduler a scenario's client runs on.
enum SchedulerKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// The production `DispatchScheduler`: callbacks on its serial queue.
    case dispatch
    /// ``InlineScheduler``: callbacks and zero-delay work on the thread that caused them.
    case inline

    var testDescription: String { rawValue }

    func make() -> any CableScheduler {
        switch self {
        case .dispatch: DispatchScheduler()
        case .inline: InlineScheduler()
        }
    }
}

/// One command of the client on the wire.
enum Command: Equatable, CustomStringConvertible {
    case subscribe(String)
    case unsubscribe(String)
    /// A perform: the identifier, and the data's JSON text (the action and the members, keys sorted).
    case message(String, data: String)
    case other(String)

    init(_ text: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any],
            let command = object["command"] as? String, let identifier = object["identifier"] as? String
        else {
            self = .other(text)
            return
        }
        switch command {
        case "subscribe": self = .subscribe(identifier)
        case "unsubscribe": self = .unsubscribe(identifier)
        case "message": self = .message(identifier, data: object["data"] as? String ?? "")
        default: self = .other(text)
        }
    }

    /// The data of a perform, parsed: what `perform(action, data)` sent.
    var data: [String: Any]? {
        guard case .message(_, let data) = self else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any]
    }

    var identifier: String? {
        switch self {
        case .subscribe(let id), .unsubscribe(let id), .message(let id, _): id
        case .other: nil
        }
    }

    var description: String {
        switch self {
        case .subscribe(let id): "subscribe \(id)"
        case .unsubscribe(let id): "unsubscribe \(id)"
        case .message(let id, let data): "message \(id) \(data)"
        case .other(let text): "other \(text)"
        }
    }
}

/// A `CableScheduler` around a `ManualScheduler` that notifies `changes` whenever the client queues work: a client
/// that queues its callbacks from another thread wakes the scenario's waits, which then run them.
final class NotifyingScheduler: CableScheduler {
    let manual: ManualScheduler
    private let changes: Changes

    init(_ manual: ManualScheduler, _ changes: Changes) {
        self.manual = manual
        self.changes = changes
    }

    var now: TimeInterval { manual.now }

    func schedule(after delay: TimeInterval, _ work: @escaping @Sendable () -> Void) -> any ScheduledWork {
        defer { changes.notify() }
        return manual.schedule(after: delay, work)
    }

    func perform(_ work: @escaping @Sendable () -> Void) {
        manual.perform(work)
        changes.notify()
    }
}

/// A `WebSocketTransport` around a `FakeTransport` whose connections notify `changes` after each send and close,
/// so that a scenario's bounded waits wake when the client writes (at once, or later if it defers the call).
final class NotifyingTransport: WebSocketTransport {
    let fake = FakeTransport()
    private let changes: Changes

    init(_ changes: Changes) { self.changes = changes }

    func connect(
        request: CableRequest, protocols: [String], handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection {
        let connection = fake.connect(request: request, protocols: protocols, handler: handler)
        changes.notify()
        return Connection(base: connection, changes: changes)
    }

    private final class Connection: WebSocketConnection {
        let base: any WebSocketConnection
        let changes: Changes

        init(base: any WebSocketConnection, changes: Changes) {
            self.base = base
            self.changes = changes
        }

        func send(text: String) -> Bool {
            defer { changes.notify() }
            return base.send(text: text)
        }

        func close(code: WebSocketCloseCode, reason: String) {
            base.close(code: code, reason: reason)
            changes.notify()
        }
    }
}
