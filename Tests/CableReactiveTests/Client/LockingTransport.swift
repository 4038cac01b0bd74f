import CableReactive
import Dispatch
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A pthread mutex of the error-checking type: not recursive. A thread that locks it again while it holds it is
/// not let in: it gets `EDEADLK` back at once, where a plain mutex would hang it forever. ``LockingTransport`` uses
/// that answer to name the call that re-entered it instead of hanging the test.
final class DeliveryLock: @unchecked Sendable {
    // `mutex` is the synchronization itself; the pointer is set once in init and freed in deinit.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        let result = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(result == 0, "pthread_mutex_init: \(result)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Takes the lock, waiting for another thread to let go of it. Returns false, without taking it, when the
    /// calling thread already holds it.
    func lock() -> Bool {
        let result = pthread_mutex_lock(mutex)
        if result == EDEADLK { return false }
        precondition(result == 0, "pthread_mutex_lock: \(result)")
        return true
    }

    func unlock() {
        let result = pthread_mutex_unlock(mutex)
        precondition(result == 0, "pthread_mutex_unlock: \(result)")
    }
}

/// A `WebSocketTransport` written the way an app may write its own, with CableReactive's public API only: each
/// connection delivers its events on a thread of its own while holding one non-recursive lock, and `send` and
/// `close` take that same lock. Legal by the client's contract, and what deadlocks a client that calls the
/// connection while holding a lock of its own that the delivery path takes (lock-order inversion across the
/// delivery thread and an app thread), or that calls the connection from inside the connection's own delivery
/// (which would hang a plain mutex; this one reports it, see ``reentries``).
///
/// The test plays the server: every connection can open and send the welcome by itself, and confirm every
/// subscribe it receives (``Server``); the test delivers the rest (``Connection/receive(_:)``, a flood with
/// ``Connection/receive(contentsOf:)``). Each connection records every text the client sent, in order.
final class LockingTransport: WebSocketTransport {
    /// What the server does by itself.
    struct Server: Sendable {
        /// Opens every connection and sends the welcome as soon as the client asks for it.
        var welcomes = true
        /// Confirms every subscribe the client sends, right after it arrives.
        var confirms = true
        /// Called with every new connection, after the welcome if it sends one: to start a flood, say.
        var onConnect: (@Sendable (Connection) -> Void)?
    }

    let server: Server
    private let changes: Changes?
    /// Called at the start of every `connect`, `send` and `close`, on the client's thread, before any lock.
    private let probe: (@Sendable (String) -> Void)?
    private let list = Guarded<[Connection]>([])

    init(server: Server = Server(), changes: Changes? = nil, probe: (@Sendable (String) -> Void)? = nil) {
        self.server = server
        self.changes = changes
        self.probe = probe
    }

    /// Every connection the client asked for, oldest first.
    var connections: [Connection] { list.current }
    var last: Connection? { connections.last }

    /// Every call the client made into a connection from inside that connection's own event delivery, on the
    /// delivering thread: what the client promises never to do.
    var reentries: [String] { connections.flatMap(\.reentries) }

    func connect(
        request: CableRequest, protocols: [String], handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection {
        probe?("transport.connect")
        let connection = list.withLock { list -> Connection in
            let connection = Connection(
                index: list.count, handler: handler, confirms: server.confirms, changes: changes, probe: probe)
            list.append(connection)
            return connection
        }
        connection.start()
        if server.welcomes {
            connection.open()
            connection.welcome()
        }
        server.onConnect?(connection)
        changes?.notify()
        return connection
    }

    /// One connection: a delivery thread, the lock it delivers under, and the records.
    final class Connection: WebSocketConnection, @unchecked Sendable {
        enum Phase: Sendable {
            case connecting
            case open
            case closed
        }

        struct Records: Sendable {
            var phase = Phase.connecting
            var sent: [String] = []
            /// Texts `send` refused (returned false for): not open yet, or closed.
            var refused: [String] = []
            /// The code of the client's close, if the client closed.
            var closeCode: WebSocketCloseCode?
            /// The event being delivered, while one is.
            var delivering: String?
            var reentries: [String] = []
            var delivered = 0
            var closedDelivered = false
        }

        private struct Inbox {
            var events: [WebSocketEvent] = []
            var head = 0
            var closeQueued = false
            /// Events queued and not yet delivered to the end (dropped ones excepted).
            var inFlight = 0
            var handler: (@Sendable (WebSocketEvent) -> Void)?

            var isEmpty: Bool { head == events.count }
        }

        /// Which connection of its transport this is: 0 for the first.
        let index: Int
        private let confirms: Bool
        private let changes: Changes?
        private let probe: (@Sendable (String) -> Void)?
        /// What this connection holds while it delivers an event, and what `send` and `close` take: the lock of
        /// the transport's own state, as an app's transport would have one. Non-recursive.
        private let lock = DeliveryLock()
        // Guarded by `recordsLock`, which is never held while calling out: the test reads the records while the
        // connection is stuck holding `lock`.
        private let recordsLock = NSLock()
        private var records = Records()
        // Guarded by `inboxCondition`: the events waiting for the delivery thread, and the handler until `.closed`.
        private let inboxCondition = NSCondition()
        private var inbox = Inbox()

        fileprivate init(
            index: Int, handler: @escaping @Sendable (WebSocketEvent) -> Void, confirms: Bool, changes: Changes?,
            probe: (@Sendable (String) -> Void)?
        ) {
            self.index = index
            self.confirms = confirms
            self.changes = changes
            self.probe = probe
            inbox.handler = handler
        }

        private func withRecords<R>(_ body: (inout Records) -> R) -> R {
            recordsLock.lock()
            defer { recordsLock.unlock() }
            return body(&records)
        }

        // MARK: what the test reads

        /// Every text the client sent and this connection accepted, in order.
        var sent: [String] { withRecords { $0.sent } }
        var commands: [Command] { sent.map(Command.init) }
        var refused: [String] { withRecords { $0.refused } }
        var closeCode: WebSocketCloseCode? { withRecords { $0.closeCode } }
        var isOpen: Bool { withRecords { $0.phase == .open } }
        var isClosed: Bool { withRecords { $0.phase == .closed } }
        /// Whether `.closed`, the last event, has been delivered.
        var closedDelivered: Bool { withRecords { $0.closedDelivered } }
        var delivered: Int { withRecords { $0.delivered } }
        var reentries: [String] { withRecords { $0.reentries } }
        /// Whether every event received so far has been delivered (or dropped by a close).
        var isIdle: Bool {
            inboxCondition.lock()
            defer { inboxCondition.unlock() }
            return inbox.inFlight == 0
        }

        // MARK: the server's side

        /// The upgrade succeeds with `subprotocol`.
        func open(subprotocol: String? = "actioncable-v1-json") {
            enqueue([.opened(protocol: subprotocol)])
        }

        func welcome() {
            receive(#"{"type":"welcome"}"#)
        }

        func confirm(_ identifier: String) {
            receive(ClientHarness.confirm(identifier))
        }

        func receive(_ text: String) {
            enqueue([.text(text)])
        }

        /// Queues every text at once: the delivery thread delivers them back to back, each under the lock.
        func receive(contentsOf texts: [String]) {
            enqueue(texts.map { .text($0) })
        }

        /// The server closes the connection.
        func serverClose(code: WebSocketCloseCode = .normalClosure) {
            withRecords { $0.phase = .closed }
            enqueueClosed(.closed(code: code, reason: ""))
        }

        // MARK: WebSocketConnection

        func send(text: String) -> Bool {
            probe?("connection.send")
            let locked = acquire(for: "send(\(text.prefix(80)))")
            defer { if locked { lock.unlock() } }
            let accepted = withRecords { records -> Bool in
                guard records.phase == .open else {
                    records.refused.append(text)
                    return false
                }
                records.sent.append(text)
                return true
            }
            if accepted, confirms, case .subscribe(let identifier) = Command(text) {
                confirm(identifier)
            }
            changes?.notify()
            return accepted
        }

        func close(code: WebSocketCloseCode, reason: String) {
            probe?("connection.close")
            let locked = acquire(for: "close(code: \(code))")
            defer { if locked { lock.unlock() } }
            let first = withRecords { records -> Bool in
                guard records.phase != .closed else { return false }
                records.phase = .closed
                records.closeCode = code
                return true
            }
            // What was received and not yet delivered is dropped: `.closed` is next.
            if first { enqueueClosed(.closed(code: code, reason: reason)) }
            changes?.notify()
        }

        /// Takes the delivery lock for a call of the client. The only thread that can already hold it is the
        /// delivery thread, inside the handler: that is a re-entrant call, recorded; the call then goes on under
        /// the hold of the delivery (where a plain mutex would have hung).
        private func acquire(for call: String) -> Bool {
            if lock.lock() { return true }
            withRecords { records in
                let event = records.delivering ?? "an event"
                records.reentries.append(
                    "connection \(index): \(call) from inside the delivery of \(event), on the delivering thread")
            }
            return false
        }

        // MARK: delivery

        fileprivate func start() {
            let thread = Thread { [self] in run() }
            thread.name = "LockingTransport connection \(index)"
            thread.start()
        }

        private func enqueue(_ events: [WebSocketEvent]) {
            inboxCondition.lock()
            if !inbox.closeQueued {
                inbox.events.append(contentsOf: events)
                inbox.inFlight += events.count
                inboxCondition.signal()
            }
            inboxCondition.unlock()
        }

        private func enqueueClosed(_ info: WebSocketCloseInfo) {
            inboxCondition.lock()
            if !inbox.closeQueued {
                inbox.closeQueued = true
                inbox.inFlight -= inbox.events.count - inbox.head
                inbox.events.removeSubrange(inbox.head...)
                inbox.events.append(.closed(info))
                inbox.inFlight += 1
                inboxCondition.signal()
            }
            inboxCondition.unlock()
        }

        private func next() -> (WebSocketEvent, @Sendable (WebSocketEvent) -> Void) {
            inboxCondition.lock()
            defer { inboxCondition.unlock() }
            while inbox.isEmpty { inboxCondition.wait() }
            let event = inbox.events[inbox.head]
            inbox.head += 1
            if inbox.head > 4096, inbox.head * 2 > inbox.events.count {
                inbox.events.removeSubrange(..<inbox.head)
                inbox.head = 0
            }
            // `handler` is only cleared after `.closed`, which is the last event.
            return (event, inbox.handler!)
        }

        /// The delivery thread: every event under the lock, in order, `.closed` last; then the handler goes.
        private func run() {
            while true {
                let (event, handler) = next()
                let locked = lock.lock()
                precondition(locked, "the delivery thread never holds its lock between events")
                withRecords { records in
                    if case .opened = event, records.phase == .connecting { records.phase = .open }
                    records.delivering = Self.describe(event)
                }
                handler(event)
                let closed: Bool
                if case .closed = event { closed = true } else { closed = false }
                withRecords { records in
                    records.delivering = nil
                    records.delivered += 1
                    if closed { records.closedDelivered = true }
                }
                lock.unlock()
                inboxCondition.lock()
                inbox.inFlight -= 1
                let idle = inbox.inFlight == 0
                if closed { inbox.handler = nil }
                inboxCondition.unlock()
                if closed {
                    changes?.notify()
                    return
                }
                // Waits look at openings and at a drained inbox; a notification per message of a flood would
                // only wake them for nothing.
                if case .opened = event {
                    changes?.notify()
                } else if idle {
                    changes?.notify()
                }
            }
        }

        private static func describe(_ event: WebSocketEvent) -> String {
            switch event {
            case .opened: ".opened"
            case .text(let text): ".text(\(text.prefix(80)))"
            case .closed: ".closed"
            }
        }
    }
}
