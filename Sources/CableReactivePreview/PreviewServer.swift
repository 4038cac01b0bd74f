import CableReactive
import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// A ``CablePreview``'s Action Cable server, as the client's ``WebSocketTransport``: no socket, no thread, no
/// timer of its own. It answers from a script and queues every event it sends on the preview's
/// ``PreviewScheduler`` (the same FIFO as the client's callbacks), never delivering one inside a call.
///
/// Why queued: the client calls ``connect(request:protocols:handler:)``, ``WebSocketConnection/send(text:)`` and
/// ``WebSocketConnection/close(code:reason:)`` under its lock, and handles every event under that same lock; an
/// event delivered from inside one of those calls would take the lock again on the same thread. Here those
/// calls only decide (under this server's lock, which is never held while anything else runs) and queue;
/// the scheduler's drain delivers later, on the main actor, holding no lock.
///
/// The transport's contract, kept per connection: events are delivered serially, in the order they were
/// queued (one FIFO, drained by one thread, never re-entrantly); `.opened` or `.closed` comes first; `.closed`
/// comes exactly once and last (a connection's entry is removed when it is delivered, and every event queued
/// for it later is discarded); the handler is released then.
final class PreviewServer: WebSocketTransport, NativeTransport {
    /// What the server does, fixed at init.
    struct Script: Sendable {
        var channels: [String: CablePreview.Channel]
        var otherChannels: CablePreview.Channel
        var rule: (@Sendable (JSONValue) -> CablePreview.Channel?)?

        func channel(for params: JSONValue) -> CablePreview.Channel {
            if let rule, let channel = rule(params) { return channel }
            return params["channel"]?.stringValue.flatMap { channels[$0] } ?? otherChannels
        }
    }

    private enum Phase {
        /// Queued `.opened` not delivered yet.
        case connecting
        /// `.opened` delivered: frames flow both ways.
        case open
        /// The client closed it: nothing but the `.closed` queued for it is delivered.
        case closing
    }

    private struct Subscription {
        let params: JSONValue
        let channel: CablePreview.Channel
    }

    private struct Entry {
        var phase = Phase.connecting
        var handler: @Sendable (WebSocketEvent) -> Void
        /// The subscriptions confirmed on this connection, by identifier.
        var subscriptions: [String: Subscription] = [:]
        var pings: (any ScheduledWork)?
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        /// The newest connection: the one the server's own actions (broadcasts, drops) apply to.
        var current: UInt64?
        var nextID: UInt64 = 0
        var performed: [CablePreview.Performed] = []
        var acceptsConnections = true
    }

    /// How often the server pings an open connection, in virtual time (Rails: every 3 s).
    static let pingInterval: TimeInterval = 3

    let script: Script
    let scheduler: PreviewScheduler
    private let state = Locked(State())

    init(script: Script, scheduler: PreviewScheduler) {
        self.script = script
        self.scheduler = scheduler
    }

    var performed: [CablePreview.Performed] { state.withLock { $0.performed } }

    var acceptsConnections: Bool {
        get { state.withLock { $0.acceptsConnections } }
        set { state.withLock { $0.acceptsConnections = newValue } }
    }

    // MARK: the transport

    /// The client's way in: `.text` events feed its receiver; `send` and `close` only queue, so they may come
    /// from inside a delivery.
    func connect(
        request: CableRequest, protocols: [String], receiver: TextReceiver,
        handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection {
        connect(request: request, protocols: protocols, handler: receiver.adapting(handler))
    }

    func connect(
        request: CableRequest,
        protocols: [String],
        handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection {
        let chosen = protocols.contains(CableWireProtocol.actionCable.name) ? CableWireProtocol.actionCable.name : nil
        let (id, accepted) = state.withLock { state -> (UInt64, Bool) in
            state.nextID += 1
            state.entries[state.nextID] = Entry(handler: handler)
            state.current = state.nextID
            return (state.nextID, state.acceptsConnections)
        }
        if accepted {
            queue([.opened(protocol: chosen), .text(#"{"type":"welcome"}"#)], to: id)
        } else {
            queue(
                [.closed(.failed(WebSocketError(.connectionRefused, detail: "the preview refuses connections")))],
                to: id)
        }
        return Connection(server: self, id: id)
    }

    /// What the client sent on connection `id`; false unless it is open. Runs under the client's lock: it
    /// records a perform at once (so a test sees it as soon as `perform` returns) and queues the answer, which
    /// runs the script (app code) in the drain, with no lock held.
    fileprivate func received(_ text: String, on id: UInt64) -> Bool {
        let command = try? JSONValue(parsing: text)
        let name = command?["command"]?.stringValue
        let identifier = command?["identifier"]?.stringValue
        let params = identifier.flatMap { try? JSONValue(parsing: $0) }
        var performed: (action: String, data: JSONValue)?
        if name == "message", let text = command?["data"]?.stringValue,
            case .object(var members)? = try? JSONValue(parsing: text),
            let action = members.removeValue(forKey: "action")?.stringValue
        {
            performed = (action, .object(members))
        }
        let open = state.withLock { state -> Bool in
            guard state.entries[id]?.phase == .open else { return false }
            if let performed, let params {
                state.performed.append(
                    CablePreview.Performed(
                        channel: params["channel"]?.stringValue ?? "", params: params, action: performed.action,
                        data: performed.data))
            }
            return true
        }
        guard open, let identifier, let params else { return open }  // not a command the preview answers
        switch name {
        case "subscribe":
            scheduler.perform { [self] in answerSubscribe(identifier, params: params, on: id) }
        case "unsubscribe":
            scheduler.perform { [self] in
                state.withLock { _ = $0.entries[id]?.subscriptions.removeValue(forKey: identifier) }
            }
        case "message":
            guard let performed else { break }
            scheduler.perform { [self] in answerPerform(performed.action, performed.data, identifier, on: id) }
        default:
            break  // history, pong: the preview speaks plain Action Cable
        }
        return true
    }

    /// Answers a subscribe, in its turn: the script says confirm (then the channel's messages), reject, or
    /// nothing. A repeated subscribe on one connection is not answered again (Rails logs it and sends nothing).
    private func answerSubscribe(_ identifier: String, params: JSONValue, on id: UInt64) {
        guard state.withLock({ $0.entries[id].map { $0.subscriptions[identifier] == nil } ?? false }) else { return }
        let channel = script.channel(for: params)  // app code: outside the lock
        let events = state.withLock { state -> [WebSocketEvent] in
            guard state.entries[id]?.subscriptions[identifier] == nil else { return [] }
            switch channel.answer {
            case .confirm:
                state.entries[id]?.subscriptions[identifier] = Subscription(params: params, channel: channel)
                let frames =
                    [Self.frame(["identifier": .string(identifier), "type": "confirm_subscription"])]
                    + channel.messages.map { Self.frame(["identifier": .string(identifier), "message": $0]) }
                return frames.compactMap { $0 }.map(WebSocketEvent.text)
            case .reject:
                let frame = Self.frame(["identifier": .string(identifier), "type": "reject_subscription"])
                return frame.map { [.text($0)] } ?? []
            case .unanswered:
                return []
            }
        }
        deliver(events, to: id)
    }

    /// Answers a perform, in its turn, with the channel's reply for `action`, if it has one and is still
    /// subscribed on connection `id`.
    private func answerPerform(_ action: String, _ data: JSONValue, _ identifier: String, on id: UInt64) {
        guard let reply = state.withLock({ $0.entries[id]?.subscriptions[identifier]?.channel.replies[action] }),
            let message = reply(data),  // app code: outside the lock
            let frame = Self.frame(["identifier": .string(identifier), "message": message])
        else { return }
        deliver([.text(frame)], to: id)
    }

    /// The client closes connection `id`: what was queued for it is discarded, then `.closed` with `code`.
    fileprivate func closed(_ id: UInt64, code: WebSocketCloseCode, reason: String) {
        state.withLock { state in
            guard let phase = state.entries[id]?.phase, phase != .closing else { return }
            state.entries[id]?.phase = .closing
            queue([.closed(.closed(code: code, reason: reason))], to: id)
        }
    }

    // MARK: the server's own actions, each in its turn

    /// Queues `message` for every subscription that `matches` on the connection that is open when its turn
    /// comes.
    func broadcast(_ message: JSONValue, where matches: @escaping @Sendable (JSONValue) -> Bool) {
        scheduler.perform { [self] in
            guard
                let (id, subscriptions) = state.withLock({ state -> (UInt64, [String: Subscription])? in
                    guard let id = state.current, let entry = state.entries[id], entry.phase == .open else {
                        return nil
                    }
                    return (id, entry.subscriptions)
                })
            else { return }
            let identifiers = subscriptions.filter { matches($0.value.params) }.keys.sorted()
            let frames = identifiers.compactMap { Self.frame(["identifier": .string($0), "message": message]) }
            deliver(frames.map(WebSocketEvent.text), to: id)
        }
    }

    /// Queues `events` (frames, then the end of the connection) for the connection open when their turn comes.
    func end(with events: [WebSocketEvent]) {
        scheduler.perform { [self] in
            guard
                let id = state.withLock({ state -> UInt64? in
                    guard let id = state.current, state.entries[id]?.phase == .open else { return nil }
                    return id
                })
            else { return }
            deliver(events, to: id)
        }
    }

    private func ping(_ id: UInt64) {
        let now = Int(scheduler.now)
        state.withLock { state in
            guard state.entries[id]?.phase == .open else { return }
            queue([.text(#"{"type":"ping","message":\#(now)}"#)], to: id)
            state.entries[id]?.pings = schedulePing(id)
        }
    }

    private func schedulePing(_ id: UInt64) -> any ScheduledWork {
        scheduler.schedule(after: Self.pingInterval) { [weak self] in self?.ping(id) }
    }

    // MARK: delivery

    /// Queues `events` for connection `id`, behind everything queued before.
    private func queue(_ events: [WebSocketEvent], to id: UInt64) {
        guard !events.isEmpty else { return }
        scheduler.perform { [self] in deliver(events, to: id) }
    }

    /// Delivers `events` to connection `id`'s handler, one by one, with no lock held; each is checked against the
    /// connection's phase when its turn comes. Runs only in the scheduler's drain.
    private func deliver(_ events: [WebSocketEvent], to id: UInt64) {
        for event in events {
            guard let handler = state.withLock({ admit(event, to: id, in: &$0) }) else { continue }
            handler(event)
        }
    }

    /// The handler to deliver `event` to, if connection `id` may receive it now; moves the connection on.
    private func admit(
        _ event: WebSocketEvent, to id: UInt64, in state: inout State
    ) -> (@Sendable (WebSocketEvent) -> Void)? {
        guard let entry = state.entries[id] else { return nil }  // `.closed` was delivered
        switch event {
        case .opened:
            guard entry.phase == .connecting else { return nil }
            state.entries[id]?.phase = .open
            state.entries[id]?.pings = schedulePing(id)
        case .text:
            guard entry.phase == .open else { return nil }
        case .closed:
            entry.pings?.cancel()
            state.entries[id] = nil
            if state.current == id { state.current = nil }
        }
        return entry.handler
    }

    private static func frame(_ value: JSONValue) -> String? {
        try? value.jsonText()  // nil only for a scripted message holding NaN or infinity
    }

    /// One preview connection: a name for the server's entry.
    private final class Connection: WebSocketConnection {
        let server: PreviewServer
        let id: UInt64

        init(server: PreviewServer, id: UInt64) {
            self.server = server
            self.id = id
        }

        func send(text: String) -> Bool {
            server.received(text, on: id)
        }

        func close(code: WebSocketCloseCode, reason: String) {
            server.closed(id, code: code, reason: reason)
        }
    }
}
