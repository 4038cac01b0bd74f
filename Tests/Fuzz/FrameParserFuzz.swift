// libFuzzer entry for the frame layer. Built by Scripts/fuzz-frame-parser together with the pure
// frame sources only (FrameParser, MessageAssembler, ClosePayload, UTF8Validation, ...), so it needs
// nothing else from the module. Not part of the SwiftPM package.
//
// Input layout: byte 0 picks the feeding (chunk size 1...64), whether compression is allowed and
// (top bit) the parser's role, server (masked client frames) or client; the rest is the byte stream. Beyond "never crash", it checks invariants:
// feeding in chunks gives exactly the same frames and error as feeding everything at once, no frame
// exceeds its limits, control frames are final and short, and a failed parser stays failed.

private struct Outcome: Equatable {
    var frames: [Frame] = []
    var error: FrameError?
    var messages: [String] = []
    var messageError: FrameError?
}

private let maxFrameSize = 4096
private let maxMessageSize = 8192

private func run(_ stream: ArraySlice<UInt8>, chunk: Int, compression: Bool, role: FrameParser.Role) -> Outcome {
    var parser = FrameParser(maxFrameSize: maxFrameSize, allowsCompression: compression, role: role)
    var assembler = MessageAssembler(maxMessageSize: maxMessageSize)
    var outcome = Outcome()
    var start = stream.startIndex
    feeding: while start < stream.endIndex {
        let end = min(start + chunk, stream.endIndex)
        var input = stream[start..<end]
        start = end
        do {
            while let frame = try parser.parse(&input) {
                check(frame)
                outcome.frames.append(frame)
                guard outcome.messageError == nil else { continue }
                do {
                    switch try assembler.push(frame) {
                    case .text(let payload, _)?:
                        check(payload.count <= maxMessageSize, "message above the limit")
                        outcome.messages.append(try UTF8Validation.decode(payload))
                    case .close(let payload)?:
                        if let code = payload.code { check(ClosePayload.isSendable(code), "bad close code accepted") }
                    default:
                        break
                    }
                } catch {
                    outcome.messageError = error
                }
            }
            check(input.isEmpty, "parser stopped with input left")
        } catch {
            outcome.error = error
            // A failed parser must keep failing with the same error.
            var more: ArraySlice<UInt8> = [0x81, 0x00]
            do {
                _ = try parser.parse(&more)
                check(false, "parser recovered after an error")
            } catch let again {
                check(again == error, "parser changed its error")
            }
            break feeding
        }
    }
    return outcome
}

private func check(_ frame: Frame) {
    check(frame.payload.count <= maxFrameSize, "frame above maxFrameSize")
    if frame.opcode.isControl {
        check(frame.fin, "fragmented control frame accepted")
        check(frame.payload.count <= 125, "long control frame accepted")
        check(!frame.rsv1, "RSV1 on a control frame accepted")
    }
}

private func check(_ condition: Bool, _ message: StaticString) {
    if !condition { preconditionFailure("fuzz invariant: \(message)") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrameParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let chunk = Int(bytes[0] & 0x3F) + 1
    let compression = bytes[0] & 0x40 != 0
    let role: FrameParser.Role = bytes[0] & 0x80 != 0 ? .server : .client
    let stream = bytes[1...]
    let chunked = run(stream, chunk: chunk, compression: compression, role: role)
    let whole = run(stream, chunk: max(1, stream.count), compression: compression, role: role)
    check(chunked == whole, "chunked and whole feeding disagree")
    return 0
}
