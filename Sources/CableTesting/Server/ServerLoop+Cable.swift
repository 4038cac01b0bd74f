import CableReactive
import Foundation

/// The protocol side of the server thread: the HTTP upgrade, WebSocket frames and Action Cable commands.
///
/// Bad input never traps. The rules: a malformed or oversized request head gets 400 or 431 and the
/// connection closes; a WebSocket framing violation gets a close frame with its code (1002 protocol error,
/// 1003 binary data, 1007 bad UTF-8, 1009 too big) and the connection closes without waiting for the
/// client; anything wrong inside a well-formed text message (bad JSON, unknown command or identifier) is
/// recorded and otherwise ignored, as Rails does.
extension ServerLoop {
    func received(_ bytes: ArraySlice<UInt8>, on connection: ServerConnection) {
        switch connection.phase {
        case .handshake: readHead(bytes, on: connection)
        case .open, .closing: readFrames(bytes, on: connection)
        case .finishing, .stalled, .closed: break  // discarded
        }
    }

    // MARK: HTTP upgrade

    private func readHead(_ bytes: ArraySlice<UInt8>, on connection: ServerConnection) {
        let searchFrom = max(0, connection.head.count - 3)
        connection.head.append(contentsOf: bytes)
        guard let end = HTTPRequestHead.findTerminator(in: connection.head, from: searchFrom) else {
            if connection.head.count > options.maxRequestHeadSize { answer(431, on: connection) }
            return
        }
        guard end.lowerBound <= options.maxRequestHeadSize else { return answer(431, on: connection) }
        let rest = connection.head[end.upperBound...]
        defer { connection.head = [] }
        guard let head = HTTPRequestHead.parse(connection.head[..<end.lowerBound]) else {
            return answer(400, on: connection)
        }
        let parts = head.target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var request = Server.Request(
            connection: connection.id, method: head.method, target: head.target, path: String(parts[0]),
            query: parts.count > 1 ? String(parts[1]) : nil, headers: head.headers, status: 0)
        let decision: Server.ConnectionDecision
        if !head.isWebSocketUpgrade || request.path != options.path {
            decision = .reject(status: 404)
        } else if head.validKey == nil {
            decision = .reject(status: 400)
        } else {
            let rule = core.rules.withLock { $0.connectionRule }
            decision = rule(request)
        }
        switch decision {
        case .reject(let status):
            request.status = (200...599).contains(status) && status != 101 ? status : 500
            remember(request)
            answer(request.status, on: connection)
        case .accept, .disconnect:
            request.status = 101
            remember(request)
            upgrade(connection, request: request, head: head, decision: decision)
            if !rest.isEmpty { readFrames(rest, on: connection) }
        }
    }

    /// Answers with an HTTP error and closes once it is written.
    private func answer(_ status: Int, on connection: ServerConnection) {
        connection.head = []
        connection.enqueue(HTTPResponse.error(status: status))
        connection.finish(deadline: Socket.now() + nanoseconds(options.closeTimeout))
    }

    private func upgrade(
        _ connection: ServerConnection, request: Server.Request, head: HTTPRequestHead,
        decision: Server.ConnectionDecision
    ) {
        let offered = head.list("Sec-WebSocket-Protocol")
        let extended = CableWireProtocol.anyCableExtended.name
        let known = options.subprotocols + (streamHistory != nil ? [extended] : [])
        let chosen = offered.first { known.contains($0) }
        connection.request = request
        connection.phase = .open
        connection.deadline = nil
        connection.isExtended = chosen == extended && streamHistory != nil
        // The header wins over the query parameter, even when its session is unknown (AnyCable's rule).
        if connection.isExtended, let previous = request.header("X-AnyCable-Restore-SID") ?? request.queryValue("sid"),
            let subscriptions = streamHistory?.restorable(previous, now: Socket.now())
        {
            connection.subscriptions = subscriptions
            connection.restoredIdentifiers = subscriptions.map(\.identifier)
        }
        send(bytes: HTTPResponse.switching(key: head.validKey ?? "", subprotocol: chosen), to: connection)
        if case .disconnect(let reason, let reconnect) = decision {
            return disconnect(connection, reason: reason, reconnect: reconnect)
        }
        switch core.rules.withLock({ $0.welcome }) {
        case .immediately: sendWelcome(connection)
        case .after(let delay): connection.welcomeAt = Socket.now() + nanoseconds(delay)
        case .never: break
        }
    }

    // MARK: WebSocket frames

    private func readFrames(_ bytes: ArraySlice<UInt8>, on connection: ServerConnection) {
        var input = bytes
        while connection.phase == .open || connection.phase == .closing {
            let output: MessageAssembler.Output?
            do {
                guard let frame = try connection.parser.parse(&input) else { return }
                output = try connection.assembler.push(frame)
            } catch {
                return fail(connection, code: error.closeCode)
            }
            switch output {
            case nil, .pong?:
                break
            case .text(let payload, _)?:
                guard let text = try? UTF8Validation.decode(payload) else {
                    return fail(connection, code: FrameError.invalidUTF8.closeCode)
                }
                receivedText(text, on: connection)
            case .ping(let payload)?:
                send(bytes: ServerFrame.encode(opcode: .pong, payload: Array(payload)), to: connection)
            case .close(let close)?:
                if connection.phase == .open {
                    // Echo the client's code (RFC 6455 §5.5.1); an empty close is answered with an empty one.
                    let echo = close.code.map { ClosePayload(code: $0, reason: "").encoded } ?? []
                    send(bytes: ServerFrame.encode(opcode: .close, payload: echo), to: connection)
                }
                connection.finish(deadline: Socket.now() + nanoseconds(options.closeTimeout))
            }
        }
    }

    /// Sends a close frame with `code` and closes once it is written, without waiting for the client.
    private func fail(_ connection: ServerConnection, code: UInt16) {
        let payload = ClosePayload(code: code, reason: "").encoded
        send(bytes: ServerFrame.encode(opcode: .close, payload: payload), to: connection)
        connection.finish(deadline: Socket.now() + nanoseconds(options.closeTimeout))
    }

    func send(bytes: [UInt8], to connection: ServerConnection) {
        if !connection.enqueue(bytes) { connection.close() }
    }

    // MARK: Action Cable

    func sendWelcome(_ connection: ServerConnection) {
        guard !connection.isWelcomed, connection.phase == .open else { return }
        connection.isWelcomed = true
        connection.welcomeAt = nil
        var welcome: [String: JSONValue] = ["type": "welcome"]
        if options.includesSessionID { welcome["sid"] = .string(String(connection.id.rawValue)) }
        if connection.isExtended, let sessionID = streamHistory?.newSessionID(now: Socket.now()) {
            connection.sessionID = sessionID
            streamHistory?.update(sessionID, subscriptions: connection.subscriptions)
            welcome["sid"] = .string(sessionID)
            if let restored = connection.restoredIdentifiers {
                welcome["restored"] = true
                if !restored.isEmpty { welcome["restored_ids"] = .array(restored.map { .string(spelled($0)) }) }
            }
        }
        send(JSONValue.object(welcome).description, to: connection)
        let held = connection.heldMessages
        connection.heldMessages = []
        for command in held where connection.phase == .open {
            handle(command, on: connection)
        }
    }

    /// `{"type":"disconnect","reason":…,"reconnect":…}`, a close frame with 1000, then the close handshake.
    func disconnect(_ connection: ServerConnection, reason: String?, reconnect: Bool) {
        let frame: JSONValue = [
            "type": "disconnect", "reason": reason.map { .string($0) } ?? .null, "reconnect": .bool(reconnect),
        ]
        send(frame.description, to: connection)
        send(
            bytes: ServerFrame.encode(opcode: .close, payload: ClosePayload(code: 1000, reason: "").encoded),
            to: connection)
        guard connection.phase == .open else { return }
        connection.phase = .closing
        connection.welcomeAt = nil
        connection.deadline = Socket.now() + nanoseconds(options.closeTimeout)
    }

    private func receivedText(_ text: String, on connection: ServerConnection) {
        let json = try? JSONValue(parsing: text)
        var data: JSONValue?
        if json?["command"] == "message", let dataText = json?["data"]?.stringValue {
            data = try? JSONValue(parsing: dataText)
        } else if json?["command"] == "whisper" {
            data = json?["data"] ?? .null
        }
        let command = Server.ReceivedCommand(
            connection: connection.id, text: text, command: json?["command"]?.stringValue,
            identifier: json?["identifier"]?.stringValue, data: data)
        remember(command)
        guard connection.phase == .open else { return }  // closing: ignored, as Rails does after close
        guard connection.isWelcomed else {
            guard connection.heldMessages.count < options.maxBufferedCommands else {
                return fail(connection, code: 1008)
            }
            connection.heldMessages.append(command)
            return
        }
        handle(command, on: connection)
    }

    private func handle(_ command: Server.ReceivedCommand, on connection: ServerConnection) {
        // AnyCable answers a client's ping on either protocol; this server does when it acts as AnyCable.
        if command.command == "ping", options.includesSessionID || connection.isExtended {
            return send(#"{"type":"pong"}"#, to: connection)
        }
        guard let identifier = command.identifier, let request = connection.request else { return }
        let index = connection.subscriptions.firstIndex { $0.identifier == identifier }
        // AnyCable decodes every frame with its `presence` member: a frame it cannot decode ends the connection.
        var presence: (id: String, info: JSONValue)?
        if pubSubRules != nil {
            switch Self.presenceMember(of: command) {
            case .absent: break
            case .member(let member): presence = member
            case .undecodable: return fail(connection, code: 1007)
            }
        }
        switch command.command {
        case "subscribe":
            // A duplicate is ignored, like Rails 6.1-8.1; so is an identifier that is not a JSON object.
            guard index == nil, let params = try? JSONValue(parsing: identifier), params.objectValue != nil else {
                return
            }
            var subscription = ServerSubscription(identifier: identifier, params: params)
            let decision: Server.SubscriptionDecision
            switch pubSubRules?.decide(params) ?? .channel(whispers: false, presence: false) {
            case .channel(let whispers, let hasPresence):
                subscription.whispers = whispers
                subscription.hasPresence = hasPresence
                let rule = core.rules.withLock { $0.subscriptionRule }
                decision = rule(params, request)
            case .stream(let kind, let name, let whispers, let hasPresence):
                subscription.kind = kind
                subscription.stream = name
                subscription.whispers = whispers
                subscription.hasPresence = hasPresence
                decision = .confirm
            case .reject:
                decision = .reject
            }
            guard connection.phase == .open else { return }
            let type: String
            switch decision {
            case .confirm:
                connection.subscriptions.append(subscription)
                recordSession(of: connection)
                type = "confirm_subscription"
            case .reject:
                type = "reject_subscription"
            case .ignore:
                return runCommands()
            }
            send(
                JSONValue.object(["identifier": .string(spelled(identifier)), "type": .string(type)]).description,
                to: connection
            )
            guard type == "confirm_subscription" else { break }
            // A subscribe may join the presence set, and carry a history request; both follow the confirmation.
            if let presence { join(subscription, presence, on: connection) }
            if let history = try? JSONValue(parsing: command.text)["history"] {
                answerHistory(history, for: subscription, on: connection)
            }
        case "unsubscribe":
            if let index {
                let subscription = connection.subscriptions.remove(at: index)
                if subscription.hasPresence { leave(subscription, on: connection) }
            }
            recordSession(of: connection)
        case "history":
            guard let index, let history = try? JSONValue(parsing: command.text)["history"] else { return }
            answerHistory(history, for: connection.subscriptions[index], on: connection)
        case "whisper":
            guard let index, connection.subscriptions[index].whispers else { return }
            whisper(command.data ?? .null, from: connection.subscriptions[index], on: connection)
        case "join":
            guard let index, connection.subscriptions[index].hasPresence, let presence else { return }
            join(connection.subscriptions[index], presence, on: connection)
        case "leave":
            guard let index, connection.subscriptions[index].hasPresence else { return }
            leave(connection.subscriptions[index], on: connection)
        case "presence":
            guard let index, connection.subscriptions[index].hasPresence else { return }
            let subscription = connection.subscriptions[index]
            send(Self.presenceFrame(spelled(identifier), presenceInfo(of: subscription.stream)), to: connection)
        case "message":
            // `$pubsub` and Turbo have no channel to perform on: AnyCable answers nothing.
            guard let index, connection.subscriptions[index].kind == .channel, let data = command.data,
                data.objectValue != nil, let action = command.action
            else {
                return
            }
            guard let handler = core.rules.withLock({ $0.handlers[action] }) else { return }
            handler(
                Server.PerformCall(
                    connection: connection.id, identifier: identifier, params: connection.subscriptions[index].params,
                    action: action, data: data, request: request, core: core))
        default:
            break
        }
        // What a rule or handler queued goes out now, before the next command.
        runCommands()
    }

    /// What a command's `presence` member holds: nothing usable (absent, null, or no id: AnyCable ignores it),
    /// an id with its info, or a value AnyCable cannot decode (not an object, or an id that is not a string).
    private enum PresenceMember {
        case absent
        case member((id: String, info: JSONValue))
        case undecodable
    }

    private static func presenceMember(of command: Server.ReceivedCommand) -> PresenceMember {
        // Cheap test first: most frames have no presence member.
        guard command.text.contains("presence"), let member = try? JSONValue(parsing: command.text)["presence"]
        else { return .absent }
        switch member {
        case .null: return .absent
        case .object(let fields):
            switch fields["id"] {
            case nil, .null?: return .absent
            case .string(let id)?: return id.isEmpty ? .absent : .member((id, fields["info"] ?? .null))
            default: return .undecodable
            }
        default: return .undecodable
        }
    }

    /// Sends `data` to every other connection's subscriptions of the whisper's stream, without a position.
    private func whisper(_ data: JSONValue, from sender: ServerSubscription, on connection: ServerConnection) {
        // AnyCable re-encodes `data`; a missing or null one arrives as the JSON text `null`, as a string.
        let message = data.isNull ? JSONValue.string("null") : data
        for receiver in connections where receiver !== connection && receiver.phase == .open {
            for subscription in receiver.subscriptions where subscription.stream == sender.stream {
                send(Self.envelope(spelled(subscription.identifier), message), to: receiver)
            }
        }
    }

    private func join(
        _ subscription: ServerSubscription, _ member: (id: String, info: JSONValue), on connection: ServerConnection
    ) {
        guard subscription.hasPresence else { return }
        let isNew = presence.join(subscription.stream, id: member.id, info: member.info, by: connection.id)
        dirty = true
        guard isNew else { return }
        var event: [String: JSONValue] = ["type": "join", "id": .string(member.id)]
        if !member.info.isNull { event["info"] = member.info }
        sendPresence(.object(event), to: subscription.stream)
    }

    private func leave(_ subscription: ServerSubscription, on connection: ServerConnection) {
        dirty = true
        guard let gone = presence.leave(subscription.stream, by: connection.id) else { return }
        sendPresence(["type": "leave", "id": .string(gone)], to: subscription.stream)
    }

    /// The `info` answer to a `presence` request: the unique ids and their info, no `records` when empty.
    private func presenceInfo(of stream: String) -> JSONValue {
        let records = presence.records(in: stream)
        var message: [String: JSONValue] = ["type": "info", "total": .int(records.count)]
        if !records.isEmpty {
            message["records"] = .array(
                records.map { record in
                    var entry: [String: JSONValue] = ["id": .string(record.id)]
                    if !record.info.isNull { entry["info"] = record.info }
                    return .object(entry)
                })
        }
        return .object(message)
    }

    /// Keeps the cached session of an extended connection in step with its subscriptions.
    private func recordSession(of connection: ServerConnection) {
        guard let id = connection.sessionID else { return }
        streamHistory?.update(id, subscriptions: connection.subscriptions)
    }

    /// Answers a `history` request for `subscription` (its one stream), as AnyCable does: the
    /// stored broadcasts after the requested offset (or, when the request does not name the stream, those since
    /// `since`), then `confirm_history`; only `reject_history` when they cannot be given; nothing for a request
    /// with neither `since` nor `streams`.
    private func answerHistory(
        _ history: JSONValue, for subscription: ServerSubscription, on connection: ServerConnection
    ) {
        guard let streamHistory else { return }
        let identifier = subscription.identifier
        let stream = subscription.stream
        let streams = history["streams"]?.objectValue
        let since = Int((history["since"]?.doubleValue ?? 0).rounded(.down))
        guard streams != nil || since > 0 else { return }
        var replay: [StreamHistory.Entry] = []
        if since > 0 { replay = streamHistory.entries(of: stream, since: since) }
        if let requested = streams?[stream] {
            guard let epoch = requested["epoch"]?.stringValue, let offset = requested["offset"]?.intValue,
                let entries = streamHistory.entries(of: stream, after: offset, epoch: epoch)
            else {
                return send(Self.historyAnswer(spelled(identifier), "reject_history"), to: connection)
            }
            replay = entries
        }
        let frames = replay.map { entry in
            let position = StreamPosition(stream: stream, epoch: streamHistory.epoch, offset: entry.offset)
            return Self.envelope(spelled(identifier), entry.message, position: position)
        }
        connection.replays.append((frames[...], Self.historyAnswer(spelled(identifier), "confirm_history")))
        if !replaysHeld, options.reliableStreams?.replayChunk == nil { sendReplays(of: connection, upTo: .max) }
    }

    /// Sends up to `limit` frames of `connection`'s pending `history` answers, each answer's end after its frames.
    func sendReplays(of connection: ServerConnection, upTo limit: Int) {
        var left = limit
        while left > 0, var replay = connection.replays.first {
            let chunk = replay.frames.prefix(left)
            for frame in chunk { send(frame, to: connection) }
            left -= chunk.count
            replay.frames = replay.frames.dropFirst(chunk.count)
            if replay.frames.isEmpty {
                send(replay.answer, to: connection)
                connection.replays.removeFirst()
            } else {
                connection.replays[0] = replay
            }
        }
    }

    private static func historyAnswer(_ identifier: String, _ type: String) -> String {
        JSONValue.object(["identifier": .string(identifier), "type": .string(type)]).description
    }
}
