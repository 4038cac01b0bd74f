import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything the engine decides with, under its one lock: the pure parts (``ConnectionMachine``,
/// ``SubscriptionTable``, ``SessionRestore``), and the FIFO of effects they asked for.
///
/// Its methods never call code the app provides: each turns one input into state changes and appends
/// ``EngineEffect``s to ``outbox``, which ``ClientEngine`` runs after unlocking.
struct EngineCore: Sendable {
    /// The values the engine publishes (in the FIFO's order, through ``EngineEffect/publish(_:)``).
    struct Outputs: Sendable {
        let state: MutableStateValue<CableState>
        let lastDisconnect: MutableStateValue<CableDisconnect?>
        let nextAttempt: MutableStateValue<CableRetry?>
        let session: MutableStateValue<CableSession?>
    }

    let url: URL
    let outputs: Outputs
    let hasRequestHook: Bool
    let hasUnauthorizedHook: Bool
    /// Whether the transport's connections answer WebSocket pings (``NativeTransport/pings``): a check's trusted
    /// probe.
    let transportPings: Bool
    var machine: ConnectionMachine
    var subscriptions: SubscriptionTable
    var random: InjectedRandom
    /// The prepared request of the attempt about to open its transport.
    var request: (id: UInt64, request: CableRequest)?
    /// AnyCable's extended protocol and session recovery (``CableWireProtocol/anyCableExtended``).
    var restore = SessionRestore()
    /// The network input's last path, to tell what its next one changed.
    var path: NetworkPath?
    /// The foreground input's last value.
    var inForeground: Bool?
    /// Whether the live session's welcome had a `sid` (AnyCable): its checks also send `{"command":"ping"}`.
    var commandProbes = false
    var closed = false
    /// The effects decided and not yet taken by a drainer, in decision order.
    var outbox: [EngineEffect] = []
    /// Whether a thread is running effects (only one does at a time: the FIFO's order is the run order).
    var draining = false

    // MARK: connection events

    /// Feeds `event` to the machine and turns its actions into effects (and follow-up events).
    mutating func decide(_ event: ClientEngine.Event, now: TimeInterval) {
        var queue = [event]
        while !queue.isEmpty {
            switch queue.removeFirst() {
            case .machine(let event):
                if case .disconnect = event { restore.handle(.appDisconnect) }
                for action in machine.handle(event, now: now, random: &random) {
                    apply(action, now: now, then: &queue)
                }
            case .requestPrepared(let id, let request):
                self.request = (id, request)
                queue.append(.machine(.requestReady(id: id)))
            case .retriesDue:
                apply(subscriptions.resendsDue(now: now, random: &random))
            case .networkPath(let path):
                guard let path else { continue }  // no answer yet: the network counts as usable
                let broken = path.mayHaveBroken(connectionsFrom: self.path)
                self.path = path
                let event = ConnectionMachine.Event.network(
                    usable: NetworkUsability().isUsable(path), mayHaveBroken: broken)
                queue.append(.machine(event))
            case .foreground(let foreground):
                if inForeground == false, foreground { queue.append(.machine(.check(.foreground))) }
                inForeground = foreground
            }
        }
    }

    private mutating func apply(
        _ action: ConnectionMachine.Action, now: TimeInterval, then queue: inout [ClientEngine.Event]
    ) {
        switch action {
        case .prepareRequest(let id):
            restore.handle(.attemptStarted(id: id))
            var request = CableRequest(url: url)
            // Before onRequest, so that an app can see it and remove it (say, when another user logs in).
            if let sessionID = restore.sessionIDToPresent { request.setHeader(ClientEngine.restoreHeader, sessionID) }
            if hasRequestHook {
                outbox.append(.runRequestHook(id: id, request))
            } else {
                outbox.append(.cancelHook)
                queue.append(.requestPrepared(id: id, request))
            }
        case .openTransport(let id):
            guard let request, request.id == id else { return }
            self.request = nil
            outbox.append(.connect(id: id, request.request))
        case .closeTransport(let id):
            outbox.append(.closeTransport(attempt: id))
        case .schedule(let kind, let id, let delay):
            outbox.append(.armTimer(kind, id: id, after: delay))
        case .cancelTimer(let kind):
            outbox.append(.cancelTimer(kind))
            if kind == .watchdog { outbox.append(.cancelHook) }
        case .probe(let id):
            if transportPings { outbox.append(.ping(attempt: id)) }
            if commandProbes { sendOnLiveSession(CableProtocol.ping) }
        case .callUnauthorized(let id):
            restore.handle(.credentialsRefresh)
            if hasUnauthorizedHook {
                outbox.append(.runUnauthorizedHook(id: id))
            } else {
                outbox.append(.cancelHook)
                queue.append(.machine(.unauthorizedAnswered(id: id, refreshed: false)))
            }
        case .sessionStarted(let id):
            startSession(id, now: now)
        case .sessionEnded:
            let value = outputs.session
            outbox.append(.publish { value.value = nil })
            apply(subscriptions.sessionEnded())
        case .publish(let state):
            let value = outputs.state
            outbox.append(.publish { value.value = state })
        case .lost(let disconnect):
            let value = outputs.lastDisconnect
            outbox.append(.publish { value.value = disconnect })
        case .waiting(let attempt, let delay):
            let retry = CableRetry(attempt: attempt, delay: delay, startsAt: Date(timeIntervalSinceNow: delay))
            let value = outputs.nextAttempt
            outbox.append(.publish { value.value = retry })
        case .notWaiting:
            let value = outputs.nextAttempt
            outbox.append(.publish { value.value = nil })
        case .log(let event):
            outbox.append(.log(event))
        }
    }

    private mutating func startSession(_ id: UInt64, now: TimeInterval) {
        let restored = restore.takeRestored(forSession: id)
        let session = CableSession(
            wireProtocol: restore.isExtended(id) ? .anyCableExtended : .actionCable, sessionID: restore.sessionID,
            restored: restored != nil)
        let value = outputs.session
        outbox.append(.publish { value.value = session })
        // On an extended session, a subscription that has seen stream positions asks for a replay.
        apply(
            subscriptions.sessionStarted(
                id, restored: restored, replays: restore.isExtended(id), now: now, random: &random))
    }

    mutating func apply(_ actions: [SubscriptionAction]) {
        for action in actions {
            switch action {
            case .send(let text):
                sendOnLiveSession(text)
            case .publish(let sinks, let state):
                outbox.append(.publish { for sink in sinks { sink.state.update { $0 = state } } })
            case .publishReconnect(let sinks, let outcome):
                outbox.append(.publish { for sink in sinks { sink.reconnect.update { $0 = outcome } } })
            case .publishPresence(let sinks, let members, let event, let answer):
                outbox.append(
                    .publish {
                        for sink in sinks { sink.presence?.publish(members: members, event: event, answer: answer) }
                    })
            case .armRetries(let deadline):
                outbox.append(.armRetries(deadline: deadline))
            case .end(let sinks):
                outbox.append(.end(sinks))
            case .log(let event):
                outbox.append(.log(event))
            }
        }
    }

    /// Sends `text` on the live session's connection, if there is a live session.
    mutating func sendOnLiveSession(_ text: String) {
        guard let live = machine.sessionID else { return }
        outbox.append(.send(text, attempt: live))
    }

    // MARK: frames

    /// A control frame (or a data frame whose token was not routed) arrived on attempt `id`.
    ///
    /// - Returns: the route a data frame or a history answer is for, if the frame was for a known subscription.
    mutating func received(_ frame: ServerFrame, on id: UInt64, now: TimeInterval) -> DeliveryRoute? {
        switch frame {
        case .message(let identifier, _, _):
            guard machine.noteFrame(id: id, now: now) else { return nil }
            guard let route = subscriptions.resolve(identifier) else {
                outbox.append(.log(LogEvent(level: .debug, name: "unknown_identifier", fields: [])))
                return nil
            }
            return route
        case .ping:
            // The extended protocol's pong lets the server tell a dead client (AnyCable's pong_timeout).
            if machine.notePing(id: id, now: now), restore.isExtended(id) { sendOnLiveSession(CableProtocol.pong) }
        case .pong:
            if machine.noteFrame(id: id, now: now) { decide(.machine(.probeAnswered(id: id)), now: now) }
        case .unknown:
            _ = machine.noteFrame(id: id, now: now)
        case .historyConfirmed(let identifier), .historyRejected(let identifier):
            guard machine.noteFrame(id: id, now: now) else { return nil }
            var actions: [SubscriptionAction] = []
            let confirmed = frame == .historyConfirmed(identifier: identifier)
            let route = subscriptions.historyEnded(identifier, confirmed: confirmed, into: &actions)
            apply(actions)
            return route
        case .welcome(let sessionID, let restored):
            guard machine.transportID == id else { return nil }
            restore.handle(.welcome(id: id, sessionID: sessionID, restored: restored))
            // A WebSocket ping is answered by every server; AnyCable (a `sid`: Rails sends none) also answers a
            // `{"command":"ping"}`, once it has shown it does (`.pong` above).
            commandProbes = sessionID != nil
            let probes: ConnectionMachine.Probe = transportPings ? .trusted : commandProbes ? .unproven : .none
            decide(.machine(.welcome(id: id, probes: probes)), now: now)
        case .disconnect(let reason, let reconnect):
            // A server disconnect ends the session: the next attempt starts a fresh one.
            restore.handle(.serverDisconnect)
            decide(.machine(.serverDisconnect(id: id, reason: reason, reconnect: reconnect)), now: now)
        case .confirm(let identifier):
            if machine.noteFrame(id: id, now: now) { apply(subscriptions.confirmed(identifier)) }
        case .reject(let identifier):
            if machine.noteFrame(id: id, now: now) { apply(subscriptions.rejected(identifier)) }
        case .presence(let identifier, let update):
            // Routed here, before any stream sequencing: presence frames carry no position.
            if machine.noteFrame(id: id, now: now) { apply(subscriptions.presenceReceived(identifier, update)) }
        }
        return nil
    }

    // MARK: subscriptions

    /// A new handle on the subscription for `identifier` (shared if there is one). Nil after close.
    mutating func subscribe(
        identifier: String, historySince: Int?, resumingFrom positions: [StreamPosition], bufferSize: Int,
        now: TimeInterval
    ) -> (route: DeliveryRoute, sink: HandleSink)? {
        if closed { return nil }
        let (route, sink, actions) = subscriptions.addHandle(
            to: identifier, historySince: historySince, resumingFrom: positions, bufferSize: bufferSize, now: now,
            random: &random)
        apply(actions)
        return (route, sink)
    }

    /// Ends the handle `sink` of subscription `serial`; the last handle's release ends the server subscription.
    mutating func release(identifier: String, serial: Int, sink: UInt64, now: TimeInterval) {
        apply(subscriptions.releaseHandle(sink, of: identifier, serial: serial, now: now))
    }

    /// Handle `sink` reads values (see ``SubscriptionTable/readValues(_:sink:)``).
    mutating func readValues(_ identifier: String, sink: UInt64) {
        subscriptions.readValues(identifier, sink: sink)
    }

    /// Handle `sink`'s messages with their positions (see ``SubscriptionTable/positionedMessages(_:sink:)``).
    mutating func positionedMessages(_ identifier: String, sink: UInt64) -> StreamStorage<PositionedMessage>? {
        subscriptions.positionedMessages(identifier, sink: sink)
    }

    /// Handle `sink`'s presence (see ``SubscriptionTable/presence(_:sink:)``).
    mutating func presence(_ identifier: String, sink: UInt64) -> PresenceSink? {
        subscriptions.presence(identifier, sink: sink)
    }

    /// The app joins `identifier`'s presence set as `member`, through handle `sink`.
    mutating func join(_ identifier: String, sink: UInt64, as member: PresenceMember) {
        guard subscriptions.holds(identifier, sink: sink) else { return }
        apply(subscriptions.join(identifier, sink: sink, as: member))
    }

    /// The app leaves `identifier`'s presence set, through handle `sink`.
    mutating func leave(_ identifier: String, sink: UInt64) {
        guard subscriptions.holds(identifier, sink: sink) else { return }
        apply(subscriptions.leave(identifier))
    }

    /// Asks for `identifier`'s presence set; false when the subscription is not live (nothing sent).
    mutating func requestPresence(_ identifier: String, sink: UInt64) -> Bool {
        var actions: [SubscriptionAction] = []
        let sent = subscriptions.requestPresence(identifier, sink: sink, into: &actions)
        apply(actions)
        return sent
    }

    /// The live session's attempt, if `identifier` may perform on it and `sink` shares it.
    func performTarget(identifier: String, sink: UInt64) -> UInt64? {
        subscriptions.canPerform(identifier, sink: sink) ? machine.sessionID : nil
    }

    /// Closes the client for good: the machine, then every subscription (nothing is sent for them).
    mutating func close(now: TimeInterval) {
        guard !closed else { return }
        closed = true
        // The handles end first: the session's end would otherwise take them back to pending on the way.
        apply(subscriptions.removeAll())
        decide(.machine(.close), now: now)
        outbox.append(.cancelHook)
    }
}

/// The app's random generator as a concrete type, for the pure parts' `inout some RandomNumberGenerator`
/// parameters (an existential composition with `Sendable` is not opened there in every build configuration).
struct InjectedRandom: RandomNumberGenerator, Sendable {
    var base: any RandomNumberGenerator & Sendable

    mutating func next() -> UInt64 { base.next() }
}
