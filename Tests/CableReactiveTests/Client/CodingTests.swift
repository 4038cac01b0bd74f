import CableReactive
import CableTesting
import Foundation
import Testing

@testable import CableReactive

/// Typed messages and payloads with the app's own coders.
@Suite("ActionCableClient: coders")
struct CodingTests {
    let params: JSONValue = ["channel": "ChatChannel", "room": "lobby"]

    struct Line: Codable, Sendable, Equatable {
        let userName: String
        let sentAt: Date
    }

    @Test("messages(as:decoder:) uses the decoder's strategies: snake_case keys and ISO 8601 dates, as Rails sends")
    func decoderStrategies() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        var typed = room.messages(as: Line.self, decoder: decoder).makeAsyncIterator()
        // The client's decoder (keys as declared, ISO 8601 dates): skips the snake_case message and the date
        // given as a number, which Foundation's default decoder took as seconds since 2001.
        let plainView = room.messages(as: Line.self)
        var plain = plainView.makeAsyncIterator()
        connection.receive(
            ClientHarness.message(room.identifier, #"{"user_name":"ada","sent_at":"2026-12-01T10:00:00Z"}"#))
        connection.receive(ClientHarness.message(room.identifier, #"{"userName":"bob","sentAt":0}"#))
        connection.receive(
            ClientHarness.message(room.identifier, #"{"userName":"cy","sentAt":"2026-12-01T10:00:00.500Z"}"#))
        #expect(await typed.next() == Line(userName: "ada", sentAt: Date(timeIntervalSince1970: 1_796_119_200)))
        #expect(await plain.next() == Line(userName: "cy", sentAt: Date(timeIntervalSince1970: 1_796_119_200.5)))
        #expect(plainView.undecodableCount == 2)
    }

    @Test("perform(_:_:encoder:) sends what the encoder writes")
    func encoderStrategies() throws {
        struct Speak: Encodable {
            let text: String
            let replyTo: Int
        }
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(room.identifier))
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        #expect(room.perform("speak", Speak(text: "hi", replyTo: 7), encoder: encoder))
        let sent = try #require(connection.sent.last)
        let data = try JSONValue(parsing: sent)["data"]?.stringValue
        #expect(try data.map { try JSONValue(parsing: $0) } == ["action": "speak", "text": "hi", "reply_to": 7])
    }

    @Test("params and data built from variables give the identifier and the frame of the literal forms")
    func variablesLikeLiterals() throws {
        let h = try ClientHarness()
        let connection = try #require(h.connected())
        let roomID = 42
        let name = "lobby é"
        let open = true
        let tags = ["a", "b"]
        let filter: JSONValue = ["min": 1]
        let fromVariables = try h.client.subscribe([
            "channel": "RoomChannel", "room_id": roomID, "name": name, "open": open, "tags": tags, "filter": filter,
        ])
        let literal: JSONValue = [
            "channel": "RoomChannel", "room_id": 42, "name": "lobby é", "open": true, "tags": ["a", "b"],
            "filter": ["min": 1],
        ]
        let fromLiterals = try h.client.subscribe(literal)
        #expect(fromVariables.identifier == fromLiterals.identifier)
        #expect(
            fromVariables.identifier
                == #"{"channel":"RoomChannel","filter":{"min":1},"name":"lobby é","open":true,"room_id":42,"tags":["a","b"]}"#
        )
        connection.receive(ClientHarness.confirm(fromLiterals.identifier))
        let body = "hi"
        let count = 3
        #expect(fromVariables.perform("speak", ["body": body, "count": count]))
        let data: JSONValue = ["body": "hi", "count": 3]
        #expect(fromLiterals.perform("speak", data))
        let sent = connection.sent.suffix(2)
        #expect(sent.count == 2 && sent.first == sent.last, "\(sent)")
        #expect(throws: CableError.missingChannel()) { _ = try h.client.subscribe(["room_id": roomID]) }
    }

    @Test("perform with data that is not a JSON object sends nothing and says so")
    func performNeedsAnObject() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(room.identifier))
        let before = connection.sent.count
        #expect(room.perform("speak", 5) == false)
        #expect(room.perform("speak", ["a", "b"]) == false)
        #expect(room.perform("speak", "text") == false)  // an Encodable String: not an object either
        #expect(connection.sent.count == before)
        #expect(room.perform("speak", ["text": "ok"]))
    }

    @Test("a decoding failure's key path names keys and indexes, reduced to safe characters, never values")
    func keyPaths() throws {
        struct Room: Decodable {
            struct Member: Decodable { let name: String }
            let members: [Member]
        }
        let missing: JSONValue = ["members": [["name": "a"], ["nom": "S3CR3T"]]]
        let error = try #require(throwing(missing, as: Room.self))
        #expect(DecodingFailure.keyPath(of: error) == "members[1].name")
        let wrongType: JSONValue = ["members": [["name": 5]]]
        #expect(DecodingFailure.keyPath(of: try #require(throwing(wrongType, as: Room.self))) == "members[0].name")
        let dictionary: JSONValue = ["naïve key \"S3CR3T\"": ["x": 1]]
        let nested = try #require(throwing(dictionary, as: [String: [String: String]].self))
        let path = try #require(DecodingFailure.keyPath(of: nested))
        #expect(!path.contains("S3CR3T\""), "\(path)")
        #expect(path.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_?.[]".contains($0)) }, "\(path)")
        #expect(DecodingFailure.keyPath(of: CancellationError()) == nil)
    }

    private func throwing<T: Decodable>(_ value: JSONValue, as type: T.Type) -> (any Error)? {
        do {
            _ = try value.decode(T.self)
            return nil
        } catch {
            return error
        }
    }
}
