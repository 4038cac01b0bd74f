import CableReactive
import Testing

@Suite("FrameEncoder")
struct FrameEncoderTests {
    @Test("writes the 7-bit length and masks the payload")
    func shortFrame() {
        var output: [UInt8] = []
        FrameEncoder.encode(opcode: .text, payload: Array("Hello".utf8), maskingKey: 0x37FA_213D, into: &output)
        // RFC 6455 §5.7: a masked "Hello".
        #expect(output == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    @Test("writes 16-bit and 64-bit lengths", arguments: [(126, 2), (65_535, 2), (65_536, 8)])
    func extendedLengths(length: Int, width: Int) {
        var output: [UInt8] = []
        let payload = [UInt8](repeating: 0x61, count: length)
        FrameEncoder.encode(opcode: .text, payload: payload, maskingKey: 0x0102_0304, into: &output)
        #expect(output[1] == 0x80 | (width == 2 ? 126 : 127))
        let lengthBytes = output[2..<(2 + width)]
        #expect(lengthBytes.reduce(0) { $0 << 8 | Int($1) } == length)
        #expect(Array(output[(2 + width)..<(6 + width)]) == [1, 2, 3, 4])
        #expect(Array(output[(6 + width)...]) == mask(payload, key: [1, 2, 3, 4]))
    }

    @Test("sets FIN and RSV1 as asked and takes the key from the generator")
    func flagsAndGenerator() {
        var generator = FixedGenerator(value: 0xAABB_CCDD)
        var output: [UInt8] = []
        FrameEncoder.encode(
            opcode: .continuation, payload: [], fin: false, rsv1: true, using: &generator, into: &output)
        #expect(output.count == 6)
        #expect(output[0] == 0x40)
        #expect(output[1] == 0x80)
    }
}
