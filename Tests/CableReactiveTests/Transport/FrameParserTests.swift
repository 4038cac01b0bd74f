import CableReactive
import Testing

@Suite("FrameParser")
struct FrameParserTests {
    /// An unmasked server frame with a payload of `length` bytes of "a".
    static func serverFrame(opcode: UInt8 = 0x1, fin: Bool = true, length: Int) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
        if length <= 125 {
            bytes.append(UInt8(length))
        } else if length <= 0xFFFF {
            bytes += [126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            bytes.append(127)
            bytes += (0..<8).reversed().map { UInt8((UInt64(length) >> UInt64($0 * 8)) & 0xFF) }
        }
        return bytes + [UInt8](repeating: 0x61, count: length)
    }

    @Test("decodes frames of every length encoding", arguments: Feeding.all)
    func decodesLengthClasses(feeding: Feeding) {
        let lengths = [0, 1, 125, 126, 127, 65_535, 65_536, 70_000]
        let bytes = lengths.flatMap { Self.serverFrame(length: $0) }
        let result = parseFrames(bytes, feeding: feeding)
        #expect(result.error == nil)
        #expect(result.frames.map(\.payload.count) == lengths)
        #expect(result.frames.allSatisfy { $0.fin && $0.opcode == .text && $0.payload.allSatisfy { $0 == 0x61 } })
    }

    @Test("decodes fragments with control frames between them", arguments: Feeding.all)
    func decodesInterleavedControlFrames(feeding: Feeding) {
        let bytes: [UInt8] = [0x01, 0x03, 0x61, 0x62, 0x63, 0x89, 0x02, 0x68, 0x69, 0x80, 0x01, 0x64, 0x8A, 0x00]
        let result = parseFrames(bytes, feeding: feeding)
        #expect(result.error == nil)
        #expect(
            result.frames == [
                Frame(fin: false, opcode: .text, payload: Array("abc".utf8)),
                Frame(opcode: .ping, payload: Array("hi".utf8)),
                Frame(opcode: .continuation, payload: Array("d".utf8)),
                Frame(opcode: .pong, payload: []),
            ])
    }

    @Test("keeps the bytes after a complete frame in the input")
    func leavesFollowingBytes() throws {
        var parser = FrameParser(maxFrameSize: 1024)
        var input: ArraySlice<UInt8> = [0x81, 0x01, 0x41, 0x81, 0x01]
        #expect(try parser.parse(&input) == Frame(opcode: .text, payload: [0x41]))
        #expect(Array(input) == [0x81, 0x01])
        #expect(try parser.parse(&input) == nil)
        #expect(input.isEmpty)
    }

    static let hostile: [(name: String, bytes: [UInt8], error: FrameError)] = [
        ("64-bit length above Int.max", [0x81, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0x01], .protocolError(.lengthOverflow)),
        (
            "64-bit binary length above Int.max", [0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0x01],
            .protocolError(.lengthOverflow)
        ),
        (
            "64-bit length with only the top bit", [0x81, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0],
            .protocolError(.lengthOverflow)
        ),
        ("masked server frame", [0x81, 0x81, 1, 2, 3, 4, 0x41], .protocolError(.maskedServerFrame)),
        ("fragmented ping", [0x09, 0x00], .protocolError(.fragmentedControlFrame)),
        ("fragmented close", [0x08, 0x00], .protocolError(.fragmentedControlFrame)),
        ("ping payload of 126 bytes", [0x89, 0x7E, 0x00, 0x7E], .protocolError(.controlFrameTooLong)),
        ("close with a 64-bit length", [0x88, 0x7F, 0, 0, 0, 0, 0, 0, 0, 0x01], .protocolError(.controlFrameTooLong)),
        ("RSV1 without permessage-deflate", [0xC1, 0x00], .protocolError(.reservedBitsSet)),
        ("RSV2", [0xA1, 0x00], .protocolError(.reservedBitsSet)),
        ("RSV3", [0x91, 0x00], .protocolError(.reservedBitsSet)),
        ("frame above maxFrameSize", [0x81, 0x7E, 0x04, 0x01], .messageTooBig),
        ("64-bit frame above maxFrameSize", [0x81, 0x7F, 0, 0, 0, 1, 0, 0, 0, 0], .messageTooBig),
    ]

    @Test("rejects hostile headers before buffering any payload", arguments: hostile.indices)
    func rejectsHostileHeader(index: Int) {
        let (_, bytes, expected) = Self.hostile[index]
        for feeding in Feeding.all {
            let result = parseFrames(bytes, feeding: feeding, maxFrameSize: 1024)
            #expect(result.frames.isEmpty)
            #expect(result.error == expected, "\(feeding.testDescription)")
        }
    }

    @Test("maps each violation to its close code")
    func closeCodes() {
        #expect(FrameError.protocolError(.lengthOverflow).closeCode == 1002)
        #expect(FrameError.messageTooBig.closeCode == 1009)
        #expect(FrameError.invalidUTF8.closeCode == 1007)
        #expect(FrameError.unsupportedData.closeCode == 1003)
    }

    @Test("rejects unknown opcodes", arguments: [0x3, 0x4, 0x5, 0x6, 0x7, 0xB, 0xC, 0xD, 0xE, 0xF] as [UInt8])
    func rejectsUnknownOpcode(opcode: UInt8) {
        let result = parseFrames([0x80 | opcode, 0x00], feeding: .allAtOnce)
        #expect(result.error == .protocolError(.unknownOpcode(opcode)))
        #expect(result.error?.closeCode == 1002)
    }

    @Test("accepts RSV1 only on the first data frame once compression is negotiated", arguments: Feeding.all)
    func compressionBit(feeding: Feeding) {
        let first = parseFrames([0x41, 0x01, 0x61, 0x80, 0x01, 0x62], feeding: feeding, allowsCompression: true)
        #expect(first.error == nil)
        #expect(first.frames.map(\.rsv1) == [true, false])
        let onContinuation = parseFrames(
            [0x41, 0x01, 0x61, 0xC0, 0x01, 0x62], feeding: feeding, allowsCompression: true)
        #expect(onContinuation.error == .protocolError(.reservedBitsSet))
        let onPing = parseFrames([0xC9, 0x00], feeding: feeding, allowsCompression: true)
        #expect(onPing.error == .protocolError(.reservedBitsSet))
    }

    @Test("stays failed after an error")
    func staysFailed() {
        var parser = FrameParser(maxFrameSize: 1024)
        var bad: ArraySlice<UInt8> = [0xA1, 0x00]
        #expect(throws: FrameError.protocolError(.reservedBitsSet)) { try parser.parse(&bad) }
        var good: ArraySlice<UInt8> = [0x81, 0x00]
        #expect(throws: FrameError.protocolError(.reservedBitsSet)) { try parser.parse(&good) }
    }

    @Test("rejects an oversized frame from its header alone")
    func rejectsOversizeEarly() {
        var parser = FrameParser(maxFrameSize: 1 << 14)
        // Header announcing 2^40 bytes; no payload follows. The parser must fail now, not wait.
        var input: ArraySlice<UInt8> = [0x81, 0x7F, 0, 0, 1, 0, 0, 0, 0, 0]
        #expect(throws: FrameError.messageTooBig) { try parser.parse(&input) }
    }

    // MARK: Server role (decoding client frames)

    /// Masked client frames of every length class, each with its own key, as FrameEncoder writes them.
    static func clientFrames(lengths: [Int]) -> (bytes: [UInt8], payloads: [[UInt8]]) {
        var bytes: [UInt8] = []
        var payloads: [[UInt8]] = []
        for (n, length) in lengths.enumerated() {
            let payload = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }
            payloads.append(payload)
            FrameEncoder.encode(
                opcode: .text, payload: payload, maskingKey: 0x9A3C_55F0 &+ UInt32(n), into: &bytes)
        }
        return (bytes, payloads)
    }

    @Test("the server role unmasks client frames of every length encoding", arguments: Feeding.all)
    func serverRoleUnmasks(feeding: Feeding) {
        let (bytes, payloads) = Self.clientFrames(lengths: [0, 1, 3, 4, 5, 125, 126, 127, 65_535, 65_536, 70_000])
        let result = parseFrames(bytes, feeding: feeding, role: .server)
        #expect(result.error == nil)
        #expect(result.frames.map { Array($0.payload) } == payloads)
        #expect(result.frames.allSatisfy { $0.fin && $0.opcode == .text })
    }

    @Test("the server role unmasks control frames between fragments", arguments: Feeding.all)
    func serverRoleControlFrames(feeding: Feeding) {
        var bytes: [UInt8] = []
        FrameEncoder.encode(opcode: .text, payload: Array("ab".utf8), fin: false, maskingKey: 1, into: &bytes)
        FrameEncoder.encode(opcode: .ping, payload: Array("hi".utf8), maskingKey: 0xFFFF_FFFF, into: &bytes)
        FrameEncoder.encode(opcode: .continuation, payload: Array("c".utf8), maskingKey: 7, into: &bytes)
        FrameEncoder.encode(opcode: .close, payload: [0x03, 0xE8], maskingKey: 0x0102_0304, into: &bytes)
        let result = parseFrames(bytes, feeding: feeding, role: .server)
        #expect(result.error == nil)
        #expect(
            result.frames == [
                Frame(fin: false, opcode: .text, payload: Array("ab".utf8)),
                Frame(opcode: .ping, payload: Array("hi".utf8)),
                Frame(opcode: .continuation, payload: Array("c".utf8)),
                Frame(opcode: .close, payload: [0x03, 0xE8]),
            ])
    }

    @Test("the server role rejects unmasked frames; the client role still rejects masked ones")
    func maskingRules() {
        for feeding in Feeding.all {
            let unmasked = parseFrames([0x81, 0x01, 0x41], feeding: feeding, role: .server)
            #expect(unmasked.frames.isEmpty)
            #expect(unmasked.error == .protocolError(.unmaskedClientFrame))
            #expect(unmasked.error?.closeCode == 1002)
            let masked = parseFrames([0x81, 0x81, 1, 2, 3, 4, 0x41], feeding: feeding, role: .client)
            #expect(masked.error == .protocolError(.maskedServerFrame))
        }
    }

    @Test("the server role checks every header rule before reading the key", arguments: hostile.indices)
    func serverRoleHostileHeaders(index: Int) {
        var (_, bytes, expected) = Self.hostile[index]
        guard expected != .protocolError(.maskedServerFrame) else { return }
        bytes[1] |= 0x80  // the same header, masked as a client must
        let result = parseFrames(bytes, feeding: .allAtOnce, maxFrameSize: 1024, role: .server)
        #expect(result.frames.isEmpty)
        #expect(result.error == expected)
    }
}
