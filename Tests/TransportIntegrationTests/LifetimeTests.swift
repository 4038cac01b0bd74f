#if os(Linux)
    import CableReactive
    import Foundation
    import Testing

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

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
                    request: URLRequest(url: try #require(URL(string: "ws://127.0.0.1:\(peer.port)/close?code=1000"))),
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

        #if canImport(FoundationNetworking)
            @Test("URLSessionTransport on Linux reports one failure and never opens (libcurl has no WebSocket)")
            func urlSessionOnLinux() throws {
                let peer = try Peers.plain.get()
                let recorder = EventRecorder()
                let request = URLRequest(url: try #require(URL(string: "ws://127.0.0.1:\(peer.port)/echo")))
                let connection = URLSessionTransport().connect(
                    request: request, protocols: [], handler: recorder.handler)
                let info = recorder.waitClosed()
                #expect(info?.failureKind != nil)
                #expect(!connection.send(text: "x"))
                connection.close(code: .normalClosure, reason: "")
                #expect(recorder.events.count == 1)
            }
        #endif
    }
#endif
