import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

@testable import CableReactive

/// The client's coders (`CableOptions.coding`): what a `Date` and the rest look like on the wire.
@Suite("ActionCableClient: the client's coders")
struct CodersTests {
    /// 2026-12-02T00:52:17.123Z, as Rails' `Time#as_json` writes it.
    static let date = Date(timeIntervalSince1970: 1_796_172_737.123)
    static let iso = "2026-12-02T00:52:17.123Z"
    static let room: JSONValue = ["channel": "RoomChannel"]
    /// The identifier of `room`, quoted as it is inside a command.
    static let quotedRoom = #""{\"channel\":\"RoomChannel\"}""#

    struct Stamp: Codable, Sendable, Equatable {
        let at: Date
    }

    /// The default options with `coding`.
    static func options(_ coding: CableCoding) -> CableOptions {
        var options = CableOptions()
        options.coding = coding
        return options
    }

    /// A confirmed subscription to `room` on a welcomed connection.
    private func confirmed(
        _ options: CableOptions = CableOptions(), logger: CableLogger? = nil
    ) throws -> (ClientHarness, ChannelSubscription, FakeTransport.Connection) {
        let h = try ClientHarness(options: options, logger: logger)
        let subscription = try h.client.subscribe(Self.room)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(subscription.identifier))
        return (h, subscription, connection)
    }

    /// The `message` command `perform` sends for `data` (the JSON text of data with the action).
    private func frame(_ data: String) -> String {
        #"{"command":"message","identifier":\#(Self.quotedRoom),"data":\#(ClientHarness.quoted(data))}"#
    }

    // MARK: the wire

    @Test("a Date in Encodable or dictionary params is ISO 8601 with milliseconds in the identifier and the frame")
    func dateInParams() throws {
        struct Params: Encodable {
            let channel = "RoomChannel"
            let since: Date
        }
        let h = try ClientHarness()
        let typed = try h.client.subscribe(Params(since: Self.date))
        let expected = #"{"channel":"RoomChannel","since":"2026-12-02T00:52:17.123Z"}"#
        #expect(typed.identifier == expected)
        let fromDictionary = try h.client.subscribe(["channel": "RoomChannel", "since": Self.date])
        #expect(fromDictionary.identifier == expected)
        let connection = try #require(h.connected())
        #expect(
            connection.sent == [
                #"{"command":"subscribe","identifier":"{\"channel\":\"RoomChannel\",\"since\":\"2026-12-02T00:52:17.123Z\"}"}"#
            ])
    }

    @Test("params with no dates give the identifier they gave before coders were configurable, under any coding")
    func identifierUnchanged() throws {
        struct Params: Encodable {
            let channel = "RoomChannel"
            let roomID = 42
            let name = "lobby é/\""
            let ratio = 0.5
            let tags = ["b", "a"]
            let open = true
        }
        let expected =
            #"{"channel":"RoomChannel","name":"lobby é/\"","open":true,"ratio":0.5,"roomID":42,"tags":["b","a"]}"#
        for dates in [CableCoding.DateStrategy.iso8601, .iso8601WithoutFraction, .secondsSince1970, .deferredToDate] {
            let h = try ClientHarness(options: Self.options(CableCoding(dates: dates)))
            #expect(try h.client.subscribe(Params()).identifier == expected, "\(dates)")
        }
    }

    @Test("a Date in perform data: a struct, a nested struct, an array, the dictionary form")
    func dateInPerform() throws {
        struct Nested: Encodable {
            struct Inner: Encodable { let at: Date }
            let inner: Inner
        }
        struct Dates: Encodable { let dates: [Date] }
        let (h, room, connection) = try confirmed()
        #expect(room.perform("speak", Stamp(at: Self.date)))
        #expect(room.perform("speak", Nested(inner: .init(at: Self.date))))
        #expect(room.perform("speak", Dates(dates: [Self.date, Date(timeIntervalSince1970: 0)])))
        #expect(room.perform("speak", ["at": Self.date] as [String: any Encodable & Sendable]))
        #expect(room.perform("speak", ["at": [Self.date]] as [String: any Encodable & Sendable]))
        #expect(
            connection.sent.suffix(5) == [
                frame(#"{"action":"speak","at":"2026-12-02T00:52:17.123Z"}"#),
                frame(#"{"action":"speak","inner":{"at":"2026-12-02T00:52:17.123Z"}}"#),
                frame(#"{"action":"speak","dates":["2026-12-02T00:52:17.123Z","1970-01-01T00:00:00.000Z"]}"#),
                frame(#"{"action":"speak","at":"2026-12-02T00:52:17.123Z"}"#),
                frame(#"{"action":"speak","at":["2026-12-02T00:52:17.123Z"]}"#),
            ])
        #expect(
            connection.sent.last
                == #"{"command":"message","identifier":"{\"channel\":\"RoomChannel\"}","data":"{\"action\":\"speak\",\"at\":[\"2026-12-02T00:52:17.123Z\"]}"}"#
        )
        h.client.close()  // keeps the harness, and so the client, alive until here
    }

    @Test("a nil Optional is left out of a struct (synthesized Codable) and sent as null in the dictionary form")
    func optionalNil() throws {
        struct Speak: Encodable {
            let text: String
            let replyTo: Int?
            let at: Date?
        }
        let (h, room, connection) = try confirmed()
        #expect(room.perform("speak", Speak(text: "hi", replyTo: nil, at: nil)))
        let replyTo: Int? = nil
        let at: Date? = nil
        #expect(
            room.perform("speak", ["text": "hi", "reply_to": replyTo, "at": at] as [String: any Encodable & Sendable]))
        #expect(
            connection.sent.suffix(2) == [
                frame(#"{"action":"speak","text":"hi"}"#),
                frame(#"{"action":"speak","at":null,"reply_to":null,"text":"hi"}"#),
            ])
        h.client.close()  // keeps the harness, and so the client, alive until here
    }

    @Test("each date strategy's wire form, in params and in perform data", arguments: CodersTests.dateForms)
    func strategies(dates: CableCoding.DateStrategy, wire: String) throws {
        let exact = Date(timeIntervalSince1970: 1_796_172_737.125)  // .125 is exact in binary, from 1970 and 2001
        let (h, room, connection) = try confirmed(Self.options(CableCoding(dates: dates)))
        #expect(room.perform("speak", Stamp(at: exact)))
        #expect(connection.sent.last == frame(#"{"action":"speak","at":\#(wire)}"#))
        let typed = try h.client.subscribe(["channel": "RoomChannel", "at": exact])
        #expect(typed.identifier == #"{"at":\#(wire),"channel":"RoomChannel"}"#)
        let read = try JSONValue(parsing: wire).decode(Date.self, decoder: dates.decoderForTests)
        #expect(read == (dates == .iso8601WithoutFraction ? Date(timeIntervalSince1970: 1_796_172_737) : exact))
        h.client.close()  // keeps the harness, and so the client, alive until here
    }

    static let dateForms: [(CableCoding.DateStrategy, String)] = [
        (.iso8601, #""2026-12-02T00:52:17.125Z""#),
        (.iso8601WithoutFraction, #""2026-12-02T00:52:17Z""#),  // reads back as 17.000
        (.secondsSince1970, "1796172737.125"),
        (.millisecondsSince1970, "1796172737125"),
        (.deferredToDate, "817865537.125"),
    ]

    @Test("snake_case keys apply to Encodable params and data, and to typed messages; dictionary keys stay")
    func snakeCase() async throws {
        struct Params: Encodable {
            let channel = "RoomChannel"
            let roomID: Int
        }
        struct Line: Codable, Sendable, Equatable {
            let userName: String
            let sentAt: Date
        }
        let options = Self.options(CableCoding(keys: .snakeCase))
        let h = try ClientHarness(options: options)
        let room = try h.client.subscribe(Params(roomID: 7))
        #expect(room.identifier == #"{"channel":"RoomChannel","room_id":7}"#)
        #expect(try h.client.subscribe(["channel": "RoomChannel", "roomID": 7]).identifier.contains(#""roomID":7"#))
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(room.identifier))
        var lines = room.messages(as: Line.self).makeAsyncIterator()
        #expect(room.perform("speak", Line(userName: "ada", sentAt: Self.date)))
        #expect(
            connection.sent.last?.contains(#"\"sent_at\":\"2026-12-02T00:52:17.123Z\",\"user_name\":\"ada\""#) == true)
        connection.receive(ClientHarness.message(room.identifier, #"{"user_name":"ada","sent_at":"\#(Self.iso)"}"#))
        let line = try #require(await lines.next())
        #expect(line.userName == "ada")
        #expect(ISO8601Date.string(from: line.sentAt, fractionDigits: 3) == Self.iso)
    }

    @Test("a call's own encoder or decoder replaces the client's")
    func overrides() async throws {
        let (h, room, connection) = try confirmed()
        #expect(room.perform("speak", Stamp(at: Date(timeIntervalSinceReferenceDate: 0.5)), encoder: JSONEncoder()))
        #expect(connection.sent.last == frame(#"{"action":"speak","at":0.5}"#))
        var foundation = room.messages(as: Stamp.self, decoder: JSONDecoder()).makeAsyncIterator()
        connection.receive(ClientHarness.message(room.identifier, #"{"at":"\#(Self.iso)"}"#))  // not for it
        connection.receive(ClientHarness.message(room.identifier, #"{"at":2.5}"#))
        #expect(await foundation.next() == Stamp(at: Date(timeIntervalSinceReferenceDate: 2.5)))
        h.client.close()  // keeps the harness, and so the client, alive until here
    }

    // MARK: decoding

    @Test("typed messages read ISO 8601 by default, liberally; what is not a date is skipped and counted")
    func decodesISO() async throws {
        let (h, room, connection) = try confirmed()
        let stamps = room.messages(as: Stamp.self)
        var iterator = stamps.makeAsyncIterator()
        for text in [
            Self.iso, "2026-12-02T01:52:17.123+01:00", "2026-12-02 00:52:17.123456Z", "2026-12-02", "garbage", "",
            "2026-02-30T00:00:00Z",
        ] {
            connection.receive(ClientHarness.message(room.identifier, #"{"at":"\#(text)"}"#))
        }
        connection.receive(ClientHarness.message(room.identifier, #"{"at":1796172737}"#))  // a number is no ISO date
        connection.receive(ClientHarness.message(room.identifier, #"{"at":"\#(Self.iso)"}"#))
        var received: [Date] = []
        for _ in 0..<5 { received.append(try #require(await iterator.next()).at) }
        let expected: [TimeInterval] = [0.123, 0.123, 0.123456, -3137, 0.123].map { 1_796_172_737 + $0 }
        #expect(zip(received, expected).allSatisfy { abs($0.timeIntervalSince1970 - $1) < 1e-6 }, "\(received)")
        #expect(stamps.undecodableCount == 4)
        #expect(room.messages.undecodableCount == 0)
        h.client.close()  // keeps the harness, and so the client, alive until here
    }

    @Test("a string that is not a date throws a DecodingError that names the key and the expected form, not the value")
    func garbageThrows() throws {
        let value: JSONValue = ["items": [["at": .string(Self.iso)], ["at": "S3CR3T-2026"]]]
        struct Items: Decodable { let items: [Stamp] }
        do {
            _ = try value.decode(Items.self)
            Issue.record("decoded a date from garbage")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.codingPath.map(\.stringValue) == ["items", "Index 1", "at"])
            #expect(context.debugDescription.contains("Expected an ISO 8601 date"))
            #expect(!context.debugDescription.contains("S3CR3T"))
            #expect(DecodingFailure.keyPath(of: DecodingError.dataCorrupted(context)) == "items[1].at")
        }
        #expect(throws: DecodingError.self) { try JSONValue.string("").decode(Date.self) }
        #expect(throws: DecodingError.self) { try JSONValue.int(0).decode(Date.self) }
    }

    @Test("JSONValue(encoding:) and decode() without coders use ISO 8601")
    func jsonValueDefaults() throws {
        #expect(try JSONValue(encoding: Self.date) == .string(Self.iso))
        #expect(try JSONValue(encoding: Stamp(at: Self.date)) == ["at": .string(Self.iso)])
        let back = try JSONValue.string(Self.iso).decode(Date.self)
        #expect(ISO8601Date.string(from: back, fractionDigits: 3) == Self.iso)
        #expect(
            try JSONValue(encoding: Self.date, encoder: JSONEncoder())
                == .double(Self.date.timeIntervalSinceReferenceDate))
        #expect(
            try CableCoding().makeEncoder().encode(["at": Date(timeIntervalSince1970: 0)])
                == Data(#"{"at":"1970-01-01T00:00:00.000Z"}"#.utf8))
        #expect(
            try CableCoding().makeDecoder().decode([Date].self, from: Data(#"["1970-01-02"]"#.utf8)) == [
                Date(timeIntervalSince1970: 86_400)
            ])
    }

    // MARK: what failed

    /// Throws `invalidValue` with the given description, as an app's own `encode(to:)` may.
    struct Refusing: Encodable, Sendable {
        let secret = "S3CR3T"
        func encode(to encoder: any Encoder) throws {
            throw EncodingError.invalidValue(
                secret, EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "tokens are not sent"))
        }
    }

    struct Nested: Encodable, Sendable {
        let channel = "RoomChannel"
        let items: [Item]
        struct Item: Encodable, Sendable {
            var ok = 1
            let token: Refusing?
        }
    }

    @Test("an encoder that throws: the error names the key path and the encoder's reason, never the value")
    func throwingEncoder() throws {
        let h = try ClientHarness()
        let params = Nested(items: [.init(token: nil), .init(token: Refusing())])
        let error = try #require(throwing { try h.client.subscribe(params) })
        #expect(error.code == .unencodableData)
        #expect(error.codingPath == "items[1].token")
        #expect(error.description == "unencodable data at items[1].token: invalid value: tokens are not sent")
        let member = try #require(throwing { try h.client.subscribe(["channel": "RoomChannel", "auth": Refusing()]) })
        #expect(member.codingPath == "auth")
        #expect(member.description == "unencodable data at auth: invalid value: tokens are not sent")
        for error in [error, member] { #expect(!"\(error)".contains("S3CR3T")) }
        #expect(error == CableError.unencodableData())  // equality is the code's
    }

    @Test("NaN and infinity keep their own message, with the key path, in every form")
    func nonFinite() throws {
        struct Weights: Encodable {
            let channel = "RoomChannel"
            let weights: [Double]
        }
        let h = try ClientHarness()
        let typed = try #require(throwing { try h.client.subscribe(Weights(weights: [1, .nan])) })
        #expect(typed.codingPath == "weights[1]")
        #expect(typed.description == "unencodable data at weights[1]: JSON cannot express NaN or infinite numbers")
        let member = try #require(
            throwing { try h.client.subscribe(["channel": "RoomChannel", "ratio": Double.infinity]) })
        #expect(member.description == "unencodable data at ratio: JSON cannot express NaN or infinite numbers")
        let value: JSONValue = ["channel": "RoomChannel", "a": 1, "b": ["c": [2, .double(-.infinity)]]]
        let literal = try #require(throwing { try h.client.subscribe(value) })
        #expect(literal.description == "unencodable data at b.c[1]: JSON cannot express NaN or infinite numbers")
        let topLevel = try #require(
            throwing { _ = try CableProtocol.perform(identifier: "i", action: "a", data: ["x": .double(.nan)]) })
        #expect(topLevel.codingPath == "x")
    }

    @Test("an error that is not an EncodingError is named by its type only; a date with no ISO 8601 form says so")
    func otherFailures() throws {
        struct PrivateFailure: Error { let secret = "S3CR3T" }
        struct Failing: Encodable, Sendable {
            func encode(to encoder: any Encoder) throws { throw PrivateFailure() }
        }
        let h = try ClientHarness()
        let error = try #require(throwing { try h.client.subscribe(["channel": "RoomChannel", "f": Failing()]) })
        #expect(error.description == "unencodable data at f: the encoder threw PrivateFailure")
        let far = try #require(
            throwing { try h.client.subscribe(["channel": "RoomChannel", "when": Date(timeIntervalSince1970: 1e12)]) })
        #expect(
            far.description
                == "unencodable data at when: invalid value: a date outside the years 0000-9999 has no ISO 8601 form")
    }

    @Test("perform with data that does not encode sends nothing and logs the key path at WARN, never the value")
    func performLogsPath() throws {
        let lines = Locked<[String]>([])
        let logger = CableLogger(minimumLevel: .debug) { level, line in lines.withLock { $0.append("\(level) \(line)") }
        }
        let (h, room, connection) = try confirmed(logger: logger)
        let before = connection.sent.count
        #expect(room.perform("speak", Nested(items: [.init(token: Refusing())])) == false)
        #expect(room.perform("speak", ["auth": Refusing()] as [String: any Encodable & Sendable]) == false)
        #expect(room.perform("speak", ["x": .double(.nan)] as JSONValue) == false)
        #expect(connection.sent.count == before)
        let logged = lines.withLock { $0 }.filter { $0.contains("perform_unencodable") }
        #expect(logged.count == 3, "\(logged)")
        #expect(logged.first?.hasPrefix("WARN perform_unencodable") == true)
        #expect(logged.first?.contains("path=items[0].token") == true, "\(logged)")
        #expect(logged.dropFirst().first?.contains("path=auth") == true, "\(logged)")
        #expect(logged.last?.contains("path=x") == true, "\(logged)")
        #expect(!logged.contains { $0.contains("S3CR3T") || $0.contains("tokens") })
        h.client.close()  // keeps the harness, and so the client, alive until here
    }

    // MARK: undecodableCount

    @Test("undecodableCount is per typed view, summed over its consumers; the untyped view has none")
    func undecodableCount() throws {
        let (h, room, connection) = try confirmed()
        let stamps = room.messages(as: Stamp.self)
        let other = room.messages(as: Stamp.self)
        let decoded = Locked(0)
        let first = stamps.observe { _ in decoded.withLock { $0 += 1 } }
        let second = stamps.observe { _ in decoded.withLock { $0 += 1 } }
        let untyped = room.messages.observe { _ in }
        connection.receive(ClientHarness.message(room.identifier, #"{"at":"\#(Self.iso)"}"#))
        connection.receive(ClientHarness.message(room.identifier, #"{"at":"soon"}"#))
        connection.receive(ClientHarness.message(room.identifier, #"{"no":"date"}"#))
        h.scheduler.flush()
        #expect(decoded.withLock { $0 } == 2)
        #expect(stamps.undecodableCount == 4)  // two messages, skipped by each of two observers
        #expect(other.undecodableCount == 0)  // it has no consumer: nothing was decoded for it
        #expect(room.messages.undecodableCount == 0)
        #expect(room.messages.droppedCount == 0)
        _ = (first, second, untyped)
        h.client.close()  // keeps the harness, and so the client, alive until here
    }

    /// The `CableError` that `body` throws; nil if it throws none (or another error).
    private func throwing(_ body: () throws -> Any) -> CableError? {
        do {
            _ = try body()
            return nil
        } catch {
            return error as? CableError
        }
    }
}

extension CableCoding.DateStrategy {
    /// The decoder of a coding with this date strategy.
    fileprivate var decoderForTests: JSONDecoder { CableCoding(dates: self).makeDecoder() }
}
