import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

/// AnyCable's `anycable-token.<token>` subprotocol against LocalCableServer, which reads the token from the offered
/// subprotocols as AnyCable does (`CableRequest.anyCableToken` on the client).
@Suite("AnyCable token subprotocol: LocalCableServer authenticates with it")
struct AnyCableTokenServerTests {
    @Test("a client with the token connects, one without or with another is refused, and no line shows it")
    func authenticates() async throws {
        let lines = Locked<[String]>([])
        let logger = CableLogger(minimumLevel: .debug) { level, line in lines.withLock { $0.append("\(level) \(line)") }
        }
        let server = try LocalCableServer(options: Fixture.serverOptions())
        server.connectionRule = { request in request.anyCableToken == "tok-alice-S3CR3T" ? .accept : .unauthorized }
        func client(token: String?) throws -> ActionCableClient {
            try ActionCableClient(
                url: server.url, options: Fixture.options(), logger: logger,
                onRequest: { request in request.anyCableToken = token })
        }
        let alice = try client(token: "tok-alice-S3CR3T")
        let mallory = try client(token: "tok-mallory-S3CR3T")
        let anonymous = try client(token: nil)
        for client in [alice, mallory, anonymous] { client.connect() }
        #expect(await alice.reaches(.connected))
        #expect(await mallory.reaches(.stopped(reason: .unauthorized(serverReason: "unauthorized"))))
        #expect(await anonymous.reaches(.stopped(reason: .unauthorized(serverReason: "unauthorized"))))

        let room = try alice.subscribe(["channel": "ChatChannel"])
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        let connection = try #require(server.connections.first)
        #expect(connection.request.anyCableToken == "tok-alice-S3CR3T")
        #expect(
            connection.request.subprotocols == [
                "anycable-token.tok-alice-S3CR3T", "actioncable-v1-json", "actioncable-unsupported",
            ])
        let offers = server.requests.map(\.subprotocols)
        #expect(
            offers.contains(["anycable-token.tok-mallory-S3CR3T", "actioncable-v1-json", "actioncable-unsupported"]))
        #expect(offers.contains(["actioncable-v1-json", "actioncable-unsupported"]))
        for client in [alice, mallory, anonymous] { client.close() }

        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.hasPrefix("INFO connected") })
        for line in logged {
            #expect(!line.contains("S3CR3T") && !line.contains("anycable-token"), "\(line)")
        }
    }

    @Test("the token is no protocol: the server chooses Action Cable's, the extended one, or none")
    func neverChosen() async throws {
        var options = Fixture.serverOptions()
        options.reliableStreams = LocalCableServer.ReliableStreams()
        let server = try LocalCableServer(options: options)
        server.connectionRule = { request in request.anyCableToken == "t" ? .accept : .unauthorized }
        var cableOptions = Fixture.options()
        cableOptions.wireProtocol = .anyCableExtended
        let client = try ActionCableClient(
            url: server.url, options: cableOptions, onRequest: { request in request.anyCableToken = "t" })
        client.connect()
        #expect(await client.reaches(.connected))
        let session = await client.session.first(within: 5) { $0 != nil }
        #expect(session??.wireProtocol == .anyCableExtended)
        #expect(server.requests.first?.subprotocols.first == "anycable-token.t")
        client.close()
    }

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
