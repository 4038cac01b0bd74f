/// The Action Cable JSON wire format (`actioncable-v1-json`): decodes server frames and encodes client
/// commands. Pure functions, no state; safe from any thread.
package enum CableProtocol {
    // MARK: Server → client

    /// Classifies one text frame from the server.
    ///
    /// Only the top level is inspected, so a data frame whose payload says `"type":"ping"` is still a
    /// `.message`. Rules, in order:
    /// 1. `type` `"confirm_subscription"` / `"reject_subscription"` / `"confirm_history"` / `"reject_history"` →
    ///    `.confirm` / `.reject` / `.historyConfirmed` / `.historyRejected`, whatever else the frame holds; the
    ///    `identifier` must be a string, else `nil`.
    ///    `type` `"presence"` with a string `identifier` and a `message` member → `.presence` (AnyCable's
    ///    presence events and answers are not data: they carry no stream position).
    /// 2. A string `identifier` and a `message` member (any JSON, also `null`, `false`, `0`, `""`) →
    ///    `.message`, whatever `type` says (AnyCable may tag data frames with a broadcast type).
    /// 3. `type` `"welcome"`, `"ping"`, `"pong"` (AnyCable), `"disconnect"` → those cases (`disconnect`: see
    ///    ``ServerFrame``).
    /// 4. An `identifier` that is present but not a string → `nil`.
    /// 5. Any other object → `.unknown`. Unknown keys (`stream_id`, `epoch`, `offset`, …) are ignored.
    ///
    /// A repeated key counts with its last value, as ``JSONValue/init(parsing:)`` keeps it.
    ///
    /// - Returns: `nil` when the text is not valid JSON or not a JSON object.
    package static func decode(_ text: String) -> ServerFrame? {
        var text = text
        return text.withUTF8 { decode(buffer: $0, validatesUTF8: false) }
    }

    /// Decodes a frame given as UTF-8 bytes that the caller has validated; same rules as ``decode(_:)``.
    package static func decode(validatedUTF8 bytes: UnsafeBufferPointer<UInt8>) -> ServerFrame? {
        decode(buffer: bytes, validatesUTF8: false)
    }

    /// Decodes a frame given as UTF-8 bytes, validating the UTF-8; same rules as ``decode(_:)``.
    package static func decode(utf8 bytes: UnsafeBufferPointer<UInt8>) -> ServerFrame? {
        decode(buffer: bytes, validatesUTF8: true)
    }

    private static func decode(buffer: UnsafeBufferPointer<UInt8>, validatesUTF8: Bool) -> ServerFrame? {
        decodeFrame(buffer, validatesUTF8: validatesUTF8).flatMap {
            ServerFrame($0, in: buffer, validatesUTF8: validatesUTF8)
        }
    }

    /// The one pass over a frame, given as UTF-8 bytes that the caller has validated, by the rules of
    /// ``decode(_:)``: a data frame's message is parsed and its identifier left as the raw string token, for the
    /// client's route table to look up unread; any other frame is classified in full.
    ///
    /// A data frame's token is checked only for where it ends (see
    /// ``InboundFrame/message(identifier:message:position:)``): a malformed one, which no route table holds, is
    /// found when ``identifier(token:in:)`` returns `nil` for it, and the frame is then malformed.
    ///
    /// `keepingText` decides how a data frame's message is read: it is called with the identifier's token when
    /// the message follows it (as Rails and AnyCable write them), and when it returns `true` the message is
    /// checked and kept as its text (``MessageJSON/text(_:)``) instead of parsed into a value, for a subscription
    /// whose consumers are all typed. A message before its identifier is parsed.
    package static func decodeFrame(
        validatedUTF8 bytes: UnsafeBufferPointer<UInt8>, keepingText: (Range<Int>) -> Bool = { _ in false }
    ) -> InboundFrame? {
        decodeFrame(bytes, validatesUTF8: false, keepingText: keepingText)
    }

    /// The identifier a data frame's token holds: the token, between the quotes at `token`'s ends in `bytes` (the
    /// validated UTF-8 it was decoded from), parsed as a JSON string. `nil` when it is not a valid one (a bad
    /// escape, a raw control character) or `token` is not a string's contents in `bytes`.
    package static func identifier(token: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        identifier(token: token, in: bytes, validatesUTF8: false)
    }

    /// As ``identifier(token:in:)``, checking the token's UTF-8 when `validatesUTF8` is set.
    static func identifier(token: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>, validatesUTF8: Bool) -> String? {
        let quote = UInt8(ascii: "\"")
        guard token.lowerBound > 0, token.upperBound < bytes.count,
            bytes[token.lowerBound - 1] == quote, bytes[token.upperBound] == quote
        else { return nil }
        let quoted = UnsafeBufferPointer(rebasing: bytes[(token.lowerBound - 1)...token.upperBound])
        var parser = JSONParser(bytes: quoted, validatesUTF8: validatesUTF8)
        return (try? parser.parseDocument())?.stringValue
    }

    private static func decodeFrame(
        _ bytes: UnsafeBufferPointer<UInt8>, validatesUTF8: Bool, keepingText: (Range<Int>) -> Bool = { _ in false }
    ) -> InboundFrame? {
        var parser = JSONParser(bytes: bytes, validatesUTF8: validatesUTF8)
        var fields = FrameFields()
        do {
            // The keys a data frame has come first: a key is compared with the cases in order.
            let isObject = try parser.parseTopLevelObject { key, parser throws(JSONParseError) in
                switch key {
                case "identifier":
                    // A token is skipped unread. One that a later identifier replaces is read now: a bad escape
                    // in it makes the frame malformed, as it does for a parse of the whole frame.
                    if case .token(let earlier) = fields.identifier,
                        Self.identifier(token: earlier, in: bytes, validatesUTF8: validatesUTF8) == nil
                    {
                        fields.replacedBadToken = true
                    }
                    if parser.atString {
                        fields.identifier = .token(try parser.skipStringToken())
                    } else {
                        _ = try parser.parseValue()
                        fields.identifier = .notString
                    }
                case "message":
                    if case .token(let token) = fields.identifier, keepingText(token) {
                        let text = try parser.skipValue()
                        fields.message = .text(Array(bytes[text]))
                    } else {
                        fields.message = .value(try parser.parseValue())
                    }
                case "type": fields.type = try parser.parseValue()
                case "stream_id": fields.stream = try parser.parseValue()
                case "epoch": fields.epoch = try parser.parseValue()
                case "offset": fields.offset = try parser.parseValue()
                case "reason": fields.control(\.reason, try parser.parseValue())
                case "reconnect": fields.control(\.reconnect, try parser.parseValue())
                case "sid": fields.control(\.sid, try parser.parseValue())
                case "restored": fields.control(\.restored, try parser.parseValue())
                case "restored_ids": fields.control(\.restoredIDs, try parser.parseValue())
                default: _ = try parser.parseValue()
                }
            }
            guard isObject, !fields.replacedBadToken else { return nil }
        } catch {
            return nil
        }
        return fields.frame(in: bytes, validatesUTF8: validatesUTF8)
    }

    /// The top-level members a frame's meaning depends on.
    private struct FrameFields {
        /// The last `identifier` member.
        enum Identifier {
            case missing
            /// A string, as the range of its token's contents, not yet read.
            case token(Range<Int>)
            case notString
        }

        var identifier = Identifier.missing
        /// An `identifier` token that a later one replaced was not a valid JSON string.
        var replacedBadToken = false
        var type: JSONValue?
        var message: MessageJSON?
        var stream: JSONValue?
        var epoch: JSONValue?
        var offset: JSONValue?
        /// The members only control frames have, made when the first of them is read: a data frame carries
        /// none, and pays for none.
        var control: ControlFields?

        /// Sets one of the control members.
        mutating func control(_ member: WritableKeyPath<ControlFields, JSONValue?>, _ value: JSONValue) {
            var fields = control ?? ControlFields()
            fields[keyPath: member] = value
            control = fields
        }

        struct ControlFields {
            var reason: JSONValue?
            var reconnect: JSONValue?
            var sid: JSONValue?
            var restored: JSONValue?
            var restoredIDs: JSONValue?
        }

        /// The frame by the rules of ``CableProtocol/decode(_:)``, every one of them here, for fields read from
        /// `bytes`. A data frame's token is left unread: reading it is the step that a route table lookup avoids.
        /// Takes the message out (a move, not a copy: the fields are not used after this).
        mutating func frame(in bytes: UnsafeBufferPointer<UInt8>, validatesUTF8: Bool) -> InboundFrame? {
            func read(_ token: Range<Int>) -> String? {
                CableProtocol.identifier(token: token, in: bytes, validatesUTF8: validatesUTF8)
            }
            let typeName = type?.stringValue
            // Rule 1: the types that carry an identifier but are not data frames.
            var identified: ((String) -> ControlFrame)?
            if let typeName {  // a data frame has no type, as a rule: it skips the comparisons
                switch typeName {
                case "confirm_subscription": identified = ControlFrame.confirm
                case "reject_subscription": identified = ControlFrame.reject
                case "confirm_history": identified = ControlFrame.historyConfirmed
                case "reject_history": identified = ControlFrame.historyRejected
                default: identified = nil
                }
            }
            if let identified {
                guard case .token(let token) = identifier, let identifier = read(token) else { return nil }
                return .control(identified(identifier))
            }
            if typeName == "presence", case .token(let token) = identifier, let message = message?.value {
                guard let identifier = read(token) else { return nil }
                return .control(.presence(identifier: identifier, update: PresenceUpdate(message)))
            }
            // Rule 2: data.
            if case .token(let token) = identifier, let message = message.take() {
                return .message(
                    identifier: token, message: message,
                    position: StreamPosition(stream: stream, epoch: epoch, offset: offset))
            }
            // Any other frame with a string identifier is malformed when the string is.
            if case .token(let token) = identifier, read(token) == nil { return nil }
            // Rule 3.
            let control = control ?? ControlFields()
            switch typeName {
            case "welcome":
                let sessionID = control.sid?.stringValue
                guard control.restored?.boolValue == true else {
                    return .control(.welcome(sessionID: sessionID, restored: nil))
                }
                let identifiers = control.restoredIDs?.arrayValue.map { $0.compactMap(\.stringValue) }
                return .control(.welcome(sessionID: sessionID, restored: .init(identifiers: identifiers)))
            case "ping":
                return .control(.ping)
            case "pong":
                return .control(.pong)
            case "disconnect":
                // A reason that is neither a string nor null, or a reconnect flag that is not a Bool, is a frame
                // we do not understand: ignoring it is safer than guessing whether to stop.
                if let reason = control.reason, reason.stringValue == nil, !reason.isNull { return .control(.unknown) }
                if let reconnect = control.reconnect, reconnect.boolValue == nil, !reconnect.isNull {
                    return .control(.unknown)
                }
                return .control(
                    .disconnect(reason: control.reason?.stringValue, reconnect: control.reconnect?.boolValue))
            default:
                break
            }
            // Rules 4 and 5.
            if case .notString = identifier { return nil }
            return .control(.unknown)
        }
    }

    // MARK: Client → server

    /// `{"command":"subscribe","identifier":"<identifier as a JSON string>"}`.
    ///
    ///     CableProtocol.subscribe(identifier: #"{"channel":"ChatChannel"}"#)
    ///     // {"command":"subscribe","identifier":"{\"channel\":\"ChatChannel\"}"}
    package static func subscribe(identifier: String) -> String {
        command("subscribe", identifier: identifier)
    }

    /// `{"command":"subscribe","history":{"since":<unix seconds>},"identifier":"…"}`: AnyCable replays the
    /// stream's broadcasts since then after the confirmation.
    package static func subscribe(identifier: String, historySince since: Int) -> String {
        subscribe(identifier: identifier, historySince: since, presence: nil)
    }

    /// `{"command":"history","history":{"streams":{"<stream>":{"epoch":"…","offset":N}}},"identifier":"…"}`:
    /// asks AnyCable to replay each stream after the position given.
    package static func history(identifier: String, since positions: [StreamPosition]) -> String {
        var streams: [String: JSONValue] = [:]
        for position in positions {
            streams[position.stream] = ["epoch": .string(position.epoch), "offset": .int(position.offset)]
        }
        // Strings and integers only: it cannot fail.
        return (try? command("history", identifier: identifier, members: ["history": ["streams": .object(streams)]]))
            ?? ""
    }

    /// A `subscribe` with AnyCable's extras: `history` since a Unix time, and a `presence` member that joins
    /// the presence set right after the confirmation (re-joining after a fresh reconnect). With neither, the
    /// plain ``subscribe(identifier:)``.
    static func subscribe(identifier: String, historySince since: Int?, presence: PresenceMember?) -> String {
        var members: [String: JSONValue] = [:]
        if let since { members["history"] = ["since": .int(since)] }
        if let presence { members["presence"] = Self.presence(id: presence.id, info: presence.info) }
        guard !members.isEmpty else { return subscribe(identifier: identifier) }
        // An integer, and info that was checked when the app joined: it encodes.
        return (try? command("subscribe", identifier: identifier, members: members))
            ?? subscribe(identifier: identifier)
    }

    /// `{"command":"ping"}`: asks AnyCable for a `{"type":"pong"}` (on either protocol), to check a connection.
    package static let ping = #"{"command":"ping"}"#

    /// `{"command":"pong"}`: AnyCable's extended protocol answers each ping with it.
    package static let pong = #"{"command":"pong"}"#

    /// `{"command":"unsubscribe","identifier":"…"}`.
    package static func unsubscribe(identifier: String) -> String {
        command("unsubscribe", identifier: identifier)
    }

    /// `{"command":"message","identifier":"…","data":"<JSON text of data plus action>"}`.
    ///
    /// `data` gets an `"action"` member set to `action` (replacing any it had) and is written as
    /// canonical JSON text (sorted keys) inside a JSON string, as Rails requires.
    ///
    ///     try CableProtocol.perform(identifier: id, action: "speak", data: ["body": "hi"])
    ///     // {"command":"message","identifier":"…","data":"{\"action\":\"speak\",\"body\":\"hi\"}"}
    ///
    /// - Throws: ``CableError/dataNotObject(file:line:)`` when `data` is not an object;
    ///   ``CableError/unencodableData(nonFiniteAt:file:line:)`` when it holds NaN or infinity (naming where).
    package static func perform(identifier: String, action: String, data: JSONValue) throws(CableError) -> String {
        guard case .object(var members) = data else { throw .dataNotObject() }
        members["action"] = .string(action)
        let dataText: String
        do {
            dataText = try JSONValue.object(members).jsonText()
        } catch {
            throw .unencodableData(nonFiniteAt: JSONValue.object(members).nonFinitePath ?? [])
        }
        var writer = JSONWriter()
        writer.writeRaw(#"{"command":"message","identifier":"#)
        writer.writeString(identifier)
        writer.writeRaw(#","data":"#)
        writer.writeString(dataText)
        writer.writeRaw("}")
        return writer.text
    }

    /// `{"command":"whisper","identifier":"…","data":<data>}`: AnyCable relays `data` to the other connections
    /// on the subscription's stream. Unlike `perform`'s, `data` is written as a JSON value, not as JSON text in a
    /// string.
    ///
    ///     try CableProtocol.whisper(identifier: id, data: ["typing": true])
    ///     // {"command":"whisper","identifier":"…","data":{"typing":true}}
    ///
    /// - Throws: ``CableError/unencodableData(nonFiniteAt:file:line:)`` when `data` holds NaN or infinity.
    package static func whisper(identifier: String, data: JSONValue) throws(CableError) -> String {
        try command("whisper", identifier: identifier, members: ["data": data])
    }

    /// `{"command":"join","identifier":"…","presence":{"id":"…","info":<info>}}`: AnyCable's presence join
    /// (`info` left out when `nil`).
    ///
    /// - Throws: ``CableError/unencodableData(nonFiniteAt:file:line:)`` when `info` holds NaN or infinity.
    package static func join(identifier: String, id: String, info: JSONValue?) throws(CableError) -> String {
        try command("join", identifier: identifier, members: ["presence": presence(id: id, info: info)])
    }

    /// `{"command":"leave","identifier":"…"}`: AnyCable's presence leave.
    package static func leave(identifier: String) -> String {
        command("leave", identifier: identifier)
    }

    /// `{"command":"presence","identifier":"…","data":{}}`: asks AnyCable for the subscription's presence set.
    package static func presenceRequest(identifier: String) -> String {
        (try? command("presence", identifier: identifier, members: ["data": [:]])) ?? ""  // cannot fail
    }

    /// The `presence` member of `join` and of a joining `subscribe`.
    static func presence(id: String, info: JSONValue?) -> JSONValue {
        var presence: [String: JSONValue] = ["id": .string(id)]
        if let info { presence["info"] = info }
        return .object(presence)
    }

    /// `{"command":"<name>","identifier":"…",<members>}`, with `members` written as JSON.
    static func command(
        _ name: String, identifier: String, members: [String: JSONValue]
    ) throws(CableError) -> String {
        var command = members
        command["command"] = .string(name)
        command["identifier"] = .string(identifier)
        do {
            return try JSONValue.object(command).jsonText()
        } catch {
            throw .unencodableData(nonFiniteAt: JSONValue.object(members).nonFinitePath ?? [])
        }
    }

    /// The identifier string for channel `params`: their canonical JSON text (compact, keys sorted), so
    /// equal params always give byte-identical identifiers, whatever order they were built in.
    ///
    ///     try CableProtocol.identifier(for: ["room": "1", "channel": "ChatChannel"])
    ///     // {"channel":"ChatChannel","room":"1"}
    ///
    /// - Throws: ``CableError/missingChannel(file:line:)`` unless `params` is an object with a string
    ///   `"channel"`; ``CableError/unencodableData(nonFiniteAt:file:line:)`` when it holds NaN or infinity
    ///   (naming where).
    package static func identifier(for params: JSONValue) throws(CableError) -> String {
        guard params["channel"]?.stringValue != nil else { throw .missingChannel() }
        do {
            return try params.jsonText()
        } catch {
            throw .unencodableData(nonFiniteAt: params.nonFinitePath ?? [])
        }
    }

    /// Our spelling of an identifier that a server sent back spelled differently: the params it holds, written as
    /// ``identifier(for:)`` writes them. Servers that parse and re-encode identifiers (unlike Rails, which echoes
    /// them byte for byte) write `\u00e9` for `é`, `\/` for `/`, surrogate pairs for astral characters, spaces
    /// after `:` and `,`, or another key order; all of these give back the identifier we sent. `nil` when
    /// `identifier` is not a JSON object with a string `"channel"`.
    package static func canonicalIdentifier(_ identifier: String) -> String? {
        guard let params = try? JSONValue(parsing: identifier) else { return nil }
        return try? self.identifier(for: params)
    }

    private static func command(_ name: StaticString, identifier: String) -> String {
        var writer = JSONWriter()
        writer.writeRaw(#"{"command":""#)
        writer.writeRaw(name)
        writer.writeRaw(#"","identifier":"#)
        writer.writeString(identifier)
        writer.writeRaw("}")
        return writer.text
    }
}
