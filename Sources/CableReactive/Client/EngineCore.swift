import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// Everything the engine decides with, under its one lock: the pure parts (``ConnectionMachine``,
/// ``SubscriptionRegistry`` and its ``RouteTable``, ``SessionRestore``), and the FIFO of effects they asked for.
///
/// Its methods never call code the app provides: each turns one input into state changes and appends
/// ``EngineEffect``s to ``outbox``, which ``ClientEngine`` runs after unlocking.
struct EngineCore: Sendable {
    /// The values the engine publishes (on the callback queue, through ``EngineEffect/callback(_:)``).
    struct Outputs: Sendable {
        let state: MutableStateValue<CableState>
        let lastDisconnect: MutableStateValue<CableDisconnect?>
        let nextAttempt: MutableStateValue<CableRetry?>
    }

    let url: URL
    let outputs: Outputs
    /// What this client's subscription handles and routes share.
    let subscriptions: SubscriptionContext
    let hasRequestHook: Bool
    let hasUnauthorizedHook: Bool
    var machine: ConnectionMachine
    /// The subscriptions: each entry holds its state and, as its attachment, its box (handles and streams;
    /// replaced when a handle joins or leaves).
    var registry: SubscriptionRegistry<SubscriptionBox>
    /// The pending subscribe re-sends (identifier → the registry's generation), behind one timer.
    var retries = DeadlineQueue<String, UInt64>()
    var random: any RandomNumberGenerator & Sendable
    /// The prepared request of the attempt about to open its transport.
    var request: (id: UInt64, request: CableRequest)?
    var nextSinkID: UInt64 = 0
    /// The data-frame index over the registry's boxes (by identifier token, and server spellings): kept in
    /// step by `subscribe`, `replace(_:with:)` and `end(_:)` only.
    var routes = RouteTable()
    /// AnyCable's extended protocol and session recovery (``CableWireProtocol/anyCableExtended``).
    var restore = SessionRestore()
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
                let (due, next) = retries.fire(now: now)
                outbox.append(.armRetries(deadline: next))
                for (identifier, generation) in due {
                    apply(registry.retryFired(identifier, generation: generation, random: &random), now: now)
                }
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
            subscriptions.sessionEnded()
            apply(registry.sessionEnded(), now: now)
        case .publish(let state):
            let value = outputs.state
            outbox.append(.callback { value.value = state })
        case .lost(let disconnect):
            let value = outputs.lastDisconnect
            outbox.append(.callback { value.value = disconnect })
        case .waiting(let attempt, let delay):
            let retry = CableRetry(attempt: attempt, delay: delay, startsAt: Date(timeIntervalSinceNow: delay))
            let value = outputs.nextAttempt
            outbox.append(.callback { value.value = retry })
        case .notWaiting:
            let value = outputs.nextAttempt
            outbox.append(.callback { value.value = nil })
        case .log(let event):
            outbox.append(.log(event))
        }
    }

    private mutating func startSession(_ id: UInt64, now: TimeInterval) {
        // Our spelling of each restored identifier, whatever spelling the server wrote back.
        let restored = restore.takeRestored(forSession: id).map { restored in
            ServerFrame.Restored(
                identifiers: restored.identifiers.map { identifiers in
                    identifiers.map { routes.resolve($0)?.identifier ?? $0 }
                })
        }
        // On an extended session, a subscription that has seen stream positions asks for a replay.
        var replayable: Set<String> = []
        if restore.isExtended(id) {
            for (identifier, entry) in registry.entries where subscriptions.hasStreamPositions(entry.serial) {
                replayable.insert(identifier)
            }
        }
        apply(registry.sessionStarted(id, restored: restored, replayable: replayable, random: &random), now: now)
    }

    mutating func apply(_ actions: [SubscriptionAction], now: TimeInterval) {
        for action in actions { apply(action, now: now) }
    }

    private mutating func apply(_ action: SubscriptionAction, now: TimeInterval) {
        switch action {
        case .send(let text):
            sendOnLiveSession(text)
        case .publish(_, .unsubscribed):
            break  // the entry is gone; its handles were ended by whoever removed it (end(_:))
        case .publish(let identifier, let state):
            guard let sinks = registry[identifier]?.attachment.sinks else { return }
            outbox.append(.callback { for sink in sinks { sink.state.update { $0 = state } } })
        case .publishReconnect(let identifier, let outcome):
            guard let sinks = registry[identifier]?.attachment.sinks else { return }
            outbox.append(.callback { for sink in sinks { sink.reconnect.update { $0 = outcome } } })
        case .awaitHistory(let identifier):
            if let entry = registry[identifier] {
                subscriptions.withSequencer(of: entry.serial) { $0.historyRequested() }
            }
        case .requestHistory(let identifier):
            guard let box = registry[identifier]?.attachment else { return }
            let positions = subscriptions.withSequencer(of: box.serial) { sequencer in
                sequencer.historyRequested()
                return sequencer.positions
            }
            sendOnLiveSession(CableProtocol.history(identifier: identifier, since: positions))
        case .scheduleRetry(let identifier, let generation, let delay):
            if let deadline = retries.set(identifier, generation, at: now + delay) {
                outbox.append(.armRetries(deadline: deadline))
            }
        case .cancelRetry(let identifier):
            if retries.remove(identifier) { outbox.append(.armRetries(deadline: nil)) }
        case .log(let event):
            outbox.append(.log(event))
        }
    }

    /// Sends `text` on the live session's connection, if there is a live session.
    mutating func sendOnLiveSession(_ text: String) {
        guard let live = machine.sessionID else { return }
        outbox.append(.send(text, attempt: live))
    }

    // MARK: frames

    /// A control frame (or a data frame that took the full decode) arrived on attempt `id`.
    ///
    /// - Returns: the box a data frame or a history answer is for, if the frame was for a known subscription.
    mutating func received(_ frame: ServerFrame, on id: UInt64, now: TimeInterval) -> SubscriptionBox? {
        switch frame {
        case .message(let identifier, _, _):
            guard machine.noteFrame(id: id, now: now) else { return nil }
            guard let box = routes.resolve(identifier) else {
                outbox.append(.log(LogEvent(level: .debug, name: "unknown_identifier", fields: [])))
                return nil
            }
            return box
        case .ping:
            // The extended protocol's pong lets the server tell a dead client (AnyCable's pong_timeout).
            if machine.noteFrame(id: id, now: now), restore.isExtended(id) { sendOnLiveSession(CableProtocol.pong) }
        case .unknown:
            _ = machine.noteFrame(id: id, now: now)
        case .historyConfirmed(let identifier), .historyRejected(let identifier):
            guard machine.noteFrame(id: id, now: now), let box = routes.resolve(identifier) else { return nil }
            let confirmed = frame == .historyConfirmed(identifier: identifier)
            apply(registry.historyEnded(box.identifier, confirmed: confirmed), now: now)
            return box
        case .welcome(let sessionID, let restored):
            guard machine.transportID == id else { return nil }
            restore.handle(.welcome(id: id, sessionID: sessionID, restored: restored))
            decide(.machine(.welcome(id: id)), now: now)
        case .disconnect(let reason, let reconnect):
            // A server disconnect ends the session: the next attempt starts a fresh one.
            restore.handle(.serverDisconnect)
            decide(.machine(.serverDisconnect(id: id, reason: reason, reconnect: reconnect)), now: now)
        case .confirm(let identifier), .reject(let identifier):
            guard machine.noteFrame(id: id, now: now) else { return nil }
            // Our identifier for the server's spelling of it; an identifier no subscription has in any
            // spelling stays as the server spelled it (an orphan confirmation is unsubscribed that way).
            let known = routes.resolve(identifier)?.identifier ?? identifier
            if case .confirm = frame {
                apply(registry.confirmed(known), now: now)
            } else {
                apply(registry.rejected(known), now: now)
            }
        }
        return nil
    }

    // MARK: subscriptions

    /// A new handle on the subscription for `identifier`: on the registered one if there is one (the server
    /// subscription is shared), else on a new one. Nil after close.
    mutating func subscribe(
        identifier: String, historySince: Int?, bufferSize: Int, now: TimeInterval
    ) -> (box: SubscriptionBox, sink: HandleSink)? {
        if closed { return nil }
        nextSinkID += 1
        if let entry = registry[identifier] {
            let box = entry.attachment
            let sink = HandleSink(
                id: nextSinkID, bufferSize: box.bufferSize, state: entry.state, reconnect: entry.lastReconnect)
            replace(box, with: box.adding(sink))
            return (box, sink)
        }
        let sink = HandleSink(id: nextSinkID, bufferSize: bufferSize, state: .pending)
        // The serial the registry will give it: boxes carry it for logs and handles.
        let box = SubscriptionBox(
            serial: registry.nextSerialToAssign, identifier: identifier, context: subscriptions, sinks: [sink])
        guard let (_, actions) = registry.add(identifier, attachment: box, historySince: historySince, random: &random)
        else { return nil }  // unreachable: the branch above shares a registered identifier
        routes.set(box, for: identifier)
        apply(actions, now: now)
        return (box, sink)
    }

    /// Puts `new` wherever `old` is found: the box changes when a handle joins or leaves.
    private mutating func replace(_ old: SubscriptionBox, with new: SubscriptionBox) {
        registry.updateAttachment(of: old.identifier) { $0 = new }
        routes.replace(old, with: new)
    }

    /// Ends the handle `sink` of subscription `serial`; the last handle's release ends the server subscription.
    mutating func release(identifier: String, serial: Int, sink: UInt64, now: TimeInterval) {
        guard let entry = registry[identifier], entry.serial == serial,
            let (rest, removed) = entry.attachment.removing(sink: sink)
        else { return }
        outbox.append(.end([removed]))
        guard rest.sinks.isEmpty else { return replace(entry.attachment, with: rest) }
        apply(registry.remove(identifier), now: now)
        forget(entry.attachment)
    }

    /// Forgets a box the registry has just removed: its routes and its stream positions. (Its pending re-send
    /// went with the registry's `cancelRetry`; its handles are ended by the caller.)
    private mutating func forget(_ box: SubscriptionBox) {
        routes.remove(box.identifier, ifLeadingTo: box)
        subscriptions.forgetSequencer(of: box.serial)
    }

    /// The live session's attempt, if `identifier` may perform on it and `sink` shares it.
    func performTarget(identifier: String, sink: UInt64) -> UInt64? {
        guard registry.canPerform(identifier), registry[identifier]?.attachment.contains(sink: sink) == true
        else { return nil }
        return machine.sessionID
    }

    /// Closes the client for good: the machine, then every subscription (nothing is sent for them).
    mutating func close(now: TimeInterval) {
        guard !closed else { return }
        closed = true
        decide(.machine(.close), now: now)
        let boxes = registry.entries.values.map(\.attachment)
        apply(registry.removeAll(), now: now)
        for box in boxes { forget(box) }
        outbox.append(.end(boxes.flatMap(\.sinks)))
        outbox.append(.cancelHook)
    }
}
