import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

/// Servers that parse identifiers and write them back in another JSON spelling (unlike Rails, which echoes them
/// byte for byte): confirmations, rejections and messages must still reach the subscription, and only an
/// identifier that matches no subscription in any spelling is answered with an unsubscribe.
@Suite("ActionCableClient: identifiers that come back spelled differently")
struct IdentifierSpellingTests {
    typealias Spelling = LocalCableServer.IdentifierSpelling

    /// Non-ASCII in keys and values, an astral emoji, U+2028, a slash and a quote.
    static let params: JSONValue = [
        "channel": "Chat/Room", "room": "café 😀 \u{2028} \"x\"", "ключ": "значение", "n": 7,
    ]

    static let spellings: [Spelling] = [
        .escapedNonASCII, .escapedSlash, .spaced, .reversedKeys,
        [.escapedNonASCII, .escapedSlash, .spaced, .reversedKeys],
    ]

    @Test("the spellings are different texts of the same params")
    func spellingsDiffer() throws {
        let identifier = try CableProtocol.identifier(for: Self.params)
        for spelling in Self.spellings {
            let spelled = spelling.respell(identifier)
            #expect(spelled != identifier)
            #expect(try JSONValue(parsing: spelled) == Self.params)
        }
        #expect(Spelling.escapedNonASCII.respell(identifier).contains(#"\ud83d\ude00"#))
        #expect(Spelling.escapedNonASCII.respell(identifier).contains(#"\u2028"#))
    }

    @Test("confirm, data and reject in another spelling reach the subscription", arguments: spellings)
    func routes(spelling: Spelling) async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(Self.params)
        let spelled = spelling.respell(room.identifier)
        let connection = try #require(h.connected())
        let received = Locked<[JSONValue]>([])
        let observation = room.messages.observe { message in received.withLock { $0.append(message) } }
        defer { observation.cancel() }
        connection.receive(ClientHarness.confirm(spelled))
        #expect(h.state(of: room) == .subscribed(confirmations: 1))
        for n in 0..<3 { connection.receive(ClientHarness.message(spelled, #"{"n":\#(n)}"#)) }
        connection.receive(ClientHarness.message(room.identifier, #"{"n":3}"#))
        #expect(await h.eventually(seconds: 5) { received.withLock { $0.count } >= 4 })
        #expect(received.withLock { $0 } == (0..<4).map { ["n": .int($0)] })
        #expect(connection.sent.filter { $0.contains("unsubscribe") } == [])
        // After a drop the subscription goes out again; the server rejects it, spelled its way.
        connection.fail()
        h.scheduler.advance(by: 1.25)
        let second = try #require(h.welcome())
        second.receive(ClientHarness.reject(spelled))
        #expect(h.state(of: room) == .rejected)
        #expect(second.sent.filter { $0.contains("unsubscribe") } == [])
    }

    @Test("a confirmation that matches no subscription in any spelling is unsubscribed, as the server spelled it")
    func orphanConfirmation() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(Self.params)
        let connection = try #require(h.connected())
        let stranger = Spelling.spaced.respell(#"{"channel":"Chat/Room","room":"elsewhere"}"#)
        connection.receive(ClientHarness.confirm(stranger))
        #expect(connection.sent.last == CableProtocol.unsubscribe(identifier: stranger))
        #expect(h.state(of: room) == .pending)
        // Text that is not JSON at all is an orphan too, and never traps.
        connection.receive(ClientHarness.confirm("{not json"))
        #expect(connection.sent.last == CableProtocol.unsubscribe(identifier: "{not json"))
    }

    @Test("a re-spelled identifier of a subscription that ended routes nowhere")
    func endedSubscription() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(Self.params)
        let spelled = Spelling.spaced.respell(room.identifier)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(spelled))
        room.unsubscribe()
        #expect(h.state(of: room) == .unsubscribed)
        let again = try h.client.subscribe(Self.params)
        connection.receive(ClientHarness.message(spelled, "1"))
        connection.receive(ClientHarness.confirm(spelled))
        #expect(h.state(of: again) == .subscribed(confirmations: 1))
    }
}
