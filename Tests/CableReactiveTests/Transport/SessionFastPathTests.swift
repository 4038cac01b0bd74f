#if os(Linux)
    import CableReactive
    import CableTesting
    import Testing

    /// The session's fast path for plain text frames must agree with its frame parser on every input: the
    /// same stream fed at once (fast path) and byte by byte (parser only) gives the same texts, the same
    /// bytes back and the same outcome.
    @Suite("WebSocketSession fast path")
    struct SessionFastPathTests {
        static func frame(_ first: UInt8, _ payload: [UInt8], masked: Bool = false) -> [UInt8] {
            var bytes = [first]
            let mask: UInt8 = masked ? 0x80 : 0
            if payload.count <= 125 {
                bytes.append(UInt8(payload.count) | mask)
            } else if payload.count <= 0xFFFF {
                bytes += [126 | mask, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
            } else {
                bytes.append(127 | mask)
                bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) }
            }
            if masked { bytes += [0, 0, 0, 0] }
            return bytes + payload
        }

        /// One random frame: mostly plain text (short, 16-bit, over the limit), sometimes anything else.
        static func randomFrame(_ random: inout SeededRandom) -> [UInt8] {
            let text = Array("héllo wörld ".utf8)
            let payload = (0..<Int.random(in: 0...300, using: &random)).map { text[$0 % text.count] }
            switch Int.random(in: 0..<14, using: &random) {
            case 0..<6: return frame(0x81, payload)
            case 6: return frame(0x81, payload + [0xC3, 0x28])  // bad UTF-8
            case 7: return frame(0x81, Array(repeating: 0x61, count: 200))  // above the 150-byte limit
            case 8: return frame(0x01, payload) + frame(0x80, payload)  // fragmented
            case 9: return frame(0x89, Array(payload.prefix(20)))  // ping
            case 10: return frame(0x81, payload, masked: true)  // masked: a violation
            case 11: return frame(0xC1, payload)  // RSV1 without deflate: a violation
            case 12: return [0x81, 0x7E, 0x00, 0x05] + Array("short".utf8)  // 16-bit length for 5 bytes
            default: return frame(0x88, [0x03, 0xE8])  // close
            }
        }

        static func run(_ bytes: [UInt8], chunk: Int) -> (texts: [String], sent: [UInt8], outcome: WebSocketCloseInfo?)
        {
            var session = WebSocketSession(
                maxFrameSize: 150, maxMessageSize: 600, random: FixedGenerator(value: 0x0102_0304))
            var texts: [String] = []
            var sent: [UInt8] = []
            for start in stride(from: 0, to: bytes.count, by: chunk) {
                var input = bytes[start..<min(start + chunk, bytes.count)]
                session.receive(&input, output: &sent) { texts.append($0) }
            }
            return (texts, sent, session.outcome)
        }

        @Test("ping() writes a masked ping frame with no payload; a pong from the peer is taken once")
        func pingAndPong() {
            var session = WebSocketSession(
                maxFrameSize: 150, maxMessageSize: 600, random: FixedGenerator(value: 0x0102_0304))
            var output: [UInt8] = []
            session.ping(output: &output)
            #expect(output.count == 6)  // FIN|ping, MASK|0, four mask bytes
            #expect(output.prefix(2) == [0x89, 0x80])
            let early = session.takePong()
            #expect(!early)
            var input = ArraySlice(Self.frame(0x8A, []) + Self.frame(0x81, Array("hi".utf8)))
            var texts: [String] = []
            session.receive(&input, output: &output) { texts.append($0) }
            #expect(texts == ["hi"])
            let first = session.takePong()
            let second = session.takePong()
            #expect(first && !second)
        }

        @Test("agrees with the frame parser on random streams", arguments: 0..<200)
        func agrees(seed: Int) {
            var random = SeededRandom(seed: UInt64(seed))
            var bytes: [UInt8] = []
            for _ in 0..<Int.random(in: 1...12, using: &random) { bytes += Self.randomFrame(&random) }
            let fast = Self.run(bytes, chunk: bytes.count)
            let slow = Self.run(bytes, chunk: 1)
            #expect(fast.texts == slow.texts, "seed \(seed)")
            #expect(fast.sent == slow.sent, "seed \(seed)")
            #expect(fast.outcome == slow.outcome, "seed \(seed)")
        }

        @Test("takes a run of plain text frames whole and in order")
        func deliversPlainRun() {
            let texts = (0..<50).map { "message \($0) " + String(repeating: "x", count: $0 * 2) }
            let bytes = texts.flatMap { Self.frame(0x81, Array($0.utf8)) }
            let result = Self.run(bytes, chunk: bytes.count)
            #expect(result.texts == texts)
            #expect(result.sent.isEmpty)
            #expect(result.outcome == nil)
        }

        @Test("leaves a text frame over the limit to the parser, which closes with 1009")
        func oversizeTextCloses() {
            let bytes = Self.frame(0x81, Array("ok".utf8)) + Self.frame(0x81, Array(repeating: 0x61, count: 151))
            let result = Self.run(bytes, chunk: bytes.count)
            #expect(result.texts == ["ok"])
            #expect(result.outcome == .failed(WebSocketError(.messageTooBig(limit: 150))))
        }
    }
#endif
