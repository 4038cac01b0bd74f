import Dispatch
import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// The shell around the pure parts: decide under the lock, act after it.
///
/// Every input (an API call, a transport event, a timer, a hook's answer) takes the lock once, feeds the
/// ``EngineCore`` (the machines and the subscription registry), which appends the effects it decided to
/// one FIFO, and unlocks. The thread that finds the FIFO idle then runs its effects, in order, with no lock
/// of ours held (``drain(_:)``); a thread that finds another draining leaves its effects to it. So:
/// - nothing the app provides or injects (transport, connection, scheduler, hooks, callback queue, logger,
///   observers) runs under a lock of the client, and it may call back into the client from anywhere;
/// - the app's operations apply in call order: decisions are made in lock order, and the FIFO runs their
///   effects in that same order (the wire, the timers and the callback queue see them as decided);
/// - a stale effect is harmless: timers and hooks carry the attempt id the machine checks, and sends and
///   closes name the attempt whose connection they are for.
/// The data-frame path reads the routes under the lock but runs no effect (``ClientEngine+Inbound``).
final class ClientEngine: SubscriptionOwner, DeliveryTurns {
    /// The header that presents the previous session's id to AnyCable (extended protocol).
    static let restoreHeader = "X-AnyCable-Restore-SID"

    enum Event: Sendable {
        case machine(ConnectionMachine.Event)
        case requestPrepared(id: UInt64, CableRequest)
        /// The subscribe re-send timer fired.
        case retriesDue
        /// The network input reported `path`.
        case networkPath(NetworkPath?)
        /// The foreground input reported whether the app is in the foreground.
        case foreground(Bool)
    }

    /// The client's values as the app reads them.
    struct Views: Sendable {
        let state: StateValue<CableState>
        let lastDisconnect: StateValue<CableDisconnect?>
        let nextAttempt: StateValue<CableRetry?>
        let session: StateValue<CableSession?>
    }

    /// What the effects made: handles on injected things. Only a drainer changes them (one at a time);
    /// `perform` reads the connection.
    struct Resources: Sendable {
        var connection: (id: UInt64, connection: any WebSocketConnection)?
        var timers: [ConnectionMachine.TimerKind: any ScheduledWork] = [:]
        var retryTimer: (any ScheduledWork)?
        var hook: Task<Void, Never>?

        func connection(for attempt: UInt64) -> (any WebSocketConnection)? {
            connection.flatMap { $0.id == attempt ? $0.connection : nil }
        }
    }

    let url: URL
    let log: LogContext
    let options: CableOptions
    /// The transport, as the engine uses it: one of this package's, or any other wrapped once (``ForeignTransport``).
    let transport: any NativeTransport
    let scheduler: any CableScheduler
    let callbacks: CallbackExecutor
    let onRequest: (@Sendable (inout CableRequest) async throws -> Void)?
    let onUnauthorized: (@Sendable () async throws -> Bool)?
    let stateValue = MutableStateValue(CableState.disconnected)
    /// Every loss is published, even one equal to the last (two stale sessions in a row are two events).
    let lastDisconnectValue = MutableStateValue<CableDisconnect?>(nil, isDuplicate: { _, _ in false })
    let nextAttemptValue = MutableStateValue<CableRetry?>(nil)
    let sessionValue = MutableStateValue<CableSession?>(nil)
    /// The views of those values the app gets: their observers that name no queue run on the callback queue.
    let views: Views
    /// What this client's subscription handles and routes share.
    let subscriptions: SubscriptionContext
    let core: Locked<EngineCore>
    let resources = Locked(Resources())
    /// The observations of `canConnect` and the network and foreground inputs, cancelled by ``close()``.
    private let inputObservations = Locked<[SignalObservation]>([])

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
        self.transport = (transport as? any NativeTransport) ?? ForeignTransport(transport)
        self.scheduler = scheduler
        self.callbacks = callbacks
        self.onRequest = onRequest
        self.onUnauthorized = onUnauthorized
        let config = ConnectionMachine.Config(
            staleTimeout: options.staleTimeout,
            backoff: Backoff(min: options.minReconnectDelay, max: options.maxReconnectDelay),
            maxReconnectAttempts: options.maxReconnectAttempts
        )
        views = Views(
            state: stateValue.storage.view(keeping: nil, lane: callbacks.lane),
            lastDisconnect: lastDisconnectValue.storage.view(keeping: nil, lane: callbacks.lane),
            nextAttempt: nextAttemptValue.storage.view(keeping: nil, lane: callbacks.lane),
            session: sessionValue.storage.view(keeping: nil, lane: callbacks.lane))
        subscriptions = SubscriptionContext(
            bufferSize: options.messageBufferSize, log: log, callbacks: callbacks, coders: CableCoders(options.coding),
            scheduler: scheduler, maxOutgoingMessageSize: options.maxOutgoingMessageSize)
        core = Locked(
            EngineCore(
                url: url,
                outputs: .init(
                    state: stateValue, lastDisconnect: lastDisconnectValue, nextAttempt: nextAttemptValue,
                    session: sessionValue),
                hasRequestHook: onRequest != nil,
                hasUnauthorizedHook: onUnauthorized != nil,
                transportPings: self.transport.pings,
                machine: ConnectionMachine(config: config),
                subscriptions: SubscriptionTable(
                    retryDelays: options.subscribeRetryDelays, unsubscribeDelay: options.unsubscribeDelay,
                    context: subscriptions),
                random: InjectedRandom(base: random)
            ))
        subscriptions.attach(self)
    }

    /// Starts following the app's gate and the network and foreground inputs. Their values reach the engine on
    /// the thread that reports them, each as one input.
    func startInputs<Gate: Signal>(
        gate: Gate, network: StateValue<NetworkPath?>, foreground: StateValue<Bool>?
    ) where Gate.Element == Bool {
        var observations = [
            gate.removeDuplicates().observe { [weak self] open in self?.handle(.machine(.gate(open))) },
            network.observe { [weak self] path in self?.handle(.networkPath(path)) },
        ]
        if let foreground {
            observations.append(foreground.observe { [weak self] value in self?.handle(.foreground(value)) })
        }
        inputObservations.withLock { $0 = observations }
    }

    /// The app says the network changed: check the live connection.
    func networkChanged() {
        handle(.machine(.check(.network)))
    }

    // MARK: deciding and acting

    func handle(_ event: Event) {
        decide { core, now in core.decide(event, now: now) }
    }

    /// Runs `body` on the core under the lock (with the scheduler's time, read before locking: the scheduler
    /// is injected code), publishes the routes it changed for the I/O thread, then runs the effects it decided
    /// if no other thread is running effects.
    @discardableResult
    func decide<R>(_ body: (inout EngineCore, TimeInterval) -> R) -> R {
        let now = scheduler.now
        let (result, effects) = core.withLock { core in
            let result = body(&core, now)
            core.subscriptions.publishRoutes()
            return (result, Self.claim(&core))
        }
        drain(effects)
        return result
    }

    /// Takes the FIFO for this thread to run: nil when it is empty, or another thread is running it (and
    /// then runs what was just decided too).
    private static func claim(_ core: inout EngineCore) -> [EngineEffect]? {
        guard !core.draining, !core.outbox.isEmpty else { return nil }
        core.draining = true
        defer { core.outbox = [] }
        return core.outbox
    }

    /// Claims the FIFO's turn for `batch`'s hand-over, or queues it behind the effects another thread runs; see
    /// ``DeliveryTurns``. The frames' arrival is noted in the same critical section.
    func claimTurn(for batch: DeliveryBatch, notingFrames: Bool) -> Bool {
        let now = notingFrames ? scheduler.now : 0
        return core.withLock { core in
            if notingFrames { _ = core.machine.noteFrame(id: batch.connection, now: now) }
            guard batch.hasStaged else { return false }
            guard !core.draining else {
                core.outbox.append(.handOver(batch.takeStaged()))
                return false
            }
            core.draining = true
            return true
        }
    }

    /// Ends a turn claimed with ``claimTurn(for:notingFrames:)``: runs what was decided meanwhile, then releases it.
    func endTurn() {
        drain([])
    }

    /// Runs the claimed `effects`, then whatever was decided meanwhile, until the FIFO is empty; then releases
    /// it. Nothing to do for `nil` (not claimed).
    private func drain(_ claimed: [EngineEffect]?) {
        guard var effects = claimed else { return }
        while true {
            for effect in effects { run(effect) }
            effects = core.withLock { core in
                if core.outbox.isEmpty { core.draining = false }
                defer { core.outbox = [] }
                return core.outbox
            }
            if effects.isEmpty { return }
        }
    }

    private func run(_ effect: EngineEffect) {
        switch effect {
        case .connect(let id, let request):
            let connection = openTransport(request, id: id)
            resources.withLock { $0.connection = (id, connection) }
        case .send(let text, let attempt):
            resources.withLock { $0.connection(for: attempt) }?.send(text: text)
        case .closeTransport(let attempt):
            let open = resources.withLock { resources -> (any WebSocketConnection)? in
                guard let open = resources.connection(for: attempt) else { return nil }
                resources.connection = nil
                return open
            }
            open?.close(code: .normalClosure, reason: "")
        case .ping(let attempt):
            _ = (resources.withLock { $0.connection(for: attempt) } as? any PingingConnection)?.sendPing()
        case .armTimer(let kind, let id, let delay):
            let work = scheduler.schedule(after: delay) { [weak self] in
                self?.handle(.machine(.timerFired(kind, id: id)))
            }
            resources.withLock { $0.timers.updateValue(work, forKey: kind) }?.cancel()
        case .cancelTimer(let kind):
            resources.withLock { $0.timers.removeValue(forKey: kind) }?.cancel()
        case .armRetries(let deadline):
            let work = deadline.map { deadline in
                scheduler.schedule(after: deadline - scheduler.now) { [weak self] in self?.handle(.retriesDue) }
            }
            resources.withLock { resources in
                defer { resources.retryTimer = work }
                return resources.retryTimer
            }?.cancel()
        case .runRequestHook(let id, let request):
            startHook(requestHook(id: id, request: request))
        case .runUnauthorizedHook(let id):
            startHook(unauthorizedHook(id: id))
        case .cancelHook:
            startHook(nil)
        case .publish(let work):
            work()
        case .handOver(let staged):
            staged.handOver()
        case .end(let sinks):
            for sink in sinks { sink.end() }
        case .log(let event):
            log.emit(event)
        }
    }

    // MARK: API

    var isClosed: Bool { core.withLock { $0.closed } }

    /// A new handle on the subscription for `identifier`: on the live one if there is one (the server
    /// subscription is shared), else on a new one. Nil after ``close()``.
    func subscribe(
        identifier: String, historySince: Int? = nil, resumingFrom positions: [StreamPosition] = []
    ) -> (route: DeliveryRoute, sink: HandleSink)? {
        decide { core, now in
            core.subscribe(
                identifier: identifier, historySince: historySince, resumingFrom: positions,
                bufferSize: options.messageBufferSize, now: now)
        }
    }

    /// Ends the handle `sink` of subscription `serial`; the last handle's release ends the server subscription.
    func release(identifier: String, serial: Int, sink: UInt64) {
        decide { core, now in core.release(identifier: identifier, serial: serial, sink: sink, now: now) }
    }

    func subscribesSent(identifier: String) -> Int {
        core.withLock { $0.subscriptions.subscribesSent(identifier) }
    }

    /// Sends the command `text` (`perform`, `whisper`, presence) if the subscription is confirmed on the live
    /// connection and `sink` shares it.
    ///
    /// The command takes its place in the FIFO like any effect: when the FIFO is idle, this thread runs it at
    /// once and returns what the connection said; when another thread is running effects, the command is
    /// queued behind them for the live connection, and `true` is returned.
    func send(_ text: String, identifier: String, sink: UInt64) -> Bool {
        enum Turn {
            case refused
            case queued
            case mine(attempt: UInt64)
        }
        let turn = core.withLock { core -> Turn in
            guard let attempt = core.performTarget(identifier: identifier, sink: sink) else { return .refused }
            guard !core.draining else {
                core.outbox.append(.send(text, attempt: attempt))
                return .queued
            }
            core.draining = true  // the FIFO is empty: this command is its head
            return .mine(attempt: attempt)
        }
        switch turn {
        case .refused:
            return false
        case .queued:
            return true
        case .mine(let attempt):
            let sent = resources.withLock { $0.connection(for: attempt) }?.send(text: text) ?? false
            drain([])
            return sent
        }
    }

    /// Handle `sink`'s messages with their positions, routed from now on; nil when it has ended.
    func positionedMessages(identifier: String, sink: UInt64) -> StreamStorage<PositionedMessage>? {
        decide { core, _ in core.positionedMessages(identifier, sink: sink) }
    }

    /// Handle `sink` has a consumer of its untyped messages: its subscription's messages are parsed from now on.
    func readValues(identifier: String, sink: UInt64) {
        decide { core, _ in core.readValues(identifier, sink: sink) }
    }

    /// Handle `sink`'s presence, made on first use; nil when it has ended.
    func presence(identifier: String, sink: UInt64) -> PresenceSink? {
        decide { core, _ in core.presence(identifier, sink: sink) }
    }

    /// Joins `identifier`'s presence set as `member` through handle `sink` (see ``SubscriptionTable/join(_:as:)``).
    func join(identifier: String, sink: UInt64, as member: PresenceMember) {
        decide { core, _ in core.join(identifier, sink: sink, as: member) }
    }

    /// Leaves `identifier`'s presence set through handle `sink`.
    func leave(identifier: String, sink: UInt64) {
        decide { core, _ in core.leave(identifier, sink: sink) }
    }

    /// Asks for `identifier`'s presence set; false when the subscription is not live (nothing sent).
    func requestPresence(identifier: String, sink: UInt64) -> Bool {
        decide { core, _ in core.requestPresence(identifier, sink: sink) }
    }

    func close() {
        decide { core, now in core.close(now: now) }
        for observation in inputObservations.withLock({ $0 }) { observation.cancel() }
    }
}
