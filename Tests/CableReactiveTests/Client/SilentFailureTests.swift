import CableTesting
import Foundation
import Signals
import Testing

@testable import CableReactive

/// What used to fail without a word gets a WARN with a name, and a value the app can read.
@Suite("Silent failures get a name")
struct SilentFailureTests {
    static let room = #"{"channel":"ChatChannel","room":"S3CR3T"}"#

    static func harness(_ options: CableOptions = CableOptions()) throws -> (ClientHarness, Locked<[String]>) {
        let lines = Locked<[String]>([])
        let logger = CableLogger(minimumLevel: .warn) { _, line in lines.withLock { $0.append(line) } }
        return (try ClientHarness(options: options, logger: logger), lines)
    }

    @Test("a subscribe unanswered after two re-sends: WARN subscribe_unanswered with the channel class, no other param")
    func subscribeUnanswered() throws {
        let (h, lines) = try Self.harness()
        let room = try h.client.subscribe(["channel": "ChatChannel", "room": "S3CR3T"])
        let connection = try #require(h.connected())
        // Seconds pass with the server's pings (else the connection goes stale), but no answer.
        func wait(_ seconds: Int) {
            for _ in 0..<seconds {
                h.scheduler.advance(by: 1)
                connection.receive(#"{"type":"ping","message":1}"#)
            }
        }
        #expect(room.subscribesSent == 1)
        wait(7)  // first re-send: 5 s ± 25%
        #expect(room.subscribesSent == 2)
        #expect(lines.withLock { $0 }.isEmpty, "one lost race (Rails drops a subscribe that overtakes) is no warning")
        wait(13)  // second re-send: 10 s ± 25% later
        #expect(room.subscribesSent == 3)
        #expect(lines.withLock { $0 }.isEmpty, "not yet: the second re-send may still be answered")
        wait(26)  // its 20 s ± 25% ran out unanswered: the third re-send, and the warning
        #expect(room.subscribesSent == 4)
        let warned = lines.withLock { $0 }
        #expect(warned.count == 1)
        #expect(warned.first?.contains("subscribe_unanswered") == true)
        #expect(warned.first?.contains("channel=ChatChannel") == true && warned.first?.contains("count=3") == true)
        #expect(!warned.joined().contains("S3CR3T"), "never the other params")
        connection.receive(ClientHarness.confirm(Self.room))
        #expect(h.state(of: room) == .subscribed(confirmations: 1))
    }

    @Test("an inbound message over the transport's limit: lastDisconnect is messageTooBig(limit:), logged at WARN")
    func messageTooBig() throws {
        let (h, lines) = try Self.harness()
        let connection = try #require(h.connected())
        connection.fail(WebSocketError(.messageTooBig(limit: 1 << 20)))
        h.scheduler.flush()
        let last = try #require(h.client.lastDisconnect.value)
        #expect(last.kind == .messageTooBig(limit: 1 << 20))
        #expect(last.kind.limit == 1 << 20 && last.kind.description == "message_too_big(limit: 1048576)")
        #expect(last.error?.kind.closeCode == .messageTooBig)
        #expect(last.wasConnected)
        #expect(lines.withLock { $0 }.contains { $0.contains("message_too_big") && $0.contains("limit=1048576") })
        #expect(h.state == .connecting(attempt: 1), "retried like any lost connection")
    }

    @Test("perform and whisper over maxOutgoingMessageSize return false, send nothing and WARN perform_too_big")
    func outgoingTooBig() throws {
        var options = CableOptions()
        options.maxOutgoingMessageSize = 200
        let (h, lines) = try Self.harness(options)
        let room = try h.client.subscribe(["channel": "ChatChannel", "room": "S3CR3T"])
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(Self.room))
        h.scheduler.flush()
        let before = connection.sent.count
        #expect(room.perform("speak", ["text": "hi"]), "within the limit")
        #expect(!room.perform("speak", ["text": .string(String(repeating: "x", count: 200))]))
        #expect(!room.whisper(["text": .string(String(repeating: "x", count: 200))]))
        #expect(connection.sent.count == before + 1, "only the small one went out")
        let warned = lines.withLock { $0 }.filter { $0.contains("perform_too_big") }
        #expect(warned.count == 2)
        #expect(warned.allSatisfy { $0.contains("limit=200") && !$0.contains("xxx") })
        #expect(CableOptions().maxOutgoingMessageSize == 64 << 10, "AnyCable's max_message_size")
        var none = CableOptions()
        none.maxOutgoingMessageSize = 0
        #expect(throws: CableError.invalidOption("maxOutgoingMessageSize")) {
            _ = try ActionCableClient(url: ClientHarness.url, options: none, transport: FakeTransport())
        }
    }

    @Test("close() takes a subscribed handle to unsubscribed with no pending between")
    func closeWithoutPending() throws {
        let (h, _) = try Self.harness()
        let room = try h.client.subscribe(["channel": "ChatChannel", "room": "S3CR3T"])
        let seen = Locked<[SubscriptionState]>([])
        let token = room.state.observe { state in seen.withLock { $0.append(state) } }
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(Self.room))
        h.scheduler.flush()
        h.client.close()
        h.scheduler.flush()
        #expect(seen.withLock { $0 } == [.pending, .subscribed(confirmations: 1), .unsubscribed])
        token.cancel()
    }
}
