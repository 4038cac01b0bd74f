import Dispatch
import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The shell around the pure state machines: one lock, decisions under it, effects with no user code.
///
/// Every event (an API call, a transport event, a timer) takes the lock, runs the machines, and executes
/// their actions while still holding it. Those actions are all non-blocking and never call user code:
/// sending on the transport (which only queues), scheduling timers, starting a hook's `Task`, and queueing
/// state publications on the callback queue. So operations apply in call order, and a slow observer or
/// hook never holds up the control path. Log lines are collected and emitted after unlocking.
final class ClientEngine: Sendable {
    /// The header that presents the previous session's id to AnyCable (extended protocol).
    static let restoreHeader = "X-AnyCable-Restore-SID"

    enum Event: Sendable {
        case machine(ConnectionMachine.Event)
        case requestPrepared(id: UInt64, CableRequest)
        /// The subscribe re-send timer fired.
        case retriesDue
    }

    struct Core: Sendable {
        var machine: ConnectionMachine
        /// The subscriptions: each entry holds its state and, as its attachment, its box (handles and streams;
        /// replaced when a handle joins or leaves).
        var registry: SubscriptionRegistry<SubscriptionBox>
        /// The pending subscribe re-sends (identifier → the registry's generation), behind `retryTimer`.
        var retries = DeadlineQueue<String, UInt64>()
        var retryTimer: (any ScheduledWork)?
        var random: any RandomNumberGenerator & Sendable
        var connection: (id: UInt64, connection: any WebSocketConnection)?
        var request: (id: UInt64, request: CableRequest)?
        var timers: [ConnectionMachine.TimerKind: any ScheduledWork] = [:]
        var nextSinkID: UInt64 = 0
        /// The data-frame index over the registry's boxes (by identifier token, and server spellings): kept in
        /// step by `subscribe(identifier:)`, `replace(_:with:in:)` and `end(_:in:)` only.
        var routes = RouteTable()
        var hook: Task<Void, Never>?
        var logs: [LogEvent] = []
        var closed = false
        /// The attempt whose handshake chose AnyCable's extended protocol (``CableWireProtocol/anyCableExtended``).
        var extendedAttempt: UInt64?
        /// The `sid` of the last extended session, presented on the next attempt (never logged); forgotten after
        /// a server `disconnect`, an unauthorized answer, the app's `disconnect()`, or a plain session.
        var restoreSessionID: String?
        /// What the welcome of an attempt said was restored, until its session starts.
        var restoring: (id: UInt64, restored: ServerFrame.Restored)?
    }

    let url: URL
    let log: LogContext
    let options: CableOptions
    let transport: any WebSocketTransport
    let scheduler: any CableScheduler
    let callbacks: CallbackExecutor
    let onRequest: (@Sendable (inout CableRequest) async throws -> Void)?
    let onUnauthorized: (@Sendable () async throws -> Bool)?
    let stateValue = MutableStateValue(CableState.disconnected)
    /// Every loss is published, even one equal to the last (two stale sessions in a row are two events).
    let lastDisconnectValue = MutableStateValue<CableDisconnect?>(nil, isDuplicate: { _, _ in false })
    let nextAttemptValue = MutableStateValue<CableRetry?>(nil)
    /// What this client's subscription handles and boxes share.
    let subscriptions: SubscriptionContext
    private let core: Locked<Core>
    private let gateObservation = Locked<SignalObservation?>(nil)

    init(
        url: URL,
        options: CableOptions,
        transport: any WebSocketTransport,
        scheduler: any CableScheduler,
        random: any RandomNumberGenerator & Sendable,
        callbacks: CallbackExecutor,
        logger: CableLogger?,
        onRequest: (@Sendable (inout CableRequest) async throws -> Void)?,
        onUnauthorized: (@Sendable () async throws -> Bool)?
    ) {
        self.url = url
        log = LogContext(host: url.logHost, label: options.logLabel, logger: logger)
        self.options = options
        self.transport = transport
        self.scheduler = scheduler
        self.callbacks = callbacks
        self.onRequest = onRequest
        self.onUnauthorized = onUnauthorized
        let config = ConnectionMachine.Config(
            staleTimeout: options.staleTimeout,
            backoff: Backoff(min: options.minReconnectDelay, max: options.maxReconnectDelay),
            maxReconnectAttempts: options.maxReconnectAttempts
        )
        core = Locked(
            Core(
                machine: ConnectionMachine(config: config),
                registry: SubscriptionRegistry(retryDelays: options.subscribeRetryDelays),
                random: random
            ))
        subscriptions = SubscriptionContext(
            bufferSize: options.messageBufferSize, log: log, callbacks: callbacks, coders: CableCoders(options.coding))
        subscriptions.attach(self)
    }

    func startGate<Gate: Signal>(_ gate: Gate) where Gate.Element == Bool {
        let token = gate.removeDuplicates().observe { [weak self] open in
            self?.handle(.machine(.gate(open)))
        }
        gateObservation.withLock { $0 = token }
    }

    // MARK: the event loop

    func handle(_ event: Event) {
        let logs = core.withLock { core -> [LogEvent] in
            process(event, in: &core)
            defer { core.logs.removeAll() }
            return core.logs
        }
        emit(logs)
    }

    private func emit(_ logs: [LogEvent]) {
        for event in logs { log.emit(event) }
    }

    private func process(_ first: Event, in core: inout Core) {
        var queue = [first]
        while !queue.isEmpty {
            let event = queue.removeFirst()
            switch event {
            case .machine(let event):
                if case .disconnect = event { core.restoreSessionID = nil }  // the app ended the session
                let now = scheduler.now
                let actions = core.machine.handle(event, now: now, random: &core.random)
                for action in actions { execute(action, in: &core, then: &queue) }
            case .requestPrepared(let id, let request):
                core.request = (id, request)
                queue.append(.machine(.requestReady(id: id)))
            case .retriesDue:
                let (due, next) = core.retries.fire(now: scheduler.now)
                armRetryTimer(for: next, in: &core)
                for (identifier, generation) in due {
                    let actions = core.registry.retryFired(identifier, generation: generation, random: &core.random)
                    for action in actions { execute(action, in: &core) }
                }
            }
        }
    }

    private func execute(_ action: ConnectionMachine.Action, in core: inout Core, then queue: inout [Event]) {
        switch action {
        case .prepareRequest(let id):
            core.hook?.cancel()
            var request = CableRequest(url: url)
            // Before onRequest, so that an app can see it and remove it (say, when another user logs in).
            if let sessionID = core.restoreSessionID { request.setHeader(Self.restoreHeader, sessionID) }
            guard let onRequest else {
                queue.append(.requestPrepared(id: id, request))
                return
            }
            core.hook = Task { [weak self, log] in
                var edited = request
                do {
                    try await onRequest(&edited)
                } catch {
                    self?.handle(.machine(.requestFailed(id: id)))
                    return
                }
                let invalid = edited.invalidHeaderNames.count
                guard invalid == 0 else {
                    // A header that cannot be sent fails the attempt: connecting without it would look like
                    // the server refusing valid credentials. Neither names nor values are logged.
                    log.emit(LogEvent(level: .warn, name: "request_invalid_headers", fields: [.count(invalid)]))
                    self?.handle(.machine(.requestFailed(id: id)))
                    return
                }
                self?.handle(.requestPrepared(id: id, edited))
            }
        case .openTransport(let id):
            guard let request = core.request, request.id == id else { return }
            core.request = nil
            core.connection = (id, openTransport(request.request, id: id))
        case .closeTransport(let id):
            if let open = core.connection, open.id == id {
                open.connection.close(code: .normalClosure, reason: "")
                core.connection = nil
            }
        case .schedule(let kind, let id, let delay):
            core.timers[kind]?.cancel()
            core.timers[kind] = scheduler.schedule(after: delay) { [weak self] in
                self?.handle(.machine(.timerFired(kind, id: id)))
            }
        case .cancelTimer(let kind):
            core.timers.removeValue(forKey: kind)?.cancel()
            if kind == .watchdog {
                core.hook?.cancel()
                core.hook = nil
            }
        case .callUnauthorized(let id):
            core.hook?.cancel()
            core.restoreSessionID = nil  // credentials are changing: start a fresh session
            guard let onUnauthorized else {
                queue.append(.machine(.unauthorizedAnswered(id: id, refreshed: false)))
                return
            }
            core.hook = Task { [weak self] in
                let refreshed: Bool?
                do {
                    refreshed = try await onUnauthorized()
                } catch {
                    refreshed = nil
                }
                self?.handle(.machine(.unauthorizedAnswered(id: id, refreshed: refreshed)))
            }
        case .sessionStarted(let id):
            var restored: ServerFrame.Restored?
            if let restoring = core.restoring, restoring.id == id {
                // Our spelling of each restored identifier, whatever spelling the server wrote back.
                restored = ServerFrame.Restored(
                    identifiers: restoring.restored.identifiers.map { identifiers in
                        identifiers.map { core.routes.resolve($0)?.identifier ?? $0 }
                    })
            }
            core.restoring = nil
            // On an extended session, a subscription that has seen stream positions asks for a replay.
            var replayable: Set<String> = []
            if core.extendedAttempt == id {
                for (identifier, entry) in core.registry.entries where subscriptions.hasStreamPositions(entry.serial) {
                    replayable.insert(identifier)
                }
            }
            let actions = core.registry.sessionStarted(
                id, restored: restored, replayable: replayable, random: &core.random)
            for action in actions { execute(action, in: &core) }
        case .sessionEnded:
            subscriptions.sessionEnded()
            for action in core.registry.sessionEnded() { execute(action, in: &core) }
        case .publish(let state):
            let value = stateValue
            callbacks.run { value.value = state }
        case .lost(let disconnect):
            let value = lastDisconnectValue
            callbacks.run { value.value = disconnect }
        case .waiting(let attempt, let delay):
            let retry = CableRetry(attempt: attempt, delay: delay, startsAt: Date(timeIntervalSinceNow: delay))
            let value = nextAttemptValue
            callbacks.run { value.value = retry }
        case .notWaiting:
            let value = nextAttemptValue
            callbacks.run { value.value = nil }
        case .log(let event):
            core.logs.append(event)
        }
    }

    private func execute(_ action: SubscriptionAction, in core: inout Core) {
        switch action {
        case .send(let text):
            Self.sendOnLiveSession(text, in: core)
        case .publish(_, .unsubscribed):
            break  // the entry is gone; its row was ended by whoever removed it (end(_:in:))
        case .publish(let identifier, let state):
            guard let sinks = core.registry[identifier]?.attachment.sinks else { return }
            callbacks.run {
                for sink in sinks { sink.state.update { $0 = state } }
            }
        case .publishReconnect(let identifier, let outcome):
            guard let sinks = core.registry[identifier]?.attachment.sinks else { return }
            callbacks.run {
                for sink in sinks { sink.reconnect.update { $0 = outcome } }
            }
        case .awaitHistory(let identifier):
            if let entry = core.registry[identifier] {
                subscriptions.withSequencer(of: entry.serial) { $0.historyRequested() }
            }
        case .requestHistory(let identifier):
            guard let box = core.registry[identifier]?.attachment else { return }
            let positions = subscriptions.withSequencer(of: box.serial) { sequencer in
                sequencer.historyRequested()
                return sequencer.positions
            }
            Self.sendOnLiveSession(CableProtocol.history(identifier: identifier, since: positions), in: core)
        case .scheduleRetry(let identifier, let generation, let delay):
            if let deadline = core.retries.set(identifier, generation, at: scheduler.now + delay) {
                armRetryTimer(for: deadline, in: &core)
            }
        case .cancelRetry(let identifier):
            if core.retries.remove(identifier) { armRetryTimer(for: nil, in: &core) }
        case .log(let event):
            core.logs.append(event)
        }
    }

    /// Sends on the connection of the live session, if any. (A separate function: inlined into
    /// `execute`, this check crashes the Swift 6.3.1 optimizer's CopyPropagation pass in release builds.)
    ///
    /// - Returns: whether the text was queued (false without a live session).
    @inline(never)
    @discardableResult
    private static func sendOnLiveSession(_ text: String, in core: Core) -> Bool {
        let live = core.machine.sessionID
        guard let open = core.connection, open.id == live else { return false }
        return open.connection.send(text: text)
    }

    // MARK: transport events

    /// Connects. Every transport delivers through one path: text messages as validated UTF-8 to a
    /// ``TextReceiver``, staged in a ``DeliveryBatch`` and handed over at the end of each read. A
    /// ``BatchReportingTransport`` does this natively; any other transport's `.text` events are adapted, each
    /// one a read of one message (``TextReceiver/adapting(_:)``).
    private func openTransport(_ request: CableRequest, id: UInt64) -> any WebSocketConnection {
        let batch = DeliveryBatch()
        // The data-frame path reaches `core` without the engine: `core` is captured strongly (it holds no
        // reference to the receiver, which a connection lets go of once it has delivered `.closed`), and the
        // engine, which has weak references and so side-table reference counting, is loaded weakly only for
        // the other frames. A weak load per message cost about 4% of the benchmark client's time.
        let core = core
        let receiver = TextReceiver(
            text: { [weak self] utf8 in
                guard !Self.routeDataFrame(utf8: utf8, id: id, batch: batch, core: core) else { return }
                self?.inbound(CableProtocol.decode(validatedUTF8: utf8), id: id, batch: batch)
            },
            batchEnded: { [weak self] in
                if batch.flush() { sched_yield() }
                if batch.routedFrames {
                    batch.routedFrames = false
                    self?.noteFrames(id: id)
                }
            }
        )
        let handler = receiver.adapting { [weak self] event in
            self?.transportEvent(event, id: id, batch: batch)
        }
        guard let batching = transport as? any BatchReportingTransport else {
            return transport.connect(request: request, protocols: options.wireProtocol.offer, handler: handler)
        }
        return batching.connect(
            request: request, protocols: options.wireProtocol.offer, receiver: receiver, handler: handler)
    }

    private func transportEvent(_ event: WebSocketEvent, id: UInt64, batch: DeliveryBatch) {
        switch event {
        case .opened(let chosen):
            // A server that knows none of our protocols answers with the sentinel we offer last. No protocol
            // at all is accepted: Rails answers that way to a client that offers none it knows, and so does
            // AnyCable; both then speak plain Action Cable.
            if chosen == CableWireProtocol.unsupportedSentinel {
                handle(.machine(.unsupportedProtocol(id: id)))
            } else if chosen == CableWireProtocol.anyCableExtended.name, options.wireProtocol == .anyCableExtended {
                core.withLock { $0.extendedAttempt = id }
            }
        case .text:
            break  // handed to the receiver (`adapting`)
        case .closed(let info):
            batch.flush()
            var unauthorized = false
            if case .failed(let error) = info, let status = error.httpStatus, status == 401 || status == 403 {
                unauthorized = true
            }
            let logs = core.withLock { core -> [LogEvent] in
                if core.connection?.id == id { core.connection = nil }
                core.logs.append(Self.closeLog(info))
                process(.machine(.transportClosed(id: id, unauthorized: unauthorized, info: info)), in: &core)
                defer { core.logs.removeAll() }
                return core.logs
            }
            emit(logs)
        }
    }

    private static func closeLog(_ info: WebSocketCloseInfo) -> LogEvent {
        switch info {
        case .closed(let code, _):
            LogEvent(level: .info, name: "transport_closed", fields: [.closeCode(code.rawValue)])
        case .failed(let error):
            LogEvent(
                level: .info, name: "transport_failed",
                fields: [.errorType(error.kind.name)])
        }
    }

    /// The hot path for a data frame given as validated UTF-8: one JSON parse outside the lock, a short locked
    /// lookup of the identifier's raw token (``RouteTable``), then the message is staged for its subscription
    /// (``DeliveryBatch``). Returns false when the frame needs the full decode (not a data frame, or an
    /// identifier token we do not know, which may be one escaped differently).
    private static func routeDataFrame(
        utf8: UnsafeBufferPointer<UInt8>, id: UInt64, batch: DeliveryBatch, core: Locked<Core>
    ) -> Bool {
        guard let (range, message, position) = CableProtocol.decodeDataFrame(validatedUTF8: utf8) else {
            return false
        }
        let token = UnsafeBufferPointer(rebasing: utf8[range])
        // The arrival time is noted once per read, at its end (noteFrames), not per message.
        let route = core.withLock { core -> TokenRoute in
            guard core.machine.isLive(id) else { return .notLive }
            return core.routes.lookup(token: token).map(TokenRoute.found) ?? .unknown
        }
        switch route {
        case .found(let box):
            batch.routedFrames = true
            box.stage(message, at: position, in: batch)
            return true
        case .notLive:
            return true
        case .unknown:
            return false  // the full decode logs an unknown identifier, or finds one escaped differently
        }
    }

    /// Notes that the live connection `id` received frames now (the stale watchdog's clock).
    private func noteFrames(id: UInt64) {
        core.withLock { _ = $0.machine.noteFrame(id: id, now: scheduler.now) }
    }

    private enum TokenRoute {
        case found(SubscriptionBox)
        case notLive
        case unknown
    }

    /// The hot path, after one JSON parse outside the lock: a short locked routing step, the push outside it.
    private func inbound(_ decoded: ServerFrame?, id: UInt64, batch: DeliveryBatch) {
        guard let frame = decoded else {
            core.withLock { _ = $0.machine.noteFrame(id: id, now: scheduler.now) }
            log.emit(LogEvent(level: .debug, name: "bad_frame", fields: []))
            return
        }
        switch frame {
        case .message(let identifier, let message, let position):
            let box = core.withLock { core -> SubscriptionBox? in
                guard core.machine.noteFrame(id: id, now: scheduler.now) else { return nil }
                return core.routes.resolve(identifier)
            }
            if let box {
                box.stage(message, at: position, in: batch)
            } else {
                log.emit(LogEvent(level: .debug, name: "unknown_identifier", fields: []))
            }
        case .ping:
            core.withLock { core in
                // The extended protocol's pong lets the server tell a dead client (AnyCable's pong_timeout).
                if core.machine.noteFrame(id: id, now: scheduler.now), core.extendedAttempt == id {
                    _ = Self.sendOnLiveSession(CableProtocol.pong, in: core)
                }
            }
        case .unknown:
            core.withLock { _ = $0.machine.noteFrame(id: id, now: scheduler.now) }
        case .historyConfirmed(let identifier), .historyRejected(let identifier):
            let confirmed = frame == .historyConfirmed(identifier: identifier)
            let (box, logs) = core.withLock { core -> (SubscriptionBox?, [LogEvent]) in
                guard core.machine.noteFrame(id: id, now: scheduler.now),
                    let box = core.routes.resolve(identifier)
                else { return (nil, []) }
                for action in core.registry.historyEnded(box.identifier, confirmed: confirmed) {
                    execute(action, in: &core)
                }
                defer { core.logs.removeAll() }
                return (box, core.logs)
            }
            emit(logs)
            // What waited for the replay goes out after it, in stream order.
            if let box {
                for message in subscriptions.historyEnded(box.serial) { batch.stage(message, for: box) }
            }
        case .welcome(let sessionID, let restored):
            core.withLock { core in
                guard core.machine.transportID == id else { return }
                // Only an extended session can be restored later (AnyCable caches no plain session).
                let extended = core.extendedAttempt == id
                core.restoreSessionID = extended ? sessionID : nil
                core.restoring = extended ? restored.map { (id, $0) } : nil
            }
            handle(.machine(.welcome(id: id)))
        case .disconnect(let reason, let reconnect):
            // A server disconnect ends the session: the next attempt starts a fresh one.
            core.withLock { $0.restoreSessionID = nil }
            handle(.machine(.serverDisconnect(id: id, reason: reason, reconnect: reconnect)))
        case .confirm(let identifier), .reject(let identifier):
            let logs = core.withLock { core -> [LogEvent] in
                guard core.machine.noteFrame(id: id, now: scheduler.now) else { return [] }
                // Our identifier for the server's spelling of it; an identifier no subscription has in any
                // spelling stays as the server spelled it (an orphan confirmation is unsubscribed that way).
                let known = core.routes.resolve(identifier)?.identifier ?? identifier
                let actions: [SubscriptionRegistry.Action]
                if case .confirm = frame {
                    actions = core.registry.confirmed(known)
                } else {
                    actions = core.registry.rejected(known)
                }
                for action in actions { execute(action, in: &core) }
                defer { core.logs.removeAll() }
                return core.logs
            }
            emit(logs)
        }
    }

    // MARK: API

    var isClosed: Bool { core.withLock { $0.closed } }

    /// A new handle on the subscription for `identifier`: on the live one if there is one (the server
    /// subscription is shared), else on a new one. Nil after ``close()``.
    func subscribe(identifier: String, historySince: Int? = nil) -> (box: SubscriptionBox, sink: HandleSink)? {
        core.withLock { core -> (SubscriptionBox, HandleSink)? in
            if core.closed { return nil }
            core.nextSinkID += 1
            if let entry = core.registry[identifier] {
                let box = entry.attachment
                let sink = HandleSink(
                    id: core.nextSinkID, bufferSize: box.bufferSize, state: entry.state,
                    reconnect: entry.lastReconnect)
                Self.replace(box, with: box.adding(sink), in: &core)
                return (box, sink)
            }
            let sink = HandleSink(id: core.nextSinkID, bufferSize: options.messageBufferSize, state: .pending)
            // The serial the registry will give it: boxes carry it for logs and handles.
            let box = SubscriptionBox(
                serial: core.registry.nextSerialToAssign, identifier: identifier, context: subscriptions,
                sinks: [sink])
            guard
                let (_, actions) = core.registry.add(
                    identifier, attachment: box, historySince: historySince, random: &core.random)
            else {
                return nil  // unreachable: the branch above shares a registered identifier
            }
            core.routes.set(box, for: identifier)
            for action in actions { execute(action, in: &core) }
            return (box, sink)
        }
    }

    /// Puts `new` wherever `old` is found: the box changes when a handle joins or leaves.
    private static func replace(_ old: SubscriptionBox, with new: SubscriptionBox, in core: inout Core) {
        core.registry.updateAttachment(of: old.identifier) { $0 = new }
        core.routes.replace(old, with: new)
    }

    /// One timer for every subscribe re-send: armed for `deadline`, or cancelled when there is none.
    private func armRetryTimer(for deadline: TimeInterval?, in core: inout Core) {
        core.retryTimer?.cancel()
        core.retryTimer = deadline.map { deadline in
            scheduler.schedule(after: deadline - scheduler.now) { [weak self] in self?.handle(.retriesDue) }
        }
    }

    /// Ends a box the registry has just removed: its routes and every handle. (Its pending re-send went with
    /// the registry's `cancelRetry`.)
    private func end(_ box: SubscriptionBox, in core: inout Core) {
        core.routes.remove(box.identifier, ifLeadingTo: box)
        subscriptions.forgetSequencer(of: box.serial)
        for sink in box.sinks { sink.end(callbacks: callbacks) }
    }

    /// Ends the handle `sink` of subscription `serial`; the last handle's release ends the server subscription.
    func release(identifier: String, serial: Int, sink: UInt64) {
        let logs = core.withLock { core -> [LogEvent] in
            guard let entry = core.registry[identifier], entry.serial == serial,
                let (rest, removed) = entry.attachment.removing(sink: sink)
            else { return [] }
            removed.end(callbacks: callbacks)
            guard rest.sinks.isEmpty else {
                Self.replace(entry.attachment, with: rest, in: &core)
                return []
            }
            for action in core.registry.remove(identifier) { execute(action, in: &core) }
            end(entry.attachment, in: &core)
            defer { core.logs.removeAll() }
            return core.logs
        }
        emit(logs)
    }

    func subscribesSent(identifier: String) -> Int {
        core.withLock { $0.registry.subscribesSent(identifier) }
    }

    /// Sends `action` with `data` if the subscription is confirmed on the live connection and `sink` shares it.
    ///
    /// - Throws: ``CableError`` `dataNotObject` or `unencodableData` (NaN or infinity in `data`).
    func perform(identifier: String, sink: UInt64, action: String, data: JSONValue) throws(CableError) -> Bool {
        let text = try CableProtocol.perform(identifier: identifier, action: action, data: data)
        return core.withLock { core -> Bool in
            guard core.registry.canPerform(identifier),
                core.registry[identifier]?.attachment.contains(sink: sink) == true
            else { return false }
            return Self.sendOnLiveSession(text, in: core)
        }
    }

    func close() {
        let logs = core.withLock { core -> [LogEvent] in
            guard !core.closed else { return [] }
            core.closed = true
            process(.machine(.close), in: &core)
            let boxes = core.registry.entries.values.map(\.attachment)
            for action in core.registry.removeAll() { execute(action, in: &core) }
            for box in boxes { end(box, in: &core) }
            core.hook?.cancel()
            core.hook = nil
            defer { core.logs.removeAll() }
            return core.logs
        }
        gateObservation.withLock { $0 }?.cancel()
        emit(logs)
    }
}
