#if os(Linux)
    import CableReactive
    import Foundation
    import Testing

    /// SocketTransport against Python `websockets`. Serialized: the leak test counts process-wide
    /// descriptors and threads, so no other connection may be in flight meanwhile.
    @Suite("Transport integration", .serialized)
    struct TransportIntegrationTests {}

    extension TransportIntegrationTests {
        static let echoSizes = [0, 125, 126, 65_535, 65_536, 1 << 20]

        @Test("echoes text messages of every length class over ws", arguments: echoSizes)
        func echoesOverWS(size: Int) throws {
            let peer = try Peers.plain.get()
            try expectEcho(size: size, url: "ws://127.0.0.1:\(peer.port)/echo", options: SocketTransport.Options())
        }

        @Test("echoes text messages of every length class over wss", arguments: echoSizes)
        func echoesOverWSS(size: Int) throws {
            let peer = try Peers.tls.get()
            try expectEcho(size: size, url: "wss://localhost:\(peer.port)/echo", options: try tlsOptions())
        }

        private func expectEcho(size: Int, url: String, options: SocketTransport.Options) throws {
            let (connection, recorder) = connect(url, options: options)
            #expect(recorder.waitOpened().first == .opened(protocol: nil))
            // A recognisable, non-ASCII-containing payload: multi-byte characters must survive intact.
            var message = String(repeating: "abcdefghijklmnopqrstuvwxyz0123456789", count: size / 36 + 1)
            message = String(message.utf8.prefix(size)) ?? ""
            if size >= 3 { message = "é" + message.dropFirst(2) + "" }
            #expect(message.utf8.count == size)
            #expect(connection.send(text: message))
            let texts = recorder.waitTexts(1)
            #expect(texts == [message])
            connection.close(code: .normalClosure, reason: "done")
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: "done"))
            #expect(recorder.events.count == 3)
        }
    }
#endif
