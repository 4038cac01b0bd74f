#if os(Linux)
    import CableReactive
    import Foundation
    import Testing

    extension TransportIntegrationTests {
        @Test("delivers a message the server sends right after the upgrade")
        func deliversWelcome() throws {
            let peer = try Peers.plain.get()
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/welcome")
            #expect(recorder.waitTexts(1) == ["welcome"])
            #expect(recorder.events.first == .opened(protocol: nil))
            connection.close(code: .normalClosure, reason: "")
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
        }

        @Test("reassembles a message the server sends in fragments")
        func reassemblesFragments() throws {
            let peer = try Peers.plain.get()
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/fragmented")
            #expect(recorder.waitTexts(1) == ["fragmented message"])
            connection.close(code: .normalClosure, reason: "")
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
        }

        @Test("answers a server ping with a pong carrying the same payload")
        func answersPing() throws {
            let peer = try Peers.plain.get()
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/ping")
            // The peer sends this text only after its pong waiter matched our pong's payload.
            #expect(recorder.waitTexts(1) == ["pong:are you there"])
            connection.close(code: .normalClosure, reason: "")
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
        }

        @Test("keeps messages in send order")
        func keepsOrder() throws {
            let peer = try Peers.plain.get()
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/echo")
            recorder.waitOpened()
            let messages = (0..<200).map { "message \($0)" }
            for message in messages { #expect(connection.send(text: message)) }
            #expect(recorder.waitTexts(200) == messages)
            connection.close(code: .normalClosure, reason: "")
            _ = recorder.waitClosed()
        }

        @Test("sends the subprotocol offer and reports the server's choice")
        func negotiatesSubprotocol() throws {
            let peer = try Peers.plain.get()
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/echo", protocols: ["x-unknown", "chat"])
            #expect(recorder.waitOpened().first == .opened(protocol: "chat"))
            connection.close(code: .normalClosure, reason: "")
            _ = recorder.waitClosed()
        }

        @Test("opens with no protocol when the server picks none of the offered ones")
        func opensWithoutSubprotocol() throws {
            let peer = try Peers.plain.get()
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/echo", protocols: ["x-unknown"])
            #expect(recorder.waitOpened().first == .opened(protocol: nil))
            connection.close(code: .normalClosure, reason: "")
            _ = recorder.waitClosed()
        }

        @Test("connects to an IPv6 literal")
        func connectsToIPv6Literal() throws {
            let peer = try Peers.ipv6.get()
            let (connection, recorder) = connect("ws://[::1]:\(peer.port)/echo")
            #expect(recorder.waitOpened().first == .opened(protocol: nil))
            #expect(connection.send(text: "v6"))
            #expect(recorder.waitTexts(1) == ["v6"])
            connection.close(code: .normalClosure, reason: "")
            _ = recorder.waitClosed()
        }

        @Test("resolves a host name on the I/O thread")
        func resolvesHostName() throws {
            let peer = try Peers.plain.get()
            let (connection, recorder) = connect("ws://localhost:\(peer.port)/echo")
            #expect(recorder.waitOpened().first == .opened(protocol: nil))
            connection.close(code: .normalClosure, reason: "")
            _ = recorder.waitClosed()
        }

        @Test("compresses both ways when permessage-deflate is enabled")
        func usesPermessageDeflate() throws {
            let peer = try Peers.plain.get()
            var options = SocketTransport.Options()
            options.enablePerMessageDeflate = true
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/echo", options: options)
            recorder.waitOpened()
            let messages = ["hello", String(repeating: "compressible ", count: 5000), "", "hello"]
            for message in messages { #expect(connection.send(text: message)) }
            #expect(recorder.waitTexts(messages.count) == messages)
            connection.close(code: .normalClosure, reason: "")
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
        }

        @Test("send refuses a message larger than maxPendingSendBytes")
        func sendRefusesOversizedMessage() throws {
            let peer = try Peers.plain.get()
            var options = SocketTransport.Options()
            options.maxPendingSendBytes = 16
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/echo", options: options)
            recorder.waitOpened()
            #expect(!connection.send(text: String(repeating: "x", count: 17)))
            #expect(connection.send(text: String(repeating: "y", count: 16)))
            #expect(recorder.waitTexts(1) == [String(repeating: "y", count: 16)])
            connection.close(code: .normalClosure, reason: "")
            _ = recorder.waitClosed()
        }

        @Test("send returns false before the connection opens and after it closed")
        func sendRefusedWhenNotOpen() throws {
            let peer = try Peers.plain.get()
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/hang")
            #expect(!connection.send(text: "too early"))
            connection.close(code: .goingAway, reason: "leaving")
            connection.close(code: .normalClosure, reason: "again")  // idempotent
            #expect(recorder.waitClosed() == .closed(code: .goingAway, reason: "leaving"))
            #expect(!connection.send(text: "too late"))
            #expect(recorder.events.count == 1)
        }
    }

    extension TransportIntegrationTests {
        @Test("accepts sends and a close from many threads at once and keeps each thread's order")
        func concurrentSenders() throws {
            let peer = try Peers.plain.get()
            let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/echo")
            recorder.waitOpened()
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                for index in 0..<100 { #expect(connection.send(text: "\(thread):\(index)")) }
            }
            let texts = recorder.waitTexts(400)
            #expect(texts.count == 400)
            for thread in 0..<4 {
                #expect(texts.filter { $0.hasPrefix("\(thread):") } == (0..<100).map { "\(thread):\($0)" })
            }
            DispatchQueue.concurrentPerform(iterations: 4) { _ in connection.close(code: .normalClosure, reason: "") }
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
            #expect(recorder.events.filter(\.isClosed).count == 1)
        }

        @Test("never loses a wake-up when sends and close race with the I/O thread")
        func racingWakeUps() throws {
            let peer = try Peers.plain.get()
            for round in 0..<100 {
                let (connection, recorder) = connect("ws://127.0.0.1:\(peer.port)/echo")
                recorder.waitOpened()
                DispatchQueue.concurrentPerform(iterations: 3) { thread in
                    if thread == 2 {
                        _ = recorder.waitTexts(1 + round % 50)
                        connection.close(code: .normalClosure, reason: "")
                    } else {
                        for index in 0..<300 { connection.send(text: "\(thread):\(index)") }
                    }
                }
                // Every close must complete promptly; a lost wake-up would leave the I/O thread asleep.
                #expect(recorder.waitClosed(timeout: 3) == .closed(code: .normalClosure, reason: ""), "round \(round)")
            }
        }
    }
#endif

#if os(Linux)
    import CableReactive
    import Foundation
    import Signals
    import Testing

    extension TransportIntegrationTests {
        @Test("hands text over as bytes to a receiver, and reports the end of each read after its messages")
        func deliversBytesAndBatchEnds() throws {
            let peer = try Peers.plain.get()
            let recorder = EventRecorder()
            let texts = Locked<[String]>([])
            let ends = Locked<[Int]>([])  // how many texts had arrived at each end of a read
            let receiver = TextReceiver(
                text: { utf8 in texts.withLock { $0.append(String(decoding: utf8, as: UTF8.self)) } },
                batchEnded: { ends.withLock { $0.append(texts.withLock { $0.count }) } }
            )
            let request = CableRequest(url: try #require(URL(string: "ws://127.0.0.1:\(peer.port)/echo")))
            let connection = SocketTransport().connect(
                request: request, protocols: [], receiver: receiver, handler: recorder.handler)
            recorder.waitOpened()
            let messages = (0..<300).map { "mëssage \($0) " + String(repeating: "x", count: $0 * 7) }
            for message in messages { #expect(connection.send(text: message)) }
            let deadline = ContinuousClock.now + .seconds(10)
            while texts.withLock({ $0.count }) < messages.count && ContinuousClock.now < deadline {
                _ = recorder.wait(timeout: 0.05) { _ in false }
            }
            connection.close(code: .normalClosure, reason: "")
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
            #expect(texts.withLock { $0 } == messages)
            #expect(!recorder.events.contains { $0.isText }, "texts go to the receiver, not the handler")
            let marks = ends.withLock { $0 }
            #expect(marks.last == messages.count, "every message is followed by the end of its read")
            #expect(marks == marks.sorted())
        }
    }
#endif
