// libFuzzer entry point for the JSON parser and the Action Cable frame decoder.
// Built and run by Scripts/fuzz-json (swiftc -sanitize=fuzzer,address -parse-as-library); not a SwiftPM target.
//
// Besides "never crash", it checks invariants and traps (which libFuzzer reports) when one breaks:
// - whatever parses serializes, and the text parses back to an equal value with identical text;
// - byte input and String input agree whenever the bytes are valid UTF-8;
// - the frame decoder's byte and String paths agree, and keeping a message's text instead of parsing it changes
//   nothing but its form;
// - the frame decoder agrees with a reference (referenceFrame below) that applies the rules of
//   CableProtocol.decode(_:) to the frame parsed whole as a JSONValue, sharing no code with the decoder but the
//   JSON parser: decodeFrame gives a control frame exactly when the reference does, the same one, and a data
//   frame exactly when the reference does, with the same message and position and a token (the contents of a
//   string token in the input) that reads as the same identifier, or one that reads as nothing when the
//   reference rejects the frame (a malformed identifier, which never matches a token the client wrote).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let text = String(decoding: bytes, as: UTF8.self)
    let isValidUTF8 = text.utf8.elementsEqual(bytes)

    let fromBytes = Result { () throws(JSONParseError) in try JSONValue(parsingUTF8: bytes) }
    let fromText = Result { () throws(JSONParseError) in try JSONValue(parsing: text) }
    if isValidUTF8 {
        switch (fromBytes, fromText) {
        case (.success(let a), .success(let b)):
            precondition(a == b, "byte and String parses differ")
        case (.failure(let a), .failure(let b)):
            precondition(a == b, "byte and String errors differ: \(a) vs \(b)")
        default:
            preconditionFailure("byte and String parses disagree on validity")
        }
    } else if case .success = fromBytes {
        preconditionFailure("invalid UTF-8 accepted")
    }

    if case .success(let value) = fromText {
        guard let serialized = try? value.jsonText() else { preconditionFailure("parsed value did not serialize") }
        guard let reparsed = try? JSONValue(parsing: serialized) else { preconditionFailure("output did not parse") }
        precondition(reparsed == value, "round trip changed the value: \(serialized)")
        precondition(reparsed.description == serialized, "serialization is not canonical: \(serialized)")
    }

    let frame = CableProtocol.decode(text)
    let frameFromBytes = CableProtocol.decode(utf8: bytes)
    if isValidUTF8 {
        precondition(frame == frameFromBytes, "frame decoders disagree")
        let reference = referenceFrame(text)
        precondition(frame == reference, "the decoder disagrees with the reference")
        // Keeping a data frame's message as text (for typed consumers) changes nothing else, and the text kept
        // is one JSON value, the one the parse gives.
        let parsed = CableProtocol.decodeFrame(validatedUTF8: bytes)
        let kept = CableProtocol.decodeFrame(validatedUTF8: bytes) { _ in true }
        precondition(kept == parsed, "keeping the message's text changes the frame")
        if case .message(_, .text(let text), _)? = kept {
            precondition((try? JSONValue(parsingUTF8: text)) != nil, "the text kept is not one JSON value")
        }
        switch parsed {
        case .message(let token, let message, let position)?:
            let quote = UInt8(ascii: "\"")
            precondition(token.lowerBound > 0 && token.upperBound < bytes.count, "token out of bounds")
            precondition(bytes[token.lowerBound - 1] == quote && bytes[token.upperBound] == quote, "token unquoted")
            let identifier = CableProtocol.identifier(token: token, in: bytes)
            // The token read independently: its bytes, quoted, parsed as JSON.
            let quoted = [quote] + bytes[token] + [quote]
            let parsed = quoted.withUnsafeBufferPointer { try? JSONValue(parsingUTF8: $0) }
            precondition(parsed?.stringValue == identifier, "identifier(token:in:) misreads the token")
            switch reference {
            case .message(let referenceIdentifier, let referenceMessage, let referencePosition)?:
                precondition(identifier == referenceIdentifier, "the token is not the identifier")
                precondition(
                    message == .value(referenceMessage), "decodeFrame and the reference disagree on the message")
                precondition(position == referencePosition, "decodeFrame and the reference disagree on the position")
            case nil:
                precondition(identifier == nil, "decodeFrame found data in a frame the reference rejects")
            case .some:
                preconditionFailure("decodeFrame found data in a control frame")
            }
        case .control(let control)?:
            precondition(ServerFrame(control) == reference, "decodeFrame and the reference disagree on a control frame")
        case nil:
            precondition(reference == nil, "decodeFrame rejected a frame the reference accepts")
        }
    } else {
        precondition(frameFromBytes == nil, "frame with invalid UTF-8 accepted")
    }
    return 0
}

/// The rules of CableProtocol.decode(_:) (its doc comment), applied to the frame parsed whole.
func referenceFrame(_ text: String) -> ServerFrame? {
    guard case .object(let object)? = try? JSONValue(parsing: text) else { return nil }
    let type = object["type"]?.stringValue
    let identifier = object["identifier"]?.stringValue
    let identified: [String: (String) -> ServerFrame] = [
        "confirm_subscription": ServerFrame.confirm, "reject_subscription": ServerFrame.reject,
        "confirm_history": ServerFrame.historyConfirmed, "reject_history": ServerFrame.historyRejected,
    ]
    if let type, let make = identified[type] { return identifier.map(make) }
    if let identifier, let message = object["message"] {
        var position: StreamPosition?
        if case .string(let stream)? = object["stream_id"], case .string(let epoch)? = object["epoch"],
            let offset = object["offset"]?.intValue
        {
            position = StreamPosition(stream: stream, epoch: epoch, offset: offset)
        }
        return .message(identifier: identifier, message: message, position: position)
    }
    switch type {
    case "welcome":
        let sessionID = object["sid"]?.stringValue
        guard object["restored"] == .bool(true) else { return .welcome(sessionID: sessionID, restored: nil) }
        let restored = object["restored_ids"]?.arrayValue?.compactMap(\.stringValue)
        return .welcome(sessionID: sessionID, restored: .init(identifiers: restored))
    case "ping":
        return .ping
    case "pong":
        return .pong
    case "disconnect":
        var reason: String?
        switch object["reason"] {
        case nil, .null?: break
        case .string(let text)?: reason = text
        default: return .unknown
        }
        var reconnect: Bool?
        switch object["reconnect"] {
        case nil, .null?: break
        case .bool(let flag)?: reconnect = flag
        default: return .unknown
        }
        return .disconnect(reason: reason, reconnect: reconnect)
    default:
        return object["identifier"] != nil && identifier == nil ? nil : .unknown
    }
}
