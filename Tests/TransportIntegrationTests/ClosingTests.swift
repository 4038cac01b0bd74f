#if os(Linux)
    import CableReactive
    import Foundation
    import Testing

    extension TransportIntegrationTests {
        @Test("reports the server's close code and reason")
        func serverCloses() throws {
            let peer = try Peers.plain.get()
            let (_, recorder) = connect("ws://127.0.0.1:\(peer.port)/close?code=4001&reason=gone%20fishing")
            #expect(recorder.waitClosed() == .closed(code: WebSocketCloseCode(rawValue: 4001), reason: "gone fishing"))
            #expect(recorder.events.first == .opened(protocol: nil))
        }

        @Test("reports 1005 for a close frame without a code")
        func serverClosesWithoutCode() throws {
            let peer = try Peers.plain.get()
            let (_, recorder) = connect("ws://127.0.0.1:\(peer.port)/close-empty")
            #expect(recorder.waitClosed() == .closed(code: .noStatusReceived, reason: ""))
        }

        @Test("sends the caller's close code and reason to the server")
        func clientCloses() throws {
            let peer = try Peers.plain.get()
            let id = UUID().uuidString
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/echo?id=\(id)")
            recorder.waitOpened()
            connection.close(code: WebSocketCloseCode(rawValue: 4321), reason: "see you")
            #expect(recorder.waitClosed() == .closed(code: WebSocketCloseCode(rawValue: 4321), reason: "see you"))
            #expect(try lastClose(id: id) == "4321 see you")
        }

        @Test("reports an abnormal closure when the server drops TCP without a close frame")
        func serverDrops() throws {
            let peer = try Peers.plain.get()
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/drop")
            #expect(recorder.waitClosed()?.failureKind == .abnormalClosure)
            #expect(!connection.send(text: "after drop"))
        }

        @Test(
            "fails with the right close code and tells the server when it breaks the protocol",
            arguments: [
                ("8f00", WebSocketCloseCode.protocolError),  // unknown opcode 0xF
                ("c100", .protocolError),  // RSV1 without permessage-deflate
                ("0900", .protocolError),  // fragmented ping
                ("89fe0080" + String(repeating: "00", count: 128), .protocolError),  // control payload > 125
                ("818100000000" + "41", .protocolError),  // masked server frame
                ("8102c328", .invalidFramePayloadData),  // bad UTF-8 in a text message
                ("817f8000000000000001", .protocolError),  // 64-bit length with the top bit set
                ("820100", .unsupportedData),  // binary message
                ("880103", .protocolError),  // close payload of one byte
                ("880203ed", .protocolError),  // close code 1005 on the wire
            ])
        func failsOnProtocolViolation(hex: String, expected: WebSocketCloseCode) throws {
            let peer = try Peers.plain.get()
            let id = UUID().uuidString
            let (_, recorder) = connect("ws://127.0.0.1:\(peer.port)/raw?hex=\(hex)&id=\(id)")
            #expect(recorder.waitClosed()?.failureKind == .protocolViolation(closeCode: expected))
            #expect(try lastClose(id: id) == "\(expected.rawValue) ")
        }

        @Test("fails with 1009 when a frame is larger than maxFrameSize")
        func failsOnOversizedFrame() throws {
            let peer = try Peers.plain.get()
            var options = SocketTransport.Options()
            options.maxFrameSize = 1024
            options.maxMessageSize = 1024
            let id = UUID().uuidString
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/echo?id=\(id)", options: options)
            recorder.waitOpened()
            #expect(connection.send(text: String(repeating: "x", count: 1025)))
            #expect(recorder.waitClosed()?.failureKind == .messageTooBig(limit: 1024))
            #expect(try lastClose(id: id) == "1009 ")
        }

        /// What the peer recorded about the client's close frame on the connection tagged `id`.
        private func lastClose(id: String) throws -> String? {
            let peer = try Peers.plain.get()
            // The peer records the close after its side finished; poll briefly for it.
            let deadline = Date(timeIntervalSinceNow: 5)
            while true {
                let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/last-close?id=\(id)")
                let texts = recorder.waitTexts(1)
                connection.close(code: .normalClosure, reason: "")
                _ = recorder.waitClosed()
                if texts.first?.hasPrefix("None") == false || Date() > deadline { return texts.first }
            }
        }
    }
#endif
