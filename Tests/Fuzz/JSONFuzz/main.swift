// libFuzzer entry point for the JSON parser and the Action Cable frame decoder.
// Built and run by Scripts/fuzz-json (swiftc -sanitize=fuzzer,address -parse-as-library); not a SwiftPM target.
//
// Besides "never crash", it checks invariants and traps (which libFuzzer reports) when one breaks:
// - whatever parses serializes, and the text parses back to an equal value with identical text;
// - byte input and String input agree whenever the bytes are valid UTF-8;
// - the frame decoder's byte and String paths agree;
// - the data-frame fast path (decodeDataFrame) agrees with the full decoder: whenever the full decoder sees
//   a data frame, the fast path accepts it with the same message and an identifier token that parses to the
//   same identifier; it accepts nothing else unless the identifier token is not a valid JSON string (which
//   never matches a token the client wrote, so such frames go to the full decoder).

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
        let fast = CableProtocol.decodeDataFrame(validatedUTF8: bytes)
        // The fast path skips the identifier's string token without checking its contents (the client only
        // compares them with tokens it wrote itself); the range is the contents, between the quotes.
        let token = fast.flatMap { (range, _, _) -> JSONValue? in
            let quoted = [UInt8(ascii: "\"")] + bytes[range] + [UInt8(ascii: "\"")]
            return quoted.withUnsafeBufferPointer { try? JSONValue(parsingUTF8: $0) }
        }
        switch (fast, frameFromBytes) {
        case (let (_, message, position)?, .message(let identifier, let fullMessage, let fullPosition)?):
            precondition(message == fullMessage, "fast path and full decoder disagree on the message")
            precondition(position == fullPosition, "fast path and full decoder disagree on the stream position")
            precondition(token == .string(identifier), "fast path's identifier token is not the identifier")
        case (nil, .message?):
            preconditionFailure("fast path rejected a data frame")
        case (.some, _):
            // Only a token that is not a valid JSON string can make the fast path accept more: such a token
            // never equals one the client wrote, so the client sends the frame to the full decoder.
            precondition(token == nil, "fast path accepted a frame the full decoder does not see as data")
        case (nil, _):
            break
        }
    } else {
        precondition(frameFromBytes == nil, "frame with invalid UTF-8 accepted")
    }
    return 0
}
