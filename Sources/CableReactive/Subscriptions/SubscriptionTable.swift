import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// What ``SubscriptionTable`` asks its owner to do.
enum SubscriptionAction: Sendable {
    case send(String)
    /// Publish `state` to these handles.
    case publish([HandleSink], SubscriptionState)
    /// Publish what the last reconnect did to the subscription to these handles.
    case publishReconnect([HandleSink], SubscriptionReconnect)
    /// Arm the one subscribe re-send timer for `deadline` (the table's clock), or cancel it (`nil`).
    case armRetries(deadline: TimeInterval?)
    /// Publish a presence change to these handles: the set (when given), an event, the answer to `info()`.
    case publishPresence(
        [HandleSink], members: [String: PresenceMember]??, event: PresenceEvent?, answer: PresenceWaiters.Answer?)
    /// End these handles for good (their subscription is gone, or they left it).
    case end([HandleSink])
    case log(LogEvent)
}

/// Every subscription of one client, one entry per server subscription (per identifier), with everything it
/// has: its identifier and the other spellings servers wrote back (aliases), its handles, the fields its
/// state is derived from, its subscribe re-send deadline, and its stream positions (kept in the client's
/// ``SubscriptionContext`` by serial, since the I/O thread sequences messages there without the engine's lock).
///
/// A pure value driven by the engine under its lock: events in, ``SubscriptionAction``s out. After a change
/// that moves a route, the owner calls ``publishRoutes()``, and the I/O thread routes data frames from the
/// published copy (``published``) without the engine's lock.
struct SubscriptionTable: Sendable {
    typealias Action = SubscriptionAction

    /// What the I/O thread routes with: the live session and the token index, as of the last publication.
    struct Routes: Sendable {
        var live: UInt64?
        var index = RouteIndex()
    }

    /// Spellings remembered per subscription beyond our own; a server that keeps inventing new ones still
    /// routes (through the canonical form), just without the fast path.
    static let maxAliases = 4

    private struct Entry: Sendable {
        var route: DeliveryRoute
        var confirmations = 0
        /// The session on which `subscribe` last went out.
        var sentOn: UInt64?
        var confirmedOn: UInt64?
        var rejectedOn: UInt64?
        var retries = 0
        var retryGeneration: UInt64 = 0
        /// What the last reconnect did to it; `nil` until a session after its first confirmation started.
        var lastReconnect: SubscriptionReconnect?
        /// Whether the replay is to be requested once the server confirms the new subscription.
        var replayOnConfirm = false
        /// The Unix time the first `subscribe` asks history since, until it is confirmed.
        var historySince: Int?
        /// Whether a replay was asked for on the live session (a `history` command, or a `subscribe` with
        /// history) and its answer, `confirm_history` or `reject_history`, has not come: the answer sets
        /// ``lastReconnect``, also on a first subscribe.
        var awaitingReplay = false
        /// The other spellings of the identifier that servers wrote back.
        var aliases: [String] = []
        /// The handles' joins of the presence set, oldest first: the subscription's join is the newest, kept
        /// across reconnects until the app leaves or the handles that joined are released.
        var joins: [Join] = []
        /// While no handle holds the subscription (``CableOptions/unsubscribeDelay``): the handle-to-be that
        /// keeps what arrives meanwhile, for the next handle on equal params to take over.
        var spare: HandleSink?
        /// The join the live session's server has (sent in the `subscribe` or as `join`).
        var serverPresence: PresenceMember?
        /// Whether the app keeps the presence set (it joined or asked for it): asked for on every session.
        var tracksMembers = false
        /// The presence set on the live session: from the last answer, with the events since; nil before one.
        var members: [String: PresenceMember]?

        var serial: Int { route.serial }
        var identifier: String { route.identifier }
        var sinks: [HandleSink] { route.sinks }
        /// What the app joined the presence set with.
        var presence: PresenceMember? { joins.last?.member }
    }

    /// One handle's join of a presence set.
    private struct Join: Sendable {
        let sink: UInt64
        let member: PresenceMember
    }

    /// The subscribe re-send schedule (``CableOptions/subscribeRetryDelays``).
    let retryDelays: [TimeInterval]
    /// How long a subscription stays on the server after its last handle goes (``CableOptions/unsubscribeDelay``).
    let unsubscribeDelay: TimeInterval
    let context: SubscriptionContext
    /// The routes as last published, for the I/O thread.
    let published = Locked(Routes())
    private var entries: [String: Entry] = [:]
    /// Each alias's identifier.
    private var aliasOf: [String: String] = [:]
    private var routes = Routes()
    private var routesChanged = false
    /// The pending subscribe re-sends and unsubscribes of lingering subscriptions (identifier → its
    /// generation): a subscription has one or the other.
    private var resends = DeadlineQueue<String, UInt64>()
    private(set) var session: UInt64?
    /// Whether the live session can replay streams (AnyCable's extended protocol).
    private var sessionReplays = false
    /// The session before the live one (or the last one, while none is live).
    private var previousSession: UInt64?
    private var nextSerial = 0
    private var nextGeneration: UInt64 = 0
    private var nextSinkID: UInt64 = 0

    init(retryDelays: [TimeInterval], unsubscribeDelay: TimeInterval = 0, context: SubscriptionContext) {
        self.retryDelays = retryDelays
        self.unsubscribeDelay = unsubscribeDelay
        self.context = context
    }

    // MARK: queries

    var count: Int { entries.count }
    var identifiers: [String] { entries.values.sorted { $0.serial < $1.serial }.map(\.identifier) }

    /// The state of `identifier`'s subscription, derived from the sessions it was confirmed and rejected on:
    /// nil when there is none (a handle sees ``SubscriptionState/unsubscribed``).
    func state(of identifier: String) -> SubscriptionState? { entries[identifier].map(state) }

    private func state(_ entry: Entry) -> SubscriptionState {
        if let session, entry.confirmedOn == session { return .subscribed(confirmations: entry.confirmations) }
        if entry.rejectedOn != nil { return .rejected }  // until a new session's subscribe
        return .pending
    }

    func lastReconnect(of identifier: String) -> SubscriptionReconnect? { entries[identifier]?.lastReconnect }

    /// How many `subscribe` commands for `identifier` went out on the live session (0 without one).
    func subscribesSent(_ identifier: String) -> Int {
        guard let session, let entry = entries[identifier], entry.sentOn == session else { return 0 }
        return entry.retries + 1
    }

    /// Whether handle `sink` shares `identifier`'s subscription.
    func holds(_ identifier: String, sink: UInt64) -> Bool {
        entries[identifier]?.route.contains(sink: sink) ?? false
    }

    /// Whether handle `sink` may perform on `identifier`: confirmed on the live session, and sharing it.
    func canPerform(_ identifier: String, sink: UInt64) -> Bool {
        guard let session, let entry = entries[identifier], entry.confirmedOn == session else { return false }
        return entry.route.contains(sink: sink)
    }

    /// The subscription for `identifier` as a server spelled it: by its exact text (ours, or an alias seen
    /// before), else by its canonical form, in which case that spelling is remembered as an alias (and routed).
    /// The canonical form costs a JSON parse, paid only on this miss path.
    mutating func resolve(_ spelling: String) -> DeliveryRoute? {
        if let entry = entries[spelling] ?? aliasOf[spelling].flatMap({ entries[$0] }) { return entry.route }
        guard let canonical = CableProtocol.canonicalIdentifier(spelling), var entry = entries[canonical] else {
            return nil
        }
        if entry.aliases.count < Self.maxAliases {
            entry.aliases.append(spelling)
            aliasOf[spelling] = canonical
            entries[canonical] = entry
            routes.index.set(entry.route, for: spelling)
            routesChanged = true
        }
        return entry.route
    }

    /// Publishes the routes for the I/O thread, if they changed since the last publication.
    mutating func publishRoutes() {
        guard routesChanged else { return }
        routesChanged = false
        let routes = routes
        published.withLock { $0 = routes }
    }

    // MARK: handles

    /// A new handle on `identifier`'s subscription: on the registered one (shared; a lingering one is taken
    /// over with what its spare kept, and nothing is sent), or on a new one, whose `subscribe` goes out at once
    /// if a session is live.
    mutating func addHandle(
        to identifier: String, historySince: Int?, resumingFrom positions: [StreamPosition] = [], bufferSize: Int,
        now: TimeInterval, random: inout some RandomNumberGenerator
    ) -> (route: DeliveryRoute, sink: HandleSink, [Action]) {
        nextSinkID += 1
        if var entry = entries[identifier], let spare = entry.spare {
            entry.spare = nil
            entries[identifier] = entry
            var actions: [Action] = [
                .log(LogEvent(level: .debug, name: "linger_adopted", fields: [.subscription(entry.serial)]))
            ]
            cancelResend(identifier, into: &actions)
            // Still unanswered: the re-sends the lingering stopped go on.
            if let session, entry.sentOn == session, entry.confirmedOn != session, entry.rejectedOn != session {
                scheduleResend(identifier, retry: entry.retries, now: now, into: &actions, random: &random)
            }
            return (entry.route, spare, actions)
        }
        if let entry = entries[identifier] {
            let sink = HandleSink(
                id: nextSinkID, bufferSize: bufferSize, state: state(entry), reconnect: entry.lastReconnect)
            setRoute(entry.route.adding(sink), of: identifier)
            return (entry.route, sink, [])
        }
        let sink = HandleSink(id: nextSinkID, bufferSize: bufferSize, state: .pending)
        nextSerial += 1
        let route = DeliveryRoute(serial: nextSerial, identifier: identifier, context: context, sinks: [sink])
        var entry = Entry(route: route)
        entry.historySince = historySince
        // Positions kept from an earlier launch: a session that can replay asks for what came after them.
        if !positions.isEmpty {
            context.withSequencer(of: route.serial) { $0.resume(from: positions) }
            entry.replayOnConfirm = session != nil && sessionReplays
        }
        entries[identifier] = entry
        routes.index.set(route, for: identifier)
        routesChanged = true
        var actions: [Action] = []
        if session != nil { sendSubscribe(identifier, retry: 0, now: now, into: &actions, random: &random) }
        return (route, sink, actions)
    }

    /// Ends handle `sink` of subscription `serial` (its presence join goes with it). The last handle's release
    /// ends the subscription: at once when the live session has no server subscription for it, else after
    /// ``unsubscribeDelay``, sending `unsubscribe` (see ``CableOptions/unsubscribeDelay``).
    mutating func releaseHandle(
        _ sink: UInt64, of identifier: String, serial: Int, now: TimeInterval
    ) -> [Action] {
        guard var entry = entries[identifier], entry.serial == serial,
            let (rest, removed) = entry.route.removing(sink: sink)
        else { return [] }
        var actions: [Action] = [.end([removed])]
        let joined = entry.joins.contains { $0.sink == sink }
        entry.joins.removeAll { $0.sink == sink }
        entries[identifier] = entry
        if rest.sinks.isEmpty {
            // The server subscription ends now (its `unsubscribe` drops the join too) or lingers.
            guard let session, entry.sentOn == session || entry.confirmedOn == session,
                entry.rejectedOn != session, unsubscribeDelay > 0
            else {
                end(identifier, into: &actions)
                return actions
            }
            linger(identifier, rest: rest, now: now, into: &actions)
        } else {
            setRoute(rest, of: identifier)
        }
        // Its join went: the subscription leaves, or joins as the newest other join says.
        if joined { syncJoin(identifier, into: &actions) }
        return actions
    }

    /// Keeps `identifier`'s subscription for ``unsubscribeDelay`` with no handle: a spare handle keeps what
    /// arrives, for a handle on equal params to take over (``addHandle(to:historySince:resumingFrom:bufferSize:now:random:)``).
    private mutating func linger(
        _ identifier: String, rest: DeliveryRoute, now: TimeInterval, into actions: inout [Action]
    ) {
        guard let entry = entries[identifier] else { return }
        nextSinkID += 1
        let spare = HandleSink(
            id: nextSinkID, bufferSize: context.bufferSize, state: state(entry), reconnect: entry.lastReconnect)
        nextGeneration += 1
        entries[identifier]?.spare = spare
        context.setHeir(spare, of: entry.serial)
        entries[identifier]?.retryGeneration = nextGeneration  // its re-sends stop: the linger's deadline replaces them
        setRoute(rest.adding(spare), of: identifier)
        if let deadline = resends.set(identifier, nextGeneration, at: now + unsubscribeDelay) {
            actions.append(.armRetries(deadline: deadline))
        }
    }

    /// Removes `identifier`'s subscription, ending its spare, and sends `unsubscribe` if the live session has
    /// a server subscription for it.
    private mutating func end(_ identifier: String, into actions: inout [Action]) {
        guard let entry = entries[identifier] else { return }
        if let spare = entry.spare { actions.append(.end([spare])) }
        remove(identifier, into: &actions)
        if let session, entry.sentOn == session || entry.confirmedOn == session {
            actions.append(.send(CableProtocol.unsubscribe(identifier: identifier)))
        }
    }

    /// Whether `identifier`'s subscription lingers: no handle holds it, and its `unsubscribe` waits.
    func isLingering(_ identifier: String) -> Bool { entries[identifier]?.spare != nil }

    /// Removes every subscription (the client closed); nothing is sent.
    mutating func removeAll() -> [Action] {
        var actions: [Action] = [.end(entries.values.flatMap(\.sinks))]
        for identifier in identifiers { remove(identifier, into: &actions) }
        return actions
    }

    private mutating func remove(_ identifier: String, into actions: inout [Action]) {
        guard let entry = entries.removeValue(forKey: identifier) else { return }
        for spelling in [identifier] + entry.aliases { routes.index.remove(spelling) }
        for alias in entry.aliases { aliasOf.removeValue(forKey: alias) }
        routesChanged = true
        context.forget(entry.serial)
        cancelResend(identifier, into: &actions)
    }

    /// Makes `route` the route of `identifier` and of each of its aliases.
    private mutating func setRoute(_ route: DeliveryRoute, of identifier: String) {
        guard var entry = entries[identifier] else { return }
        entry.route = route
        entries[identifier] = entry
        for spelling in [identifier] + entry.aliases { routes.index.set(route, for: spelling) }
        routesChanged = true
    }

    // MARK: re-sends

    /// After how many unanswered re-sends a subscription is logged as `subscribe_unanswered` (WARN), as the next
    /// one goes out.
    static let unansweredAfter = 2

    /// The re-send timer fired: every subscription still unanswered on this session whose time came is sent again.
    mutating func resendsDue(now: TimeInterval, random: inout some RandomNumberGenerator) -> [Action] {
        let (due, next) = resends.fire(now: now)
        var actions: [Action] = [.armRetries(deadline: next)]
        for (identifier, generation) in due {
            if let entry = entries[identifier], entry.spare != nil, entry.retryGeneration == generation {
                actions.append(
                    .log(LogEvent(level: .debug, name: "linger_ended", fields: [.subscription(entry.serial)])))
                end(identifier, into: &actions)
                continue
            }
            guard let session, let entry = entries[identifier], entry.retryGeneration == generation,
                entry.sentOn == session, entry.confirmedOn != session, entry.rejectedOn != session
            else { continue }
            actions.append(
                .log(
                    LogEvent(
                        level: .debug, name: "subscribe_retry",
                        fields: [.subscription(entry.serial), .count(entry.retries + 1)])))
            if entry.retries == Self.unansweredAfter {
                // Not a lost race any more (Rails drops a subscribe that overtakes its unsubscribe; one re-send
                // heals that): the server is not answering this channel.
                let channel = (try? JSONValue(parsing: identifier))?["channel"]?.stringValue ?? "?"
                actions.append(
                    .log(
                        LogEvent(
                            level: .warn, name: "subscribe_unanswered",
                            fields: [.subscription(entry.serial), .channel(channel), .count(entry.retries + 1)])))
            }
            sendSubscribe(identifier, retry: entry.retries + 1, now: now, into: &actions, random: &random)
        }
        return actions
    }

    private mutating func cancelResend(_ identifier: String, into actions: inout [Action]) {
        if resends.remove(identifier) { actions.append(.armRetries(deadline: nil)) }
    }

    mutating func sendSubscribe(
        _ identifier: String, retry: Int, now: TimeInterval, into actions: inout [Action],
        random: inout some RandomNumberGenerator
    ) {
        guard var entry = entries[identifier], let session else { return }
        let before = state(entry)
        if entry.sentOn != session {
            entry.confirmedOn = nil
            entry.rejectedOn = nil
        }
        nextGeneration += 1
        entry.sentOn = session
        entry.retries = retry
        entry.retryGeneration = nextGeneration
        entry.serverPresence = entry.presence  // the subscribe joins
        entries[identifier] = entry
        publishIfChanged(before, identifier, into: &actions)
        if entry.historySince != nil {
            context.withSequencer(of: entry.serial) { $0.historyRequested() }  // its replay is awaited
            entries[identifier]?.awaitingReplay = true
            if entries[identifier]?.lastReconnect == nil { reconnected(identifier, .recovering, &actions) }
        }
        actions.append(
            .send(
                CableProtocol.subscribe(
                    identifier: identifier, historySince: entry.historySince, presence: entry.presence)))
        scheduleResend(identifier, retry: retry, now: now, into: &actions, random: &random)
    }

    /// Arms the re-send after subscribe number `retry` + 1, if the schedule has one.
    private mutating func scheduleResend(
        _ identifier: String, retry: Int, now: TimeInterval, into actions: inout [Action],
        random: inout some RandomNumberGenerator
    ) {
        guard let generation = entries[identifier]?.retryGeneration,
            let delay = Backoff.subscribeRetryDelay(retry: retry + 1, schedule: retryDelays, using: &random),
            let deadline = resends.set(identifier, generation, at: now + delay)
        else { return }
        actions.append(.armRetries(deadline: deadline))
    }

    /// Publishes `identifier`'s state to its handles if it is no longer `before`.
    mutating func publishIfChanged(
        _ before: SubscriptionState, _ identifier: String, into actions: inout [Action]
    ) {
        guard let entry = entries[identifier] else { return }
        let after = state(entry)
        if after != before { actions.append(.publish(entry.sinks, after)) }
    }

    // MARK: sessions and answers

    /// A session was welcomed: every subscription goes out on it, except those the server says it restored
    /// (AnyCable's extended protocol: `restored` lists them, spelled as the server wrote them, or with no list,
    /// every one). The list is the server's word: a listed subscription is restored even if this table never
    /// saw it confirmed (a handle made while the connection was down, for params the server still has), since
    /// a `subscribe` for it would get no answer; without a list, only those confirmed on the previous session
    /// are. A listed identifier that no handle holds any more (released while the connection was down) gets an
    /// `unsubscribe`, or the server would stream it for good. On a session that can replay (`replays`), a
    /// subscription with stream positions asks for a replay: at once when restored, after the confirmation
    /// when subscribed again.
    mutating func sessionStarted(
        _ id: UInt64, restored: ServerFrame.Restored?, replays: Bool, now: TimeInterval,
        random: inout some RandomNumberGenerator
    ) -> [Action] {
        session = id
        sessionReplays = replays
        routes.live = id
        routesChanged = true
        let restoredIdentifiers = restored.map { restored in
            restored.identifiers.map { Set($0.map { resolve($0)?.identifier ?? $0 }) }
        }
        var actions: [Action] = []
        for identifier in identifiers {
            guard let entry = entries[identifier] else { continue }
            let replay = replays && context.hasStreamPositions(entry.serial)
            let wasConfirmed = previousSession != nil && entry.confirmedOn == previousSession
            if let restoredIdentifiers, restoredIdentifiers?.contains(identifier) ?? wasConfirmed {
                restore(identifier, replay: replay, into: &actions)
                continue
            }
            entries[identifier]?.replayOnConfirm = replay
            if entry.confirmations > 0 { reconnected(identifier, replay ? .recovering : .resubscribed, &actions) }
            sendSubscribe(identifier, retry: 0, now: now, into: &actions, random: &random)
        }
        for spelling in restored?.identifiers ?? [] where resolve(spelling) == nil {
            actions.append(.log(LogEvent(level: .info, name: "restored_unheld_unsubscribed", fields: [])))
            actions.append(.send(CableProtocol.unsubscribe(identifier: spelling)))
        }
        return actions
    }

    /// The server kept `identifier`'s subscription across the reconnect: confirmed on the new session with no
    /// `subscribe` (so ``subscribesSent(_:)`` is 0), and the confirmation count stays. One never confirmed
    /// before (adopted from the server's list) counts this as its first confirmation, and no reconnect.
    private mutating func restore(_ identifier: String, replay: Bool, into actions: inout [Action]) {
        guard var entry = entries[identifier] else { return }
        let before = state(entry)
        let first = entry.confirmations == 0
        entry.confirmedOn = session
        entry.rejectedOn = nil
        entry.replayOnConfirm = false
        if first { entry.confirmations = 1 }
        entries[identifier] = entry
        actions.append(.log(LogEvent(level: .info, name: "restored", fields: [.subscription(entry.serial)])))
        // The outcome first: an app that looks at it when the state changes sees this reconnect's.
        if !first { reconnected(identifier, replay ? .recovering : .restored, &actions) }
        if replay { requestHistory(identifier, into: &actions) }
        publishIfChanged(before, identifier, into: &actions)
        syncPresence(identifier, into: &actions)  // a restored session is in no presence set: join again
    }

    private mutating func reconnected(
        _ identifier: String, _ outcome: SubscriptionReconnect, _ actions: inout [Action]
    ) {
        guard var entry = entries[identifier] else { return }
        entry.lastReconnect = outcome
        entries[identifier] = entry
        actions.append(.publishReconnect(entry.sinks, outcome))
    }

    /// Asks the server to replay `identifier`'s streams after their last positions; live messages past a gap
    /// wait for the replay from now on.
    private mutating func requestHistory(_ identifier: String, into actions: inout [Action]) {
        guard let entry = entries[identifier] else { return }
        entries[identifier]?.awaitingReplay = true
        // A first subscribe resuming from kept positions has no reconnect yet: say that a replay is under way.
        if entry.lastReconnect == nil { reconnected(identifier, .recovering, &actions) }
        let positions = context.withSequencer(of: entry.serial) { sequencer in
            sequencer.historyRequested()
            return sequencer.positions
        }
        actions.append(.send(CableProtocol.history(identifier: identifier, since: positions)))
    }

    /// The server answered the replay of the subscription it spells `spelling`: every missed message was sent
    /// (`confirmed`), or none can be.
    ///
    /// - Returns: the subscription's route, for what waited for the replay; nil for an unknown one.
    mutating func historyEnded(_ spelling: String, confirmed: Bool, into actions: inout [Action]) -> DeliveryRoute? {
        guard let route = resolve(spelling) else { return nil }
        guard entries[route.identifier]?.awaitingReplay == true else { return route }
        entries[route.identifier]?.awaitingReplay = false
        // A replay that skipped a gap (at the bound of what waits, or because it left one) recovered only partly.
        let gapped = context.withSequencer(of: route.serial) { $0.takeReplayGap() }
        let outcome: SubscriptionReconnect =
            if !confirmed { .historyRejected } else if gapped { .recoveredWithGaps } else { .recovered }
        let name: StaticString =
            switch outcome {
            case .recovered: "history_confirmed"
            case .recoveredWithGaps: "history_gap"
            default: "history_rejected"
            }
        actions.append(
            .log(
                LogEvent(
                    level: outcome == .recovered ? .info : .warn, name: name, fields: [.subscription(route.serial)])
            ))
        reconnected(route.identifier, outcome, &actions)
        return route
    }

    /// The live session ended: confirmed subscriptions go back to pending; re-sends stop; no sequencer waits
    /// for a replay that session was to send.
    mutating func sessionEnded() -> [Action] {
        context.sessionEnded()
        let states = entries.mapValues(state)
        if session != nil { previousSession = session }
        session = nil
        routes.live = nil
        routesChanged = true
        var actions: [Action] = []
        for identifier in identifiers {
            cancelResend(identifier, into: &actions)
            // A lingering subscription went with the connection.
            if entries[identifier]?.spare != nil {
                end(identifier, into: &actions)
                continue
            }
            if let before = states[identifier] { publishIfChanged(before, identifier, into: &actions) }
            guard var entry = entries[identifier] else { continue }
            // The next session's server has no join, and missed presence events are not replayed: the set is
            // unknown until the next answer.
            let tracked = entry.tracksMembers || entry.members != nil
            entry.serverPresence = nil
            entry.members = nil
            entry.awaitingReplay = false  // that session's answer will not come; the next session asks again
            entries[identifier] = entry
            if tracked {
                actions.append(
                    .publishPresence(entry.sinks, members: .some(nil), event: nil, answer: .failure(.disconnected)))
            }
        }
        return actions
    }

    /// The server confirmed the subscription it spells `spelling`.
    mutating func confirmed(_ spelling: String) -> [Action] {
        guard session != nil else { return [] }
        guard let identifier = resolve(spelling)?.identifier, var entry = entries[identifier] else {
            // A confirmation nobody asked for (an unsubscribe the server applied before our subscribe, say):
            // tell the server to drop it, spelled as it was.
            return [
                .log(LogEvent(level: .debug, name: "orphan_confirm", fields: [])),
                .send(CableProtocol.unsubscribe(identifier: spelling)),
            ]
        }
        guard entry.confirmedOn != session else { return [] }
        let before = state(entry)
        entry.confirmedOn = session
        entry.rejectedOn = nil
        entry.confirmations += 1
        let replay = entry.replayOnConfirm
        entry.replayOnConfirm = false
        entry.historySince = nil
        entries[identifier] = entry
        var actions: [Action] = []
        if replay { requestHistory(identifier, into: &actions) }
        cancelResend(identifier, into: &actions)
        publishIfChanged(before, identifier, into: &actions)
        syncPresence(identifier, into: &actions)
        actions.append(
            .log(
                LogEvent(
                    level: .info, name: "subscribed",
                    fields: [.subscription(entry.serial), .count(entry.confirmations)]
                )))
        return actions
    }

    /// The server rejected the subscription it spells `spelling`.
    mutating func rejected(_ spelling: String) -> [Action] {
        guard let session, let identifier = resolve(spelling)?.identifier, var entry = entries[identifier] else {
            return [.log(LogEvent(level: .debug, name: "unknown_reject", fields: []))]
        }
        guard entry.rejectedOn != session else { return [] }
        let before = state(entry)
        entry.rejectedOn = session
        entry.confirmedOn = nil
        entries[identifier] = entry
        var actions: [Action] = []
        cancelResend(identifier, into: &actions)
        publishIfChanged(before, identifier, into: &actions)
        actions.append(.log(LogEvent(level: .info, name: "rejected", fields: [.subscription(entry.serial)])))
        return actions
    }

    // MARK: positions

    /// Handle `sink`'s messages with their positions, from now on: its stream, made (and routed) on first use.
    mutating func positionedMessages(_ identifier: String, sink: UInt64) -> StreamStorage<PositionedMessage>? {
        guard let entry = entries[identifier], let handle = entry.sinks.first(where: { $0.id == sink }) else {
            return nil
        }
        let (storage, made) = handle.makePositioned(bufferSize: context.bufferSize)
        if made { setRoute(entry.route.refreshed(), of: identifier) }
        return storage
    }

    /// Handle `sink` has a consumer of its untyped messages: its route parses messages into values from now on.
    mutating func readValues(_ identifier: String, sink: UInt64) {
        guard let entry = entries[identifier], let handle = entry.sinks.first(where: { $0.id == sink }) else { return }
        if handle.startReadingValues() { setRoute(entry.route.refreshed(), of: identifier) }
    }

    // MARK: presence

    /// Handle `sink`'s presence, made on first use with the set as the table knows it.
    mutating func presence(_ identifier: String, sink: UInt64) -> PresenceSink? {
        guard let entry = entries[identifier], let handle = entry.sinks.first(where: { $0.id == sink }) else {
            return nil
        }
        return handle.makePresence(members: entry.members)
    }

    /// Whether `identifier`'s subscription is confirmed on the live session.
    private func isLive(_ entry: Entry) -> Bool {
        session != nil && entry.confirmedOn == session
    }

    /// Handle `sink` joins `identifier`'s presence set as `member` (replacing the subscription's join, and the
    /// handle's earlier one). Sent at once when the subscription is live, else with the next `subscribe` or
    /// after the confirmation; from then on the set is kept. The join lasts until the app leaves or the
    /// handle is released.
    mutating func join(_ identifier: String, sink: UInt64, as member: PresenceMember) -> [Action] {
        guard var entry = entries[identifier] else { return [] }
        entry.joins.removeAll { $0.sink == sink }
        entry.joins.append(Join(sink: sink, member: member))
        entry.tracksMembers = true
        entries[identifier] = entry
        var actions: [Action] = []
        syncPresence(identifier, into: &actions)
        return actions
    }

    /// The app leaves `identifier`'s presence set, for every handle that joined: forgotten, so not joined again
    /// after a reconnect.
    mutating func leave(_ identifier: String) -> [Action] {
        guard var entry = entries[identifier], entry.presence != nil else { return [] }
        entry.joins = []
        entries[identifier] = entry
        var actions: [Action] = []
        syncPresence(identifier, into: &actions)
        return actions
    }

    /// Asks the server for `identifier`'s presence set, if the subscription is live and `sink` shares it;
    /// from then on the set is kept. False when nothing was sent.
    mutating func requestPresence(_ identifier: String, sink: UInt64, into actions: inout [Action]) -> Bool {
        guard holds(identifier, sink: sink), var entry = entries[identifier] else { return false }
        entry.tracksMembers = true
        entries[identifier] = entry
        guard isLive(entry) else { return false }
        actions.append(.send(CableProtocol.presenceRequest(identifier: identifier)))
        return true
    }

    /// Brings the server's presence for `identifier` in line with the app's on a live subscription (a
    /// different id leaves first: a connection holds one id per stream), and asks for the set when it is kept
    /// and unknown.
    private mutating func syncPresence(_ identifier: String, into actions: inout [Action]) {
        syncJoin(identifier, into: &actions)
        guard let entry = entries[identifier], isLive(entry) else { return }
        if entry.tracksMembers, entry.members == nil {
            actions.append(.send(CableProtocol.presenceRequest(identifier: identifier)))
        }
    }

    /// Brings the server's join for `identifier` in line with the app's on a live subscription.
    private mutating func syncJoin(_ identifier: String, into actions: inout [Action]) {
        guard var entry = entries[identifier], isLive(entry) else { return }
        if let held = entry.serverPresence, held.id != entry.presence?.id {
            actions.append(.send(CableProtocol.leave(identifier: identifier)))
            entry.serverPresence = nil
        }
        // The info was checked when the app joined: it encodes.
        if let member = entry.presence, member != entry.serverPresence,
            let join = try? CableProtocol.join(identifier: identifier, id: member.id, info: member.info)
        {
            actions.append(.send(join))
            entry.serverPresence = member
        }
        entries[identifier] = entry
    }

    /// A presence frame for the subscription the server spells `spelling`: an event updates the kept set and
    /// reaches the handles; an answer replaces the set and ends the waiting `info()` calls.
    mutating func presenceReceived(_ spelling: String, _ update: PresenceUpdate) -> [Action] {
        guard session != nil, let identifier = resolve(spelling)?.identifier, var entry = entries[identifier] else {
            return [.log(LogEvent(level: .debug, name: "unknown_identifier", fields: []))]
        }
        let action: Action
        switch update {
        case .joined(let member):
            if entry.members != nil { entry.members?[member.id] = member }
            action = .publishPresence(
                entry.sinks, members: entry.members.map { .some($0) }, event: .joined(member), answer: nil)
        case .left(let id):
            entry.members?[id] = nil
            action = .publishPresence(
                entry.sinks, members: entry.members.map { .some($0) }, event: .left(id: id), answer: nil)
        case .info(let records):
            let members = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
            entry.members = members
            action = .publishPresence(entry.sinks, members: .some(members), event: nil, answer: .success(members))
        case .error:
            action = .publishPresence(entry.sinks, members: nil, event: nil, answer: .failure(.serverError))
        case .unknown:
            return [.log(LogEvent(level: .debug, name: "presence_unknown", fields: [.subscription(entry.serial)]))]
        }
        entries[identifier] = entry
        return [action]
    }
}
