#if os(Linux)
    import CableReactive
    import Foundation
    import Testing

    extension TransportIntegrationTests {
        final class Token: Sendable {}

        @Test("releases the handler after delivering .closed, without the caller keeping anything")
        func releasesHandler() throws {
            let peer = try Peers.plain.get()
            weak var weakToken: Token?
            let recorder = EventRecorder()
            do {
                let token = Token()
                weakToken = token
                let handler = recorder.handler
                _ = SocketTransport().connect(
                    request: CableRequest(
                        url: try #require(URL(string: "ws://127.0.0.1:\(peer.port)/close?code=1000"))),
                    protocols: []
                ) { event in
                    _ = token
                    handler(event)
                }
            }
            // Nothing outside holds the connection, yet it runs to its end...
            #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
            // ...and then lets go of the handler (the I/O thread exits just after delivering .closed).
            let deadline = Date(timeIntervalSinceNow: 5)
            while weakToken != nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
            #expect(weakToken == nil)
        }
    }
#endif
