import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

/// AnyCable's `anycable-token.<token>` subprotocol against LocalCableServer, which reads the token from the offered
/// subprotocols as AnyCable does (`CableRequest.anyCableToken` on the client).
@Suite("AnyCable token subprotocol: LocalCableServer authenticates with it")
struct AnyCableTokenServerTests {
    #if os(Linux)
        @Test("the server reads the token from the first anycable-token. subprotocol offered; an empty one is none")
        func parsesOffers() async throws {
            let server = try LocalCableServer(options: Fixture.serverOptions())
            let seen = Locked<[(offered: [String], token: String?)]>([])
            server.connectionRule = { request in
                seen.withLock { $0.append((request.subprotocols, request.anyCableToken)) }
                return .reject(status: 403)
            }
            let offers: [[String]] = [
                ["actioncable-v1-json", "anycable-token.first", "anycable-token.second"],
                ["anycable-token.", "actioncable-v1-json"],
                ["actioncable-v1-json"],
                [],
            ]
            for offer in offers {
                let closed = DispatchSemaphore(value: 0)
                let connection = SocketTransport().connect(request: CableRequest(url: server.url), protocols: offer) {
                    event in
                    if case .closed = event { closed.signal() }
                }
                #expect(await Self.wait(closed))
                _ = connection
            }
            let decided = seen.withLock { $0 }
            #expect(decided.map(\.offered) == offers)
            #expect(decided.map(\.token) == ["first", nil, nil, nil])
        }

        /// Waits for `semaphore` off the cooperative pool, for up to 10 seconds.
        private static func wait(_ semaphore: DispatchSemaphore) async -> Bool {
            await withCheckedContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(returning: semaphore.wait(timeout: .now() + 10) == .success)
                }
            }
        }
    #endif
}
