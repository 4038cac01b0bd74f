// libFuzzer entry for WebSocketSession (frames, reassembly, UTF-8, close handshake and
// permessage-deflate inflation with its size cap). Built by Scripts/fuzz-frame-parser as a second
// binary; not part of the SwiftPM package.
//
// Input layout: byte 0 picks the chunk size (1...64) and whether permessage-deflate is on; the rest
// is the byte stream "from the server". Masking keys are fixed, so feeding the same stream in chunks
// and all at once must give identical messages, identical bytes sent back and the same outcome.

private struct Outcome: Equatable {
    var texts: [String] = []
    var sent: [UInt8] = []
    var outcome: WebSocketCloseInfo?
}

private struct FixedGenerator: RandomNumberGenerator {
    mutating func next() -> UInt64 { 0x0102_0304 }
}

private func run(_ stream: ArraySlice<UInt8>, chunk: Int, deflate: Bool) -> Outcome {
    let deflater = deflate ? try? MessageDeflater(parameters: DeflateParameters()) : nil
    var session = WebSocketSession(
        maxFrameSize: 4096, maxMessageSize: 8192, deflater: deflater, random: FixedGenerator())
    var result = Outcome()
    var start = stream.startIndex
    while start < stream.endIndex {
        let end = min(start + chunk, stream.endIndex)
        var input = stream[start..<end]
        start = end
        session.receive(&input, output: &result.sent) { text in
            if text.utf8.count > 8192 { preconditionFailure("fuzz invariant: message above the limit") }
            result.texts.append(text)
        }
    }
    result.outcome = session.outcome
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSession(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let chunk = Int(bytes[0] & 0x3F) + 1
    let deflate = bytes[0] & 0x40 != 0
    let chunked = run(bytes[1...], chunk: chunk, deflate: deflate)
    let whole = run(bytes[1...], chunk: max(1, size - 1), deflate: deflate)
    if chunked != whole { preconditionFailure("fuzz invariant: chunked and whole feeding disagree") }
    return 0
}
