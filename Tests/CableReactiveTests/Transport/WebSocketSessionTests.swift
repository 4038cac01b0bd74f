#if os(Linux)
    import CableReactive
    import Testing

    @Suite("WebSocketSession")
    struct WebSocketSessionTests {
        /// Masking key bytes 01 02 03 04 for every frame we send.
        static let key: [UInt8] = [1, 2, 3, 4]

        static func makeSession(maxFrameSize: Int = 1 << 16, maxMessageSize: Int = 1 << 16) -> WebSocketSession {
            WebSocketSession(
                maxFrameSize: maxFrameSize,
                maxMessageSize: maxMessageSize,
                random: FixedGenerator(value: 0x0102_0304)
            )
        }

        /// The exact close frame a client sends for `code` with an empty reason.
        static func closeFrame(_ code: UInt16) -> [UInt8] {
            [0x88, 0x82] + key + mask([UInt8(code >> 8), UInt8(code & 0xFF)], key: key)
        }

        /// Feeds `bytes` as `feeding` says and returns texts, bytes sent back, and the session.
        static func run(
            _ bytes: [UInt8],
            feeding: Feeding = .allAtOnce,
            session: WebSocketSession = makeSession()
        ) -> (texts: [String], sent: [UInt8], session: WebSocketSession) {
            var session = session
            var texts: [String] = []
            var sent: [UInt8] = []
            for chunk in feeding.split(bytes) {
                var input = chunk[...]
                session.receive(&input, output: &sent) { texts.append($0) }
            }
            return (texts, sent, session)
        }

        static let violations: [(name: String, bytes: [UInt8], code: UInt16)] = [
            ("64-bit length above Int.max", [0x81, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0x01], 1002),
            ("masked server frame", [0x81, 0x81, 1, 2, 3, 4, 0x41], 1002),
            ("fragmented control frame", [0x09, 0x00], 1002),
            ("control payload above 125", [0x89, 0x7E, 0x00, 0x7E], 1002),
            ("bad UTF-8", [0x81, 0x02, 0xC3, 0x28], 1007),
            ("bad UTF-8 across fragments", [0x01, 0x01, 0xC3, 0x80, 0x01, 0x28], 1007),
            ("reserved bits", [0xB1, 0x00], 1002),
            ("unknown opcode", [0x83, 0x00], 1002),
            ("continuation without a message", [0x80, 0x00], 1002),
            ("close body of one byte", [0x88, 0x01, 0x03], 1002),
            ("close code 1006 on the wire", [0x88, 0x02, 0x03, 0xEE], 1002),
            ("close reason not UTF-8", [0x88, 0x04, 0x03, 0xE8, 0xC3, 0x28], 1007),
            ("binary message", [0x82, 0x01, 0x00], 1003),
            ("frame above maxFrameSize", [0x81, 0x7F, 0, 0, 0, 0, 0, 1, 0, 1], 1009),
        ]

        @Test("answers each violation with the exact close frame and fails", arguments: violations.indices)
        func answersViolation(index: Int) {
            let (name, bytes, code) = Self.violations[index]
            for feeding in Feeding.all {
                let (texts, sent, session) = Self.run(bytes, feeding: feeding)
                #expect(texts.isEmpty, "\(name)")
                #expect(sent == Self.closeFrame(code), "\(name), \(feeding.testDescription)")
                let expected = WebSocketCloseCode(rawValue: code)
                #expect(session.outcome?.failureKind?.closeCode == expected, "\(name)")
                if expected == .messageTooBig {
                    #expect(session.outcome?.failureKind == .messageTooBig(limit: 1 << 16), "\(name): the limit")
                } else {
                    #expect(session.outcome?.failureKind == .protocolViolation(closeCode: expected), "\(name)")
                }
                #expect(!session.isOpen)
            }
        }

        @Test("fails with 1009 when the fragments of a message exceed maxMessageSize")
        func limitsMessage() {
            let fragment: [UInt8] = [0x00, 0x05] + [UInt8](repeating: 0x61, count: 5)
            let bytes = [0x01, 0x05] + [UInt8](repeating: 0x61, count: 5) + fragment + [0x80, 0x01, 0x61]
            let (_, sent, session) = Self.run(bytes, session: Self.makeSession(maxMessageSize: 10))
            #expect(sent == Self.closeFrame(1009))
            #expect(session.outcome?.failureKind == .messageTooBig(limit: 10))
            #expect(session.outcome?.failureKind?.closeCode == .messageTooBig)
        }

        @Test("delivers text and answers a ping between fragments with the same payload", arguments: Feeding.all)
        func answersPing(feeding: Feeding) {
            let bytes: [UInt8] = [0x01, 0x02, 0x68, 0x65, 0x89, 0x03, 0x61, 0x62, 0x63, 0x80, 0x03, 0x6C, 0x6C, 0x6F]
            let (texts, sent, session) = Self.run(bytes, feeding: feeding)
            #expect(texts == ["hello"])
            #expect(sent == [0x8A, 0x83] + Self.key + mask(Array("abc".utf8), key: Self.key))
            #expect(session.outcome == nil)
        }

        @Test("while pongs are held, only the newest ping is answered, once released", arguments: Feeding.all)
        func holdsPongs(feeding: Feeding) {
            var session = Self.makeSession()
            session.holdsPongs = true
            // Three pings ("a", "bb", "ccc") and a text between them: the text is delivered, no pong is written.
            let pings: [UInt8] =
                [0x89, 0x01, 0x61, 0x81, 0x02, 0x68, 0x69, 0x89, 0x02, 0x62, 0x62, 0x89, 0x03]
                + Array("ccc".utf8)
            let (texts, sent, held) = Self.run(pings, feeding: feeding, session: session)
            #expect(texts == ["hi"])
            #expect(sent.isEmpty)
            session = held
            session.holdsPongs = false
            var output: [UInt8] = []
            session.releaseHeldPong(into: &output)
            #expect(output == [0x8A, 0x83] + Self.key + mask(Array("ccc".utf8), key: Self.key))
            output.removeAll()
            session.releaseHeldPong(into: &output)
            #expect(output.isEmpty)
            // Not holding: each ping is answered at once, as before.
            let (_, answered, _) = Self.run([0x89, 0x00, 0x89, 0x00], feeding: feeding, session: session)
            #expect(answered == ([0x8A, 0x80] + Self.key) + ([0x8A, 0x80] + Self.key))
        }

        @Test("a held pong is dropped once a close frame was received or sent")
        func heldPongAfterClose() {
            var session = Self.makeSession()
            session.holdsPongs = true
            var (_, sent, held) = Self.run([0x89, 0x01, 0x61, 0x88, 0x00], session: session)
            #expect(sent == [0x88, 0x80] + Self.key)  // the close reply only
            var output: [UInt8] = []
            held.releaseHeldPong(into: &output)
            #expect(output.isEmpty)

            session = Self.makeSession()
            session.holdsPongs = true
            (_, sent, held) = Self.run([0x89, 0x01, 0x61], session: session)
            #expect(sent.isEmpty)
            held.close(code: .normalClosure, reason: "", output: &output)
            output.removeAll()
            held.releaseHeldPong(into: &output)
            #expect(output.isEmpty)
        }

        @Test("accepts a character split across fragments", arguments: Feeding.all)
        func acceptsSplitCharacter(feeding: Feeding) {
            // "é" is C3 A9: the first fragment ends mid-character, which is fine until the message ends.
            let bytes: [UInt8] = [0x01, 0x02, 0x61, 0xC3, 0x80, 0x02, 0xA9, 0x62]
            let (texts, sent, session) = Self.run(bytes, feeding: feeding)
            #expect(texts == ["aéb"])
            #expect(sent.isEmpty)
            #expect(session.outcome == nil)
        }

        @Test("echoes the peer's close code and reports the peer's code and reason")
        func peerCloses() {
            let (_, sent, session) = Self.run([0x88, 0x05, 0x0F, 0xA1] + Array("bye".utf8))
            #expect(sent == Self.closeFrame(4001))
            #expect(session.outcome == .closed(code: WebSocketCloseCode(rawValue: 4001), reason: "bye"))
        }

        @Test("answers an empty close with an empty close and reports 1005")
        func peerClosesWithoutCode() {
            let (_, sent, session) = Self.run([0x88, 0x00])
            #expect(sent == [0x88, 0x80] + Self.key)
            #expect(session.outcome == .closed(code: .noStatusReceived, reason: ""))
        }

        @Test("reports our own code when the peer answers our close, and sends nothing more")
        func weClose() {
            var session = Self.makeSession()
            var sent: [UInt8] = []
            session.close(code: .goingAway, reason: "bye", output: &sent)
            #expect(sent == [0x88, 0x85] + Self.key + mask([0x03, 0xE9] + Array("bye".utf8), key: Self.key))
            #expect(!session.isOpen)
            session.send(text: Array("late".utf8), output: &sent)
            session.close(code: .normalClosure, reason: "again", output: &sent)
            #expect(sent.count == 11)
            let (texts, reply, closed) = Self.run(
                [0x81, 0x01, 0x61, 0x89, 0x00, 0x88, 0x02, 0x03, 0xE8], session: session)
            #expect(texts.isEmpty)  // data after our close is dropped
            #expect(reply.isEmpty)  // no pong and no second close
            #expect(closed.outcome == .closed(code: .goingAway, reason: "bye"))
        }

        @Test("replaces a close code that may not be sent with 1000")
        func replacesReservedCode() {
            var session = Self.makeSession()
            var sent: [UInt8] = []
            session.close(code: .abnormalClosure, reason: "", output: &sent)
            #expect(sent == Self.closeFrame(1000))
        }

        @Test("ignores input after the outcome is decided")
        func ignoresAfterOutcome() {
            let (texts, sent, session) = Self.run([0x88, 0x00, 0x81, 0x01, 0x61])
            #expect(texts.isEmpty)
            #expect(sent.count == 6)
            #expect(session.outcome == .closed(code: .noStatusReceived, reason: ""))
        }

        @Test("reports an abnormal closure when the transport ends first")
        func connectionLost() {
            var session = Self.makeSession()
            session.connectionLost()
            #expect(session.outcome?.failureKind == .abnormalClosure)
        }
    }

    extension WebSocketCloseInfo {
        var failureKind: WebSocketError.Kind? {
            if case .failed(let error) = self { return error.kind }
            return nil
        }
    }
#endif
