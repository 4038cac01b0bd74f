#if os(Linux)
    import CableReactive
    import Testing

    @Suite("MessageDeflater")
    struct MessageDeflaterTests {
        @Test("compresses and inflates the RFC 7692 sample")
        func rfcSample() throws {
            let deflater = try MessageDeflater(parameters: DeflateParameters())
            #expect(deflater.deflate(Array("Hello".utf8)) == [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
            let other = try MessageDeflater(parameters: DeflateParameters())
            #expect(try other.inflate([0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00], limit: 100) == Array("Hello".utf8))
        }

        @Test("uses the previous messages as context unless told not to")
        func contextTakeover() throws {
            let shared = try MessageDeflater(parameters: DeflateParameters())
            let message = Array(String(repeating: "action cable ", count: 20).utf8)
            let first = shared.deflate(message)
            let second = shared.deflate(message)
            #expect(second.count < first.count)
            let reader = try MessageDeflater(parameters: DeflateParameters())
            #expect(try reader.inflate(first, limit: 1000) == message)
            #expect(try reader.inflate(second, limit: 1000) == message)

            let fresh = try MessageDeflater(parameters: DeflateParameters(clientNoContextTakeover: true))
            #expect(fresh.deflate(message) == fresh.deflate(message))
        }

        @Test("sends an empty message as a single zero byte that inflates to nothing")
        func emptyMessage() throws {
            let deflater = try MessageDeflater(parameters: DeflateParameters())
            _ = deflater.deflate(Array("x".utf8))
            #expect(deflater.deflate([]) == [0x00])
            let reader = try MessageDeflater(parameters: DeflateParameters())
            #expect(try reader.inflate([0x00], limit: 10) == [])
        }

        @Test("stops inflating at the size limit")
        func capsInflatedSize() throws {
            let bomb = try MessageDeflater(parameters: DeflateParameters()).deflate(
                [UInt8](repeating: 0, count: 1 << 20))
            #expect(bomb.count < 2000)
            let reader = try MessageDeflater(parameters: DeflateParameters())
            #expect(throws: FrameError.messageTooBig) { try reader.inflate(bomb, limit: 1 << 16) }
        }

        @Test("rejects corrupt data")
        func rejectsGarbage() throws {
            let reader = try MessageDeflater(parameters: DeflateParameters())
            #expect(throws: FrameError.protocolError(.invalidCompressedData)) {
                try reader.inflate([0xFF, 0xFF, 0xFF, 0xFF, 0xFF], limit: 100)
            }
        }
    }
#endif
