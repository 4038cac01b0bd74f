import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

/// The real client (SocketTransport and its data-frame fast path) against a LocalCableServer that writes
/// identifiers back in another JSON spelling.
@Suite("LocalCableServer.identifierSpelling with ActionCableClient")
struct IdentifierSpellingServerTests {
    typealias Spelling = LocalCableServer.IdentifierSpelling

    static let params: JSONValue = ["channel": "Chat/Room", "room": "café 😀 \u{2028}", "ключ": "значение"]
    static let spellings: [Spelling] = [
        .escapedNonASCII, .escapedSlash, .spaced, .reversedKeys,
        [.escapedNonASCII, .escapedSlash, .spaced, .reversedKeys],
    ]

    static func server(_ spelling: Spelling) throws -> LocalCableServer {
        var options = Fixture.serverOptions()
        options.identifierSpelling = spelling
        return try LocalCableServer(options: options)
    }

    @Test("confirmations and broadcasts route, also after a drop, and nothing is unsubscribed", arguments: spellings)
    func confirmAndData(spelling: Spelling) async throws {
        let server = try Self.server(spelling)
        let client = try Fixture.client(server)
        let room = try client.subscribe(Self.params)
        client.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        let received = Locked<[JSONValue]>([])
        let count = MutableStateValue(0)
        let observation = room.messages.observe { message in
            count.value = received.withLock { received in
                received.append(message)
                return received.count
            }
        }
        defer { observation.cancel() }
        for n in 0..<5 { server.broadcast(["n": .int(n)], to: room.identifier) }
        #expect(await count.first(within: 5) { $0 == 5 } == 5)
        server.drop()
        #expect(await room.reaches(.subscribed(confirmations: 2)))
        for n in 5..<10 { server.broadcast(["n": .int(n)], to: room.identifier) }
        #expect(await count.first(within: 5) { $0 == 10 } == 10)
        #expect(received.withLock { $0 } == (0..<10).map { ["n": .int($0)] })
        #expect(server.commands.filter { $0.command == "unsubscribe" }.isEmpty)
        #expect(server.commands.filter { $0.command == "subscribe" }.count == 2)
    }

    @Test("a rejection spelled another way reaches the subscription", arguments: spellings)
    func reject(spelling: Spelling) async throws {
        let server = try Self.server(spelling)
        server.subscriptionRule = { _, _ in .reject }
        let client = try Fixture.client(server)
        let room = try client.subscribe(Self.params)
        client.connect()
        #expect(await room.reaches(.rejected))
        #expect(server.commands.filter { $0.command == "unsubscribe" }.isEmpty)
    }
}
