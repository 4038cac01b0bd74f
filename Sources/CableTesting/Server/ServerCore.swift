import CableReactive
import Dispatch
import Foundation
import Signals

/// Where a broadcast goes.
enum BroadcastTarget: Sendable {
    /// Every subscription with exactly this identifier string.
    case identifier(String)
    /// Every subscription of this stream (`ServerSubscription.stream`).
    case stream(String)
    /// Every subscription whose params satisfy the matcher.
    case matching(@Sendable (JSONValue) -> Bool)
}

/// A request to the server thread. Commands run in submission order.
enum ServerCommand: Sendable {
    case transmit(LocalCableServer.ConnectionID, identifier: String, message: JSONValue)
    case broadcast(JSONValue, BroadcastTarget)
    case disconnect(LocalCableServer.Target, reason: String?, reconnect: Bool)
    case drop(LocalCableServer.Target)
    case stall(LocalCableServer.Target)
    case throttleReading(LocalCableServer.Target, bytesPerSecond: Int?)
    case welcome(LocalCableServer.Target)
    /// Close the listening socket.
    case refuse
    /// Start accepting on this freshly bound listening socket.
    case listen(Int32)
    /// A new stream epoch: history cleared, offsets from 1.
    case resetEpoch
    /// Hold `history` answers back (true) or let them go (false).
    case holdReplays(Bool)
    case stop
}

/// Signalled by the server thread once it has applied a command and published the result.
final class Ticket: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func signal() { semaphore.signal() }
    func wait() { semaphore.wait() }
}

/// The state shared by the public facade, the server thread and ``LocalCableServer/PerformCall``s: the
/// command queue and its wake pipe, the rules, and the published values. The server thread owns the sockets.
final class ServerCore: Sendable {
    struct Control {
        var queue: [(command: ServerCommand, ticket: Ticket?)] = []
        /// Set by the server thread, under the lock, just before it closes the wake pipe; from then on nothing
        /// is queued and nobody writes to the pipe.
        var stopped = false
        let wakeWrite: Int32
    }

    struct Rules {
        var welcome: LocalCableServer.WelcomePolicy
        var connectionRule: LocalCableServer.ConnectionRule = { _ in .accept }
        var subscriptionRule: LocalCableServer.SubscriptionRule = { _, _ in .confirm }
        var handlers: [String: LocalCableServer.PerformHandler] = [:]
    }

    let options: LocalCableServer.Options
    let port: UInt16
    let control: Locked<Control>
    let rules: Locked<Rules>
    let connectionCount = MutableStateValue(0)
    let snapshot = MutableStateValue(LocalCableServer.Snapshot(), isDuplicate: nil)
    /// The server thread, to tell whether a caller is on it (then it must not wait for itself).
    let loopThread = Locked<ObjectIdentifier?>(nil)
    /// Entered before the server thread starts, left as its last act.
    let running = DispatchGroup()

    init(options: LocalCableServer.Options, port: UInt16, wakeWrite: Int32) {
        self.options = options
        self.port = port
        control = Locked(Control(wakeWrite: wakeWrite))
        rules = Locked(Rules(welcome: options.welcome))
    }

    var isOnServerThread: Bool {
        let current = ObjectIdentifier(Thread.current)
        return loopThread.withLock { $0 == current }
    }

    /// Queues `command` and wakes the server thread; `false` once the server has stopped.
    @discardableResult
    func submit(_ command: ServerCommand, ticket: Ticket? = nil) -> Bool {
        control.withLock { control in
            guard !control.stopped else { return false }
            control.queue.append((command, ticket))
            // Under the lock, so the pipe cannot be closed (and its number reused) in between.
            Socket.wake(control.wakeWrite)
            return true
        }
    }

    /// Queues `command` and, unless called on the server thread, waits until the server thread applied it and
    /// published the outcome. On the server thread (from a rule or a handler) it runs after the callback.
    func perform(_ command: ServerCommand) {
        guard !isOnServerThread else {
            submit(command)
            return
        }
        let ticket = Ticket()
        if submit(command, ticket: ticket) { ticket.wait() }
    }

    /// Takes every queued command (the server thread's side).
    func takeCommands() -> [(command: ServerCommand, ticket: Ticket?)] {
        control.withLock { control in
            defer { control.queue.removeAll() }
            return control.queue
        }
    }

    /// Marks the server stopped and returns what was still queued, so the server thread can release the
    /// waiters; the caller then closes the wake pipe.
    func markStopped() -> [(command: ServerCommand, ticket: Ticket?)] {
        control.withLock { control in
            control.stopped = true
            defer { control.queue.removeAll() }
            return control.queue
        }
    }

    var isStopped: Bool { control.withLock { $0.stopped } }

    /// Asks the server thread to stop and, unless called on it, waits until it has closed every socket and
    /// ended. Idempotent.
    func stop() {
        submit(.stop)
        guard !isOnServerThread else { return }
        running.wait()
    }
}
