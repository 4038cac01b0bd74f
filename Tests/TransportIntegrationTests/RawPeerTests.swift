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

#if os(Linux)
    import CableReactive
    import Foundation
    import Testing

    extension TransportIntegrationTests {
        /// Sends `bytes` on a blocking socket; false when the peer stopped taking them for the socket's timeout.
        static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
            var offset = 0
            while offset < bytes.count {
                let sent = bytes.withUnsafeBytes {
                    send(fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
                }
                guard sent > 0 else { return false }
                offset += sent
            }
            return true
        }

        /// Ping number `number`'s payload: its digits, padded with dots to the 125 bytes a control frame may hold.
        static func pingPayload(_ number: Int) -> [UInt8] {
            let digits = Array(String(number).utf8)
            return digits + Array(repeating: 0x2E, count: 125 - digits.count)
        }

        /// The unmasked payloads of the client's pong frames in `bytes` (client frames, all masked).
        static func pongPayloads(_ bytes: [UInt8]) -> [[UInt8]] {
            var payloads: [[UInt8]] = []
            var index = 0
            while bytes.count - index >= 6 {
                let opcode = bytes[index] & 0x0F
                var length = Int(bytes[index + 1] & 0x7F)
                var header = 2
                if length == 126 {
                    length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
                    header = 4
                } else if length == 127 {
                    break  // no frame of ours is that large here
                }
                guard bytes.count - index >= header + 4 + length else { break }
                let key = Array(bytes[(index + header)..<(index + header + 4)])
                let start = index + header + 4
                if opcode == 0xA {
                    payloads.append(
                        bytes[start..<(start + length)].enumerated().map { $0.element ^ key[$0.offset % 4] })
                }
                index = start + length
            }
            return payloads
        }

        @Test("a ping flood from a peer that does not read: reading goes on, only the newest pong waits")
        func pingFloodWithoutReading() async throws {
            let pings = 200_000
            let peer = try RawPeer(
                respond: { key in RawPeer.switching(key: key) },
                then: { fd in
                    // Never read during the flood; give up (and so fail the test) if the client stops reading.
                    var timeout = timeval(tv_sec: 10, tv_usec: 0)
                    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                    var flood: [UInt8] = []
                    for number in 0..<pings {
                        let payload = Self.pingPayload(number)
                        flood += [0x89, UInt8(payload.count)] + payload
                        if flood.count >= 1 << 16 || number == pings - 1 {
                            guard Self.sendAll(fd, flood) else { return }
                            flood.removeAll(keepingCapacity: true)
                        }
                    }
                    _ = Self.sendAll(fd, [0x81, 0x04] + Array("done".utf8))
                })
            var options = Self.fixedKeyOptions()
            options.closeTimeout = 0.2  // the raw peer never answers our close
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/", options: options)
            // The text after the flood arrives: the client read all 10 MB of pings while its pongs could not leave.
            #expect(try await offPool { recorder.waitTexts(1, timeout: 30) } == ["done"])
            // The peer reads again: the backlog drains and the held pong follows it.
            let lastPong = Self.pingPayload(pings - 1).enumerated().map { $0.element ^ UInt8($0.offset % 4 + 1) }
            #expect(try await offPool { peer.waitForBytes(lastPong, timeout: 30) })
            connection.close(code: .normalClosure, reason: "")
            let pongs = Self.pongPayloads(try await offPool { peer.waitReceived(timeout: 30) })
            // Answered while the socket took them, then only the newest (RFC 6455 §5.5.3): far fewer than the pings,
            // and the last one answers the last ping.
            #expect(pongs.count < pings / 2)
            #expect(pongs.last == Self.pingPayload(pings - 1))
        }
    }
#endif
