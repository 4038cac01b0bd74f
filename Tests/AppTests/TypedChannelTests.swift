import CableReactive
import CableTesting
import Dispatch
import Foundation
import Signals
import Testing

// Issue 23, item 6: one declaration of a channel (params, message type, actions), as a view model uses it.

struct ChatChannel: CableChannel {
    static let channel = "ChatChannel"
    let roomID: Int

    struct Message: Decodable, Sendable, Equatable {
        let user: String
        let text: String
    }

    struct Speak: CableAction {
        var action: String { "speak" }
        let text: String
    }
}

extension TypedSubscription<ChatChannel> {
    @discardableResult
    func speak(_ text: String) -> Bool { perform(ChatChannel.Speak(text: text)) }
}

@MainActor
final class TypedRoomModel {
    let room: TypedSubscription<ChatChannel>
    private(set) var lines: [ChatChannel.Message] = []
    private var token: SignalObservation?

    init(client: ActionCableClient, roomID: Int) throws {
        room = try client.subscribe(ChatChannel(roomID: roomID))
        token = room.messages.observe(on: .main) { [weak self] in self?.lines.append($0) }
    }

    func send(_ text: String) -> Bool { room.speak(text) }
}

@Suite("Typed channels")
@MainActor
struct TypedChannelTests {
    let fake = FakeTransport()
    let client: ActionCableClient

    init() throws {
        client = try ActionCableClient(
            url: URL(string: "ws://cable.test/cable")!, transport: fake, scheduler: ManualScheduler(),
            callbackQueue: DispatchQueue(label: "callbacks"))
    }

    func welcome() throws -> FakeTransport.Connection {
        client.connect()
        let connection = try #require(fake.last)
        connection.open()
        connection.receive(#"{"type":"welcome"}"#)
        return connection
    }

    @Test("the channel's properties and name are the params; messages are its Message type; actions go out by name")
    func typedRoundTrip() async throws {
        let model = try TypedRoomModel(client: client, roomID: 42)
        #expect(model.room.identifier == #"{"channel":"ChatChannel","roomID":42}"#)
        #expect(model.room.channel.roomID == 42)
        let connection = try welcome()
        #expect(model.send("too early") == false)  // not confirmed: nothing is queued
        let id = JSONValue.string(model.room.identifier).description
        connection.receive(#"{"identifier":\#(id),"type":"confirm_subscription"}"#)
        connection.receive(#"{"identifier":\#(id),"message":{"user":"ada","text":"hi"}}"#)
        connection.receive(#"{"identifier":\#(id),"message":{"unexpected":true}}"#)  // skipped
        connection.receive(#"{"identifier":\#(id),"message":{"user":"bob","text":"yo"}}"#)
        #expect(
            await MainActorObserverTests.eventually {
                model.lines == [.init(user: "ada", text: "hi"), .init(user: "bob", text: "yo")]
            })
        #expect(model.send("hello"))
        let sent = try JSONValue(parsing: try #require(connection.sent.last))
        #expect(sent["command"] == "message")
        #expect(sent["identifier"]?.stringValue == model.room.identifier)
        #expect(
            try sent["data"]?.stringValue.map { try JSONValue(parsing: $0) } == ["action": "speak", "text": "hello"])
        #expect(model.room.perform("typing"))
        let typing = try JSONValue(parsing: try #require(connection.sent.last))
        #expect(typing["data"] == #"{"action":"typing"}"#)
        client.close()
    }

    @Test("equal channels share one server subscription, like equal params")
    func equalChannelsShare() throws {
        let first = try client.subscribe(ChatChannel(roomID: 7))
        let second = try client.subscribe(ChatChannel(roomID: 7))
        let plain = try client.subscribe(["channel": "ChatChannel", "roomID": 7])
        #expect(first.identifier == second.identifier && second.identifier == plain.identifier)
        let connection = try welcome()
        #expect(connection.sent.filter { $0.contains(#""command":"subscribe""#) }.count == 1)
        client.close()
    }

    struct Since: CableChannel {
        static let channel = "FeedChannel"
        let since: Date
        typealias Message = JSONValue
    }

    struct Legacy: CableChannel {
        static let channel = "LegacyChannel"
        static var coding: CableCoding? { CableCoding(dates: .secondsSince1970, keys: .snakeCase) }
        let roomID: Int
        struct Message: Decodable, Sendable, Equatable { let sentAt: Date }
        struct Mark: CableAction {
            var action: String { "mark" }
            let readAt: Date
        }
    }

    @Test("a typed channel's params use the client's coders (ISO 8601 dates), or the channel's own")
    func channelCoders() async throws {
        let feed = try client.subscribe(Since(since: Date(timeIntervalSince1970: 1_796_119_200.5)))
        #expect(feed.identifier == #"{"channel":"FeedChannel","since":"2026-12-01T10:00:00.500Z"}"#)
        let legacy = try client.subscribe(Legacy(roomID: 7))
        #expect(legacy.identifier == #"{"channel":"LegacyChannel","room_id":7}"#)
        var lines = legacy.messages.makeAsyncIterator()
        let connection = try welcome()
        let id = JSONValue.string(legacy.identifier).description
        connection.receive(#"{"identifier":\#(id),"type":"confirm_subscription"}"#)
        connection.receive(#"{"identifier":\#(id),"message":{"sentAt":"2026-12-01T10:00:00Z"}}"#)  // not this dialect
        connection.receive(#"{"identifier":\#(id),"message":{"sent_at":1796119200}}"#)
        #expect(await lines.next() == Legacy.Message(sentAt: Date(timeIntervalSince1970: 1_796_119_200)))
        #expect(legacy.messages.undecodableCount == 1)
        #expect(legacy.perform(Legacy.Mark(readAt: Date(timeIntervalSince1970: 10))))
        let sent = try JSONValue(parsing: try #require(connection.sent.last))
        #expect(try sent["data"]?.stringValue.map { try JSONValue(parsing: $0) } == ["action": "mark", "read_at": 10])
        client.close()
    }

    struct Scalar: CableChannel {
        static let channel = "Odd"
        typealias Message = String
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode("not an object")
        }
    }

    struct Broken: CableChannel {
        static let channel = "Broken"
        typealias Message = String
        func encode(to encoder: any Encoder) throws {
            throw EncodingError.invalidValue(
                0, .init(codingPath: [], debugDescription: "refused"))
        }
    }

    @Test("a channel that does not encode to an object, or does not encode, throws a CableError")
    func badChannels() {
        #expect { try client.subscribe(Scalar()) } throws: { ($0 as? CableError)?.code == .dataNotObject }
        #expect { try client.subscribe(Broken()) } throws: { ($0 as? CableError)?.code == .unencodableData }
        client.close()
    }
}
