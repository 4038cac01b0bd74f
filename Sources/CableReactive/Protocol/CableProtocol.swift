/// The Action Cable JSON wire format (`actioncable-v1-json`): decodes server frames and encodes client
/// commands. Pure functions, no state; safe from any thread.
package enum CableProtocol {
    // MARK: Server → client

    /// Classifies one text frame from the server.
    ///
    /// Only the top level is inspected, so a data frame whose payload says `"type":"ping"` is still a
    /// `.message`. Rules, in order:
    /// 1. `type` `"confirm_subscription"` / `"reject_subscription"` → `.confirm` / `.reject`; the
    ///    `identifier` must be a string, else `nil`.
    /// 2. A string `identifier` and a `message` member (any JSON, also `null`, `false`, `0`, `""`) →
    ///    `.message`, whatever `type` says (AnyCable may tag data frames with a broadcast type).
    /// 3. `type` `"welcome"`, `"ping"`, `"disconnect"` → those cases (`disconnect`: see ``ServerFrame``).
    /// 4. An `identifier` that is present but not a string → `nil`.
    /// 5. Any other object → `.unknown`. Unknown keys (`stream_id`, `epoch`, `offset`, …) are ignored.
    ///
    /// - Returns: `nil` when the text is not valid JSON or not a JSON object.
    package static func decode(_ text: String) -> ServerFrame? {
        var text = text
        return text.withUTF8 { decode(buffer: $0, validatesUTF8: false) }
    }

    /// The client's hot path: a data frame (``ServerFrame/message(identifier:message:)`` by the rules of
    /// ``decode(_:)``) with its identifier left as the raw JSON string token (the byte range between its
    /// quotes in `bytes`, escapes as the server wrote them) and its message parsed. `nil` for any other frame,
    /// or when the identifier token is malformed; ``decode(validatedUTF8:)`` then classifies the frame.
    package static func decodeDataFrame(
        validatedUTF8 bytes: UnsafeBufferPointer<UInt8>
    ) -> (identifier: Range<Int>, message: JSONValue, position: StreamPosition?)? {
        var parser = JSONParser(bytes: bytes, validatesUTF8: false)
        var identifier: Range<Int>?
        var message: JSONValue?
        var type: JSONValue?
        var stream: JSONValue?
        var epoch: JSONValue?
        var offset: JSONValue?
        var skippedBadToken = false
        do {
            let isObject = try parser.parseTopLevelObject { key, parser throws(JSONParseError) in
                switch key {
                case "identifier":
                    // A token is skipped unchecked; one that a later identifier replaces is checked now, or an
                    // earlier one with a bad escape would go unnoticed behind a later, valid one.
                    if let earlier = identifier, !Self.isStringToken(earlier, in: bytes) { skippedBadToken = true }
                    if parser.atString {
                        identifier = try parser.skipStringToken()
                    } else {
                        identifier = nil
                        _ = try parser.parseValue()
                    }
                case "message": message = try parser.parseValue()
                case "type": type = try parser.parseValue()
                case "stream_id": stream = try parser.parseValue()
                case "epoch": epoch = try parser.parseValue()
                case "offset": offset = try parser.parseValue()
                default: _ = try parser.parseValue()
                }
            }
            guard isObject else { return nil }
        } catch {
            return nil
        }
        if let type = type?.stringValue, Self.typesWithIdentifier.contains(type) { return nil }
        guard !skippedBadToken, let identifier, let message else { return nil }
        return (identifier, message, StreamPosition(stream: stream, epoch: epoch, offset: offset))
    }

    /// Whether the contents of a string token (between its quotes, in `bytes`) are a valid JSON string.
    private static func isStringToken(_ contents: Range<Int>, in bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard contents.lowerBound > 0, contents.upperBound < bytes.count else { return false }
        let quoted = UnsafeBufferPointer(rebasing: bytes[(contents.lowerBound - 1)...contents.upperBound])
        return (try? JSONValue(parsingUTF8: quoted))?.stringValue != nil
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
        var parser = JSONParser(bytes: buffer, validatesUTF8: validatesUTF8)
        var fields = FrameFields()
        do {
            let isObject = try parser.parseTopLevelObject { key, parser throws(JSONParseError) in
                switch key {
                case "type": fields.type = try parser.parseValue()
                case "identifier": fields.identifier = try parser.parseValue()
                case "message": fields.message = try parser.parseValue()
                case "reason": fields.reason = try parser.parseValue()
                case "reconnect": fields.reconnect = try parser.parseValue()
                case "sid": fields.sid = try parser.parseValue()
                case "stream_id": fields.stream = try parser.parseValue()
                case "epoch": fields.epoch = try parser.parseValue()
                case "offset": fields.offset = try parser.parseValue()
                case "restored": fields.restored = try parser.parseValue()
                case "restored_ids": fields.restoredIDs = try parser.parseValue()
                default: _ = try parser.parseValue()
                }
            }
            guard isObject else { return nil }
        } catch {
            return nil
        }
        return fields.frame
    }

    /// The top-level members a frame's meaning depends on.
    private struct FrameFields {
        var type: JSONValue?
        var identifier: JSONValue?
        var message: JSONValue?
        var reason: JSONValue?
        var reconnect: JSONValue?
        var sid: JSONValue?
        var restored: JSONValue?
        var restoredIDs: JSONValue?
        var stream: JSONValue?
        var epoch: JSONValue?
        var offset: JSONValue?

        var frame: ServerFrame? {
            let typeName = type?.stringValue
            switch typeName {
            case "confirm_subscription":
                guard let identifier = identifier?.stringValue else { return nil }
                return .confirm(identifier: identifier)
            case "reject_subscription":
                guard let identifier = identifier?.stringValue else { return nil }
                return .reject(identifier: identifier)
            case "confirm_history":
                guard let identifier = identifier?.stringValue else { return nil }
                return .historyConfirmed(identifier: identifier)
            case "reject_history":
                guard let identifier = identifier?.stringValue else { return nil }
                return .historyRejected(identifier: identifier)
            default:
                break
            }
            if let identifier = identifier?.stringValue, let message {
                let position = StreamPosition(stream: stream, epoch: epoch, offset: offset)
                return .message(identifier: identifier, message: message, position: position)
            }
            switch typeName {
            case "welcome":
                guard restored?.boolValue == true else { return .welcome(sessionID: sid?.stringValue, restored: nil) }
                let identifiers = restoredIDs?.arrayValue.map { $0.compactMap(\.stringValue) }
                return .welcome(sessionID: sid?.stringValue, restored: .init(identifiers: identifiers))
            case "ping":
                return .ping
            case "disconnect":
                // A reason that is neither a string nor null, or a reconnect flag that is not a Bool, is a frame
                // we do not understand: ignoring it is safer than guessing whether to stop.
                if let reason, reason.stringValue == nil, !reason.isNull { return .unknown }
                if let reconnect, reconnect.boolValue == nil, !reconnect.isNull { return .unknown }
                return .disconnect(reason: reason?.stringValue, reconnect: reconnect?.boolValue)
            default:
                break
            }
            if let identifier, identifier.stringValue == nil {
                return nil
            }
            return .unknown
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
        let command: JSONValue = [
            "command": "subscribe", "identifier": .string(identifier), "history": ["since": .int(since)],
        ]
        return (try? command.jsonText()) ?? subscribe(identifier: identifier)  // an integer cannot fail
    }

    /// The `type`s whose frames carry an `identifier` but are not data frames, whatever else they hold.
    private static let typesWithIdentifier: Set<String> = [
        "confirm_subscription", "reject_subscription", "confirm_history", "reject_history",
    ]

    /// `{"command":"history","history":{"streams":{"<stream>":{"epoch":"…","offset":N}}},"identifier":"…"}`:
    /// asks AnyCable to replay each stream after the position given.
    package static func history(identifier: String, since positions: [StreamPosition]) -> String {
        var streams: [String: JSONValue] = [:]
        for position in positions {
            streams[position.stream] = ["epoch": .string(position.epoch), "offset": .int(position.offset)]
        }
        let command: JSONValue = [
            "command": "history", "identifier": .string(identifier), "history": ["streams": .object(streams)],
        ]
        return (try? command.jsonText()) ?? ""  // strings and integers only: it cannot fail
    }

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
