// libFuzzer entry point for the JSON parser and the Action Cable frame decoder.
// Built and run by Scripts/fuzz-json (swiftc -sanitize=fuzzer,address -parse-as-library); not a SwiftPM target.
//
// Besides "never crash", it checks invariants and traps (which libFuzzer reports) when one breaks:
// - whatever parses serializes, and the text parses back to an equal value with identical text;
// - byte input and String input agree whenever the bytes are valid UTF-8;
// - the frame decoder's byte and String paths agree.

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
    } else {
        precondition(frameFromBytes == nil, "frame with invalid UTF-8 accepted")
    }
    return 0
}
