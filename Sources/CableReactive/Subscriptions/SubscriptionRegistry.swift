#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// What ``SubscriptionRegistry`` asks its owner to do.
enum SubscriptionAction: Sendable, Equatable {
    case send(String)
    case publish(identifier: String, SubscriptionState)
    /// Publish what the last reconnect did to the subscription.
    case publishReconnect(identifier: String, SubscriptionReconnect)
    /// Ask the server to replay the subscription's streams since their last positions (AnyCable `history`).
    case requestHistory(identifier: String)
    /// A `subscribe` asking for history since a time went out: its replay is awaited.
    case awaitHistory(identifier: String)
    case scheduleRetry(identifier: String, generation: UInt64, after: TimeInterval)
    case cancelRetry(identifier: String)
    case log(LogEvent)
}

/// Every subscription of one client in one table, with its state machine: what to send, when to retry, what
/// state each subscription is in. One server subscription per identifier.
///
/// Each entry also carries its owner's `Attachment` (for the client: the subscription's handles and their
/// message streams, and its retry timer), so identifier, serial, state and delivery live in one entry and no
/// parallel index has to be kept in step. The machine never looks inside an attachment.
struct SubscriptionRegistry<Attachment: Sendable>: Sendable {
    typealias Action = SubscriptionAction

    struct Entry: Sendable {
        let serial: Int
        let identifier: String
        var attachment: Attachment
        var state = SubscriptionState.pending
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
    }

    /// The subscribe re-send schedule (``CableOptions/subscribeRetryDelays``).
    let retryDelays: [TimeInterval]
    private(set) var entries: [String: Entry] = [:]
    private(set) var session: UInt64?
    /// The session before the live one (or the last one, while none is live).
    private(set) var previousSession: UInt64?
    private var nextSerial = 0
    /// The serial that the next ``add(_:attachment:random:)`` assigns.
    var nextSerialToAssign: Int { nextSerial + 1 }
    private var nextGeneration: UInt64 = 0

    init(retryDelays: [TimeInterval]) {
        self.retryDelays = retryDelays
    }

    func contains(_ identifier: String) -> Bool { entries[identifier] != nil }

    subscript(identifier: String) -> Entry? { entries[identifier] }

    /// Changes the attachment of `identifier`'s entry, if there is one.
    mutating func updateAttachment(of identifier: String, _ body: (inout Attachment) -> Void) {
        guard var entry = entries[identifier] else { return }
        body(&entry.attachment)
        entries[identifier] = entry
    }

    /// How many `subscribe` commands for `identifier` went out on the live session (0 without one).
    func subscribesSent(_ identifier: String) -> Int {
        guard let session, let entry = entries[identifier], entry.sentOn == session else { return 0 }
        return entry.retries + 1
    }

    /// Whether `perform` may send for `identifier`: confirmed on the live session.
    func canPerform(_ identifier: String) -> Bool {
        guard let session, let entry = entries[identifier] else { return false }
        return entry.confirmedOn == session
    }

    /// Registers a subscription; sends `subscribe` at once if a session is live.
    ///
    /// - Returns: nil if `identifier` is already registered.
    mutating func add(
        _ identifier: String, attachment: Attachment, historySince: Int? = nil,
        random: inout some RandomNumberGenerator
    ) -> (serial: Int, [Action])? {
        guard entries[identifier] == nil else { return nil }
        nextSerial += 1
        var entry = Entry(serial: nextSerial, identifier: identifier, attachment: attachment)
        entry.historySince = historySince
        entries[identifier] = entry
        var actions: [Action] = []
        if session != nil { sendSubscribe(identifier, retry: 0, into: &actions, random: &random) }
        return (nextSerial, actions)
    }

    /// A session was welcomed: every subscription goes out on it, except those the server says it restored
    /// (AnyCable's extended protocol: `restored` lists them, or with no list, every one). Only a subscription
    /// confirmed on the previous session can be restored; any other is subscribed as usual. The subscriptions
    /// in `replayable` (those with stream positions, on a session that can replay) ask for a replay: at once
    /// when restored, after the confirmation when subscribed again.
    mutating func sessionStarted(
        _ id: UInt64, restored: ServerFrame.Restored? = nil, replayable: Set<String> = [],
        random: inout some RandomNumberGenerator
    ) -> [Action] {
        session = id
        let restoredIdentifiers = restored.map { $0.identifiers.map(Set.init) }
        var actions: [Action] = []
        for identifier in entries.keys.sorted(by: { (entries[$0]?.serial ?? 0) < (entries[$1]?.serial ?? 0) }) {
            guard let entry = entries[identifier] else { continue }
            let replays = replayable.contains(identifier)
            let wasConfirmed = previousSession != nil && entry.confirmedOn == previousSession
            if wasConfirmed, let restoredIdentifiers, restoredIdentifiers?.contains(identifier) ?? true {
                restore(identifier, replays: replays, into: &actions)
                continue
            }
            entries[identifier]?.replayOnConfirm = replays
            if entry.confirmations > 0 { reconnected(identifier, replays ? .recovering : .resubscribed, &actions) }
            sendSubscribe(identifier, retry: 0, into: &actions, random: &random)
        }
        return actions
    }

    /// The server kept `identifier`'s subscription across the reconnect: confirmed on the new session with no
    /// `subscribe` (so ``subscribesSent(_:)`` is 0), and the confirmation count stays.
    private mutating func restore(_ identifier: String, replays: Bool, into actions: inout [Action]) {
        guard var entry = entries[identifier] else { return }
        entry.confirmedOn = session
        entry.rejectedOn = nil
        entry.replayOnConfirm = false
        entry.state = .subscribed(confirmations: entry.confirmations)
        entries[identifier] = entry
        actions.append(.log(LogEvent(level: .info, name: "restored", fields: [.subscription(entry.serial)])))
        // The outcome first: an app that looks at it when the state changes sees this reconnect's.
        reconnected(identifier, replays ? .recovering : .restored, &actions)
        if replays { actions.append(.requestHistory(identifier: identifier)) }
        actions.append(.publish(identifier: identifier, entry.state))
    }

    private mutating func reconnected(
        _ identifier: String, _ outcome: SubscriptionReconnect, _ actions: inout [Action]
    ) {
        entries[identifier]?.lastReconnect = outcome
        actions.append(.publishReconnect(identifier: identifier, outcome))
    }

    /// The server answered `identifier`'s replay: every missed message was sent (`confirmed`), or none can be.
    mutating func historyEnded(_ identifier: String, confirmed: Bool) -> [Action] {
        guard let entry = entries[identifier], entry.lastReconnect == .recovering else { return [] }
        var actions: [Action] = [
            .log(
                LogEvent(
                    level: confirmed ? .info : .warn, name: confirmed ? "history_confirmed" : "history_rejected",
                    fields: [.subscription(entry.serial)]))
        ]
        reconnected(identifier, confirmed ? .recovered : .historyRejected, &actions)
        return actions
    }

    /// The live session ended: confirmed subscriptions go back to pending; retries stop.
    mutating func sessionEnded() -> [Action] {
        if session != nil { previousSession = session }
        session = nil
        var actions: [Action] = []
        for (identifier, entry) in entries {
            actions.append(.cancelRetry(identifier: identifier))
            if case .subscribed = entry.state {
                entries[identifier]?.state = .pending
                actions.append(.publish(identifier: entry.identifier, .pending))
            }
        }
        return actions
    }

    mutating func confirmed(_ identifier: String) -> [Action] {
        guard let session else { return [] }
        guard var entry = entries[identifier] else {
            // A confirmation nobody asked for (an unsubscribe the server applied before our subscribe, say):
            // tell the server to drop it.
            return [
                .log(LogEvent(level: .debug, name: "orphan_confirm", fields: [])),
                .send(subscribeCommand(identifier, unsubscribe: true)),
            ]
        }
        guard entry.confirmedOn != session else { return [] }
        entry.confirmedOn = session
        entry.rejectedOn = nil
        entry.confirmations += 1
        entry.state = .subscribed(confirmations: entry.confirmations)
        let replay = entry.replayOnConfirm
        entry.replayOnConfirm = false
        entry.historySince = nil
        entries[identifier] = entry
        return (replay ? [.requestHistory(identifier: identifier)] : []) + [
            .cancelRetry(identifier: identifier), .publish(identifier: entry.identifier, entry.state),
            .log(
                LogEvent(
                    level: .info, name: "subscribed",
                    fields: [.subscription(entry.serial), .count(entry.confirmations)])),
        ]
    }

    mutating func rejected(_ identifier: String) -> [Action] {
        guard let session, var entry = entries[identifier] else {
            return [.log(LogEvent(level: .debug, name: "unknown_reject", fields: []))]
        }
        guard entry.rejectedOn != session else { return [] }
        entry.rejectedOn = session
        entry.confirmedOn = nil
        entry.state = .rejected
        entries[identifier] = entry
        return [
            .cancelRetry(identifier: identifier), .publish(identifier: entry.identifier, .rejected),
            .log(LogEvent(level: .info, name: "rejected", fields: [.subscription(entry.serial)])),
        ]
    }

    /// A subscribe retry timer fired: re-send if the subscription is still unanswered on this session.
    mutating func retryFired(
        _ identifier: String,
        generation: UInt64,
        random: inout some RandomNumberGenerator
    ) -> [Action] {
        guard let session, let entry = entries[identifier], entry.retryGeneration == generation,
            entry.sentOn == session, entry.confirmedOn != session, entry.rejectedOn != session
        else { return [] }
        var actions: [Action] = [
            .log(
                LogEvent(
                    level: .debug, name: "subscribe_retry",
                    fields: [.subscription(entry.serial), .count(entry.retries + 1)]))
        ]
        sendSubscribe(identifier, retry: entry.retries + 1, into: &actions, random: &random)
        return actions
    }

    /// Removes a subscription for good; sends `unsubscribe` only if the live session has it (`subscribe` went
    /// out on it, or the server restored it).
    mutating func remove(_ identifier: String) -> [Action] {
        guard let entry = entries.removeValue(forKey: identifier) else { return [] }
        var actions: [Action] = [.cancelRetry(identifier: identifier)]
        if let session, entry.sentOn == session || entry.confirmedOn == session {
            actions.append(.send(subscribeCommand(identifier, unsubscribe: true)))
        }
        actions.append(.publish(identifier: entry.identifier, .unsubscribed))
        return actions
    }

    /// Removes every subscription (the client closed); nothing is sent.
    mutating func removeAll() -> [Action] {
        defer { entries.removeAll() }
        return entries.values.flatMap { entry in
            [Action.cancelRetry(identifier: entry.identifier), .publish(identifier: entry.identifier, .unsubscribed)]
        }
    }

    private mutating func sendSubscribe(
        _ identifier: String,
        retry: Int,
        into actions: inout [Action],
        random: inout some RandomNumberGenerator
    ) {
        guard var entry = entries[identifier], let session else { return }
        if entry.sentOn != session {
            entry.confirmedOn = nil
            entry.rejectedOn = nil
            if entry.state != .pending {
                entry.state = .pending
                actions.append(.publish(identifier: entry.identifier, .pending))
            }
        }
        nextGeneration += 1
        entry.sentOn = session
        entry.retries = retry
        entry.retryGeneration = nextGeneration
        entries[identifier] = entry
        if let since = entry.historySince {
            actions.append(.awaitHistory(identifier: identifier))
            actions.append(.send(CableProtocol.subscribe(identifier: identifier, historySince: since)))
        } else {
            actions.append(.send(subscribeCommand(identifier, unsubscribe: false)))
        }
        if let delay = Backoff.subscribeRetryDelay(retry: retry + 1, schedule: retryDelays, using: &random) {
            actions.append(.scheduleRetry(identifier: identifier, generation: nextGeneration, after: delay))
        }
    }

    private func subscribeCommand(_ identifier: String, unsubscribe: Bool) -> String {
        unsubscribe
            ? CableProtocol.unsubscribe(identifier: identifier) : CableProtocol.subscribe(identifier: identifier)
    }
}
