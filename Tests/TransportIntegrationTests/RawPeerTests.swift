#if os(Linux)
    import CableReactive
    import Foundation
    import Testing

    extension TransportIntegrationTests {
        /// Options whose masking keys are always 01 02 03 04.
        static func fixedKeyOptions() -> SocketTransport.Options {
            var options = SocketTransport.Options()
            options.makeRandomNumberGenerator = { FixedGenerator(value: 0x0102_0304) }
            return options
        }

        @Test("sends back the exact close frame for a length above Int.max")
        func exactCloseFrameOnTheWire() throws {
            let peer = try RawPeer { key in RawPeer.switching(key: key) + [0x81, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0x01] }
            let (_, recorder) = connect("ws://127.0.0.1:\(peer.port)/", options: Self.fixedKeyOptions())
            #expect(recorder.waitClosed()?.failureKind == .protocolViolation(closeCode: .protocolError))
            #expect(peer.waitReceived() == [0x88, 0x82, 1, 2, 3, 4, 0x03 ^ 1, 0xEA ^ 2])
        }

        @Test("delivers a frame that arrives in the same packet as the 101 answer")
        func frameInUpgradePacket() throws {
            let peer = try RawPeer { key in RawPeer.switching(key: key) + [0x81, 0x07] + Array("welcome".utf8) }
            var options = Self.fixedKeyOptions()
            options.closeTimeout = 0.1  // the raw peer never answers our close
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/", options: options)
            #expect(recorder.waitTexts(1) == ["welcome"])
            connection.close(code: .normalClosure, reason: "")
            _ = peer.waitReceived()
        }

        @Test("gives up with a timeout when the peer never answers our close frame")
        func closeTimeout() throws {
            let peer = try RawPeer { key in RawPeer.switching(key: key) }
            var options = Self.fixedKeyOptions()
            options.closeTimeout = 0.2
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/", options: options)
            recorder.waitOpened()
            connection.close(code: .normalClosure, reason: "")
            #expect(recorder.waitClosed()?.failureKind == .timeout)
            #expect(peer.waitReceived() == [0x88, 0x82, 1, 2, 3, 4, 0x03 ^ 1, 0xE8 ^ 2])
        }

        @Test("does not follow a redirect")
        func doesNotFollowRedirect() throws {
            let peer = try RawPeer { _ in
                Array(
                    "HTTP/1.1 301 Moved Permanently\r\nLocation: ws://127.0.0.1:1/secret\r\nContent-Length: 0\r\n\r\n"
                        .utf8)
            }
            let (_, recorder) = connect("ws://127.0.0.1:\(peer.port)/")
            let info = recorder.waitClosed()
            #expect(info?.failureKind == .upgradeRejected(status: 301))
            #expect(!"\(String(describing: info))".contains("secret"))
        }

        @Test("refuses a response head above 16 KiB")
        func refusesHugeHead() throws {
            let peer = try RawPeer { key in
                RawPeer.switching(key: key, extraHeaders: "X-Filler: \(String(repeating: "a", count: 17_000))\r\n")
            }
            let (_, recorder) = connect("ws://127.0.0.1:\(peer.port)/")
            #expect(recorder.waitClosed()?.failureKind == .invalidHandshake)
        }
    }

    /// Always the same value: masking keys become predictable.
    struct FixedGenerator: RandomNumberGenerator {
        var value: UInt64
        mutating func next() -> UInt64 { value }
    }
#endif
