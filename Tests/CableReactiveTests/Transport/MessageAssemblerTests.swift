import CableReactive
import Testing

@Suite("MessageAssembler")
struct MessageAssemblerTests {
    @Test("joins fragments and passes control frames through in between")
    func joinsFragments() throws {
        var assembler = MessageAssembler(maxMessageSize: 100)
        #expect(try assembler.push(Frame(fin: false, opcode: .text, payload: Array("ab".utf8))) == nil)
        #expect(try assembler.push(Frame(opcode: .ping, payload: [1, 2])) == .ping([1, 2]))
        #expect(try assembler.push(Frame(fin: false, opcode: .continuation, payload: Array("c".utf8))) == nil)
        #expect(try assembler.push(Frame(opcode: .pong, payload: [])) == .pong)
        #expect(
            try assembler.push(Frame(opcode: .continuation, payload: Array("d".utf8)))
                == .text(ArraySlice("abcd".utf8), compressed: false))
        #expect(try assembler.push(Frame(opcode: .text, payload: [0x65])) == .text([0x65], compressed: false))
    }

    @Test("rejects a continuation without a message")
    func rejectsStrayContinuation() {
        var assembler = MessageAssembler(maxMessageSize: 100)
        #expect(throws: FrameError.protocolError(.unexpectedContinuation)) {
            try assembler.push(Frame(opcode: .continuation, payload: []))
        }
    }

    @Test("rejects a new message inside a fragmented one")
    func rejectsNestedMessage() throws {
        var assembler = MessageAssembler(maxMessageSize: 100)
        _ = try assembler.push(Frame(fin: false, opcode: .text, payload: []))
        #expect(throws: FrameError.protocolError(.expectedContinuation)) {
            try assembler.push(Frame(opcode: .text, payload: []))
        }
        #expect(throws: FrameError.protocolError(.expectedContinuation)) {
            try assembler.push(Frame(opcode: .binary, payload: []))
        }
    }

    @Test("limits the size of the whole message, not just each frame")
    func limitsMessageSize() throws {
        var assembler = MessageAssembler(maxMessageSize: 10)
        _ = try assembler.push(Frame(fin: false, opcode: .text, payload: [UInt8](repeating: 0x61, count: 6)))
        _ = try assembler.push(Frame(fin: false, opcode: .continuation, payload: [UInt8](repeating: 0x61, count: 4)))
        #expect(throws: FrameError.messageTooBig) {
            try assembler.push(Frame(opcode: .continuation, payload: [0x61]))
        }
        var single = MessageAssembler(maxMessageSize: 10)
        #expect(throws: FrameError.messageTooBig) {
            try single.push(Frame(opcode: .text, payload: [UInt8](repeating: 0x61, count: 11)))
        }
    }

    @Test("refuses binary messages with 1003")
    func refusesBinary() {
        var assembler = MessageAssembler(maxMessageSize: 10)
        #expect(throws: FrameError.unsupportedData) { try assembler.push(Frame(opcode: .binary, payload: [1])) }
        #expect(FrameError.unsupportedData.closeCode == 1003)
    }

    @Test("marks a message compressed when its first frame had RSV1")
    func marksCompressed() throws {
        var assembler = MessageAssembler(maxMessageSize: 10)
        _ = try assembler.push(Frame(fin: false, rsv1: true, opcode: .text, payload: [1]))
        #expect(try assembler.push(Frame(opcode: .continuation, payload: [2])) == .text([1, 2], compressed: true))
    }
}

@Suite("UTF8Validation")
struct UTF8ValidationTests {
    @Test(
        "accepts well-formed UTF-8",
        arguments: [
            "", "plain ascii that is longer than eight bytes", "é", "€", "𝄞", "mixed é€𝄞 text 12345678", "\u{10FFFF}",
        ])
    func acceptsValid(text: String) throws {
        #expect(UTF8Validation.isValid(Array(text.utf8)))
        #expect(try UTF8Validation.decode(Array(text.utf8)) == text)
    }

    @Test(
        "rejects malformed UTF-8",
        arguments: [
            [0x80], [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF5, 0x80, 0x80, 0x80], [0xE2, 0x82], [0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0xFF],
            [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5, 0xED, 0xA0, 0x80], [0xFE], [0xFF],
        ] as [[UInt8]])
    func rejectsInvalid(bytes: [UInt8]) {
        #expect(!UTF8Validation.isValid(bytes))
        #expect(throws: FrameError.invalidUTF8) { try UTF8Validation.decode(bytes) }
    }
}

@Suite("ClosePayload")
struct ClosePayloadTests {
    @Test("decodes a code and reason, and an empty body as no code")
    func decodes() throws {
        #expect(try ClosePayload.decode([0x03, 0xE8] + Array("bye".utf8)) == ClosePayload(code: 1000, reason: "bye"))
        #expect(try ClosePayload.decode([]) == ClosePayload(code: nil, reason: ""))
    }

    @Test("rejects a one-byte body")
    func rejectsOneByte() {
        #expect(throws: FrameError.protocolError(.invalidClosePayload)) { try ClosePayload.decode([0x03]) }
    }

    @Test(
        "rejects codes that may not be sent",
        arguments: [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65_535] as [UInt16])
    func rejectsCode(code: UInt16) {
        #expect(throws: FrameError.protocolError(.invalidCloseCode(code))) {
            try ClosePayload.decode([UInt8(code >> 8), UInt8(code & 0xFF)])
        }
    }

    @Test(
        "accepts defined, registered and private codes",
        arguments: [1000, 1001, 1002, 1003, 1007, 1011, 1014, 3000, 4999] as [UInt16])
    func acceptsCode(code: UInt16) throws {
        #expect(try ClosePayload.decode([UInt8(code >> 8), UInt8(code & 0xFF)]).code == code)
    }

    @Test("rejects a reason that is not UTF-8")
    func rejectsBadReason() {
        #expect(throws: FrameError.invalidUTF8) { try ClosePayload.decode([0x03, 0xE8, 0xC3, 0x28]) }
    }

    @Test("cuts a long reason to 123 bytes on a character boundary")
    func cutsReason() {
        let reason = String(repeating: "a", count: 122) + "éé"
        let encoded = ClosePayload(code: 1000, reason: reason).encoded
        #expect(encoded.count == 2 + 122)
        #expect(ClosePayload(code: nil, reason: "ignored").encoded.isEmpty)
    }

    @Test(
        "a close we send keeps a code that may be sent and turns any other into 1000",
        arguments: [
            (1000, 1000), (1001, 1001), (1003, 1003), (1011, 1011), (3000, 3000), (4001, 4001), (4999, 4999),
            (0, 1000), (1004, 1000), (1005, 1000), (1006, 1000), (1015, 1000), (2000, 1000), (5000, 1000),
        ] as [(UInt16, UInt16)])
    func sendingCode(code: UInt16, sent: UInt16) {
        let payload = ClosePayload(sending: code, reason: "bye")
        #expect(payload == ClosePayload(code: sent, reason: "bye"))
        #expect(payload.encoded == [UInt8(sent >> 8), UInt8(sent & 0xFF)] + Array("bye".utf8))
    }

    @Test("the reason sent alone (URLSession's cancel(with:reason:)) is the encoded payload without its code")
    func encodedReason() {
        let reason = String(repeating: "a", count: 121) + "éé"
        let payload = ClosePayload(code: 1000, reason: reason)
        #expect(payload.encodedReason == Array((String(repeating: "a", count: 121) + "é").utf8))
        #expect(Array(payload.encoded.dropFirst(2)) == payload.encodedReason)
    }
}
