import Testing

@testable import CableReactive

@Suite("CableProtocol decoding")
struct CableProtocolDecodingTests {
    static let chat = #"{\"channel\":\"ChatChannel\",\"room\":\"1\"}"#
    static let chatID = #"{"channel":"ChatChannel","room":"1"}"#

    static let frames: [(String, ServerFrame?)] = [
        // welcome and ping
        (#"{"type":"welcome"}"#, .welcome(sessionID: nil, restored: nil)),
        (#"{"type":"welcome","sid":"rcl245"}"#, .welcome(sessionID: "rcl245", restored: nil)),
        (
            #"{"type":"welcome","sid":"yi421","restored":true,"restored_ids":["{\"channel\":\"A\"}"]}"#,
            .welcome(sessionID: "yi421", restored: .init(identifiers: [#"{"channel":"A"}"#]))
        ),
        (#"{"type":"welcome","sid":"s","restored":true}"#, .welcome(sessionID: "s", restored: .init(identifiers: nil))),
        (#"{"type":"welcome","sid":"s","restored":false,"restored_ids":[]}"#, .welcome(sessionID: "s", restored: nil)),
        (#"{"type":"welcome","sid":7,"restored":"yes"}"#, .welcome(sessionID: nil, restored: nil)),
        (
            #"{"type":"welcome","restored":true,"restored_ids":["a",1,null,"b"]}"#,
            .welcome(sessionID: nil, restored: .init(identifiers: ["a", "b"]))
        ),
        (#" { "type" : "welcome" } "#, .welcome(sessionID: nil, restored: nil)),
        (#"{"type":"ping","message":1724150400}"#, .ping),
        (#"{"message":1724150400,"type":"ping"}"#, .ping),
        (#"{"type":"ping"}"#, .ping),
        (#"{"type":"ping","message":"soon"}"#, .ping),
        // confirm and reject (Rails and AnyCable key orders)
        (#"{"identifier":"\#(chat)","type":"confirm_subscription"}"#, .confirm(identifier: chatID)),
        (#"{"type":"confirm_subscription","identifier":"\#(chat)"}"#, .confirm(identifier: chatID)),
        (#"{"identifier":"\#(chat)","type":"reject_subscription"}"#, .reject(identifier: chatID)),
        (#"{"type":"confirm_subscription","identifier":{"channel":"A"}}"#, nil),
        (#"{"type":"confirm_subscription","identifier":1}"#, nil),
        (#"{"type":"reject_subscription"}"#, nil),
        (#"{"type":"confirm_subscription","identifier":null}"#, nil),
        // disconnect
        (
            #"{"type":"disconnect","reason":"server_restart","reconnect":true}"#,
            .disconnect(reason: "server_restart", reconnect: true)
        ),
        (
            #"{"type":"disconnect","reason":"unauthorized","reconnect":false}"#,
            .disconnect(reason: "unauthorized", reconnect: false)
        ),
        (#"{"type":"disconnect","reason":null,"reconnect":true}"#, .disconnect(reason: nil, reconnect: true)),
        (#"{"type":"disconnect"}"#, .disconnect(reason: nil, reconnect: nil)),
        (#"{"type":"disconnect","reason":"x","reconnect":"true"}"#, .unknown),
        (#"{"type":"disconnect","reason":5,"reconnect":true}"#, .unknown),
        (#"{"type":"disconnect","reason":"x","reconnect":null}"#, .disconnect(reason: "x", reconnect: nil)),
        // data frames
        (#"{"identifier":"\#(chat)","message":{"body":"hi"}}"#, .message(identifier: chatID, message: ["body": "hi"])),
        (#"{"message":[1,2],"identifier":"\#(chat)"}"#, .message(identifier: chatID, message: [1, 2])),
        (#"{"identifier":"\#(chat)","message":null}"#, .message(identifier: chatID, message: nil)),
        (#"{"identifier":"\#(chat)","message":false}"#, .message(identifier: chatID, message: false)),
        (#"{"identifier":"\#(chat)","message":0}"#, .message(identifier: chatID, message: 0)),
        (#"{"identifier":"\#(chat)","message":""}"#, .message(identifier: chatID, message: "")),
        (
            #"{"identifier":"\#(chat)","message":{"type":"ping"}}"#,
            .message(identifier: chatID, message: ["type": "ping"])
        ),
        (
            #"{"identifier":"\#(chat)","message":{"type":"welcome"}}"#,
            .message(identifier: chatID, message: ["type": "welcome"])
        ),
        (
            #"{"identifier":"\#(chat)","message":{"t":1},"stream_id":"chat_42","epoch":"x123","offset":32}"#,
            .message(
                identifier: chatID, message: ["t": 1],
                position: StreamPosition(stream: "chat_42", epoch: "x123", offset: 32))
        ),
        (  // a position needs all three, with the right types
            #"{"identifier":"\#(chat)","message":1,"stream_id":"s","epoch":"e","offset":"3"}"#,
            .message(identifier: chatID, message: 1)
        ),
        (
            #"{"identifier":"\#(chat)","message":1,"stream_id":"s","offset":3}"#,
            .message(identifier: chatID, message: 1)
        ),
        (#"{"identifier":"\#(chat)","type":"confirm_history"}"#, .historyConfirmed(identifier: chatID)),
        (#"{"identifier":"\#(chat)","type":"reject_history"}"#, .historyRejected(identifier: chatID)),
        (#"{"identifier":"\#(chat)","type":"confirm_history","message":1}"#, .historyConfirmed(identifier: chatID)),
        (#"{"identifier":7,"type":"reject_history"}"#, nil),
        (#"{"identifier":"\#(chat)","message":"m","type":"update"}"#, .message(identifier: chatID, message: "m")),
        (#"{"type":"ping","identifier":"\#(chat)","message":1}"#, .message(identifier: chatID, message: 1)),
        (
            #"{"type":"presence","identifier":"\#(chat)","message":{"type":"join"}}"#,
            .message(identifier: chatID, message: ["type": "join"])
        ),
        (#"{"type":7,"identifier":"\#(chat)","message":1}"#, .message(identifier: chatID, message: 1)),
        // unknown
        (#"{}"#, .unknown),
        (#"{"type":"pong"}"#, .unknown),
        (#"{"identifier":"\#(chat)"}"#, .unknown),
        (#"{"type":"Welcome"}"#, .unknown),
        (#"{"type":null}"#, .unknown),
        (#"{"type":["welcome"]}"#, .unknown),
        (#"{"command":"subscribe"}"#, .unknown),
        // malformed or not an object
        (#"{"identifier":5,"message":1}"#, nil),
        (#"{"identifier":null}"#, nil),
        (#""welcome""#, nil),
        (#"[{"type":"welcome"}]"#, nil),
        ("null", nil),
        ("42", nil),
        ("", nil),
        ("   ", nil),
        (#"{"type":"welcome""#, nil),
        (#"{"type":"welcome"} x"#, nil),
        (#"{"type":"welcome"}{}"#, nil),
        (#"{"type":"welcome",}"#, nil),
        (#"{"type":"ping","message":1e999}"#, nil),
        (#"{'type':'welcome'}"#, nil),
    ]

    @Test("classifies server frames", arguments: frames)
    func classifies(text: String, expected: ServerFrame?) {
        #expect(CableProtocol.decode(text) == expected)
        let bytes = Array(text.utf8)
        let fromBytes = bytes.withUnsafeBufferPointer { CableProtocol.decode(utf8: $0) }
        #expect(fromBytes == expected)
    }

    @Test("keeps the identifier string verbatim, escapes decoded")
    func identifierVerbatim() {
        let text = #"{"identifier":"{\"id\":1,\"channel\":\"A\/B\",\"u\":\"\u00e9\"}","message":1}"#
        #expect(CableProtocol.decode(text) == .message(identifier: #"{"id":1,"channel":"A/B","u":"é"}"#, message: 1))
    }

    @Test("rejects invalid UTF-8 in byte frames")
    func invalidUTF8Bytes() {
        let bytes: [UInt8] = Array(#"{"identifier":"A","message":""#.utf8) + [0xFF, 0x22, 0x7D]
        #expect(bytes.withUnsafeBufferPointer { CableProtocol.decode(utf8: $0) } == nil)
    }
}

@Suite("CableProtocol encoding")
struct CableProtocolEncodingTests {
    static let identifier = #"{"channel":"ChatChannel","room":"1"}"#

    @Test("subscribe and unsubscribe write the identifier as a JSON string")
    func subscribeCommands() {
        #expect(
            CableProtocol.subscribe(identifier: Self.identifier)
                == #"{"command":"subscribe","identifier":"{\"channel\":\"ChatChannel\",\"room\":\"1\"}"}"#
        )
        #expect(
            CableProtocol.unsubscribe(identifier: Self.identifier)
                == #"{"command":"unsubscribe","identifier":"{\"channel\":\"ChatChannel\",\"room\":\"1\"}"}"#
        )
    }

    @Test("perform writes data as a JSON string with the action set")
    func perform() throws {
        let text = try CableProtocol.perform(identifier: Self.identifier, action: "speak", data: ["body": "hi"])
        #expect(
            text
                == #"{"command":"message","identifier":"{\"channel\":\"ChatChannel\",\"room\":\"1\"}","#
                + #""data":"{\"action\":\"speak\",\"body\":\"hi\"}"}"#
        )
        let command = try JSONValue(parsing: text)
        #expect(command["command"] == "message")
        #expect(command["identifier"]?.stringValue == Self.identifier)
        let data = try JSONValue(parsing: command["data"]?.stringValue ?? "")
        #expect(data == ["action": "speak", "body": "hi"])
    }

    @Test("perform overwrites an existing action and keeps the other members")
    func performOverwritesAction() throws {
        let text = try CableProtocol.perform(
            identifier: "{}",
            action: "real",
            data: ["action": "fake", "n": [1, 2.5, nil], "s": "line\nbreak"]
        )
        #expect(
            text
                == #"{"command":"message","identifier":"{}","#
                + #""data":"{\"action\":\"real\",\"n\":[1,2.5,null],\"s\":\"line\\nbreak\"}"}"#
        )
    }

    @Test("perform with empty data sends only the action")
    func performEmptyData() throws {
        let text = try CableProtocol.perform(identifier: "i", action: "ping", data: [:])
        #expect(text == #"{"command":"message","identifier":"i","data":"{\"action\":\"ping\"}"}"#)
    }

    @Test("perform refuses data that is not an object", arguments: [JSONValue.null, 1, "x", [1], true])
    func performRejectsNonObject(data: JSONValue) {
        #expect(throws: CableError.dataNotObject()) {
            try CableProtocol.perform(identifier: "i", action: "a", data: data)
        }
    }

    @Test("perform refuses non-finite numbers")
    func performRejectsNonFinite() {
        #expect(throws: CableError.unencodableData()) {
            try CableProtocol.perform(identifier: "i", action: "a", data: ["x": .double(.infinity)])
        }
    }

    @Test("identifier is canonical: compact with sorted keys")
    func identifierCanonical() throws {
        #expect(try CableProtocol.identifier(for: ["channel": "ChatChannel"]) == #"{"channel":"ChatChannel"}"#)
        #expect(
            try CableProtocol.identifier(for: ["room": "1", "channel": "ChatChannel"])
                == #"{"channel":"ChatChannel","room":"1"}"#
        )
        let a: JSONValue = ["channel": "Turbo::StreamsChannel", "signed_stream_name": "abc/==", "z": [1, 2], "id": 42]
        let b: JSONValue = ["id": 42, "z": [1, 2], "signed_stream_name": "abc/==", "channel": "Turbo::StreamsChannel"]
        #expect(try CableProtocol.identifier(for: a) == CableProtocol.identifier(for: b))
        #expect(
            try CableProtocol.identifier(for: a)
                == #"{"channel":"Turbo::StreamsChannel","id":42,"signed_stream_name":"abc/==","z":[1,2]}"#
        )
    }

    @Test("identifier with many keys does not depend on insertion order")
    func identifierManyKeys() throws {
        var forward: [String: JSONValue] = ["channel": "C"]
        var backward: [String: JSONValue] = [:]
        for index in 0..<40 { forward["k\(index)"] = .int(index) }
        for index in (0..<40).reversed() { backward["k\(index)"] = .int(index) }
        backward["channel"] = "C"
        #expect(try CableProtocol.identifier(for: .object(forward)) == CableProtocol.identifier(for: .object(backward)))
    }

    @Test(
        "identifier needs an object with a string channel",
        arguments: [JSONValue.null, "ChatChannel", ["ChatChannel"], [:], ["room": 1], ["channel": 1], ["channel": nil]]
    )
    func identifierMissingChannel(params: JSONValue) {
        #expect(throws: CableError.missingChannel()) { try CableProtocol.identifier(for: params) }
    }

    @Test("identifier refuses non-finite numbers")
    func identifierNonFinite() {
        #expect(throws: CableError.unencodableData()) {
            try CableProtocol.identifier(for: ["channel": "C", "x": .double(.nan)])
        }
    }

    @Test("a subscribe command's identifier decodes back verbatim from a confirmation")
    func subscribeConfirmRoundTrip() throws {
        let identifier = try CableProtocol.identifier(for: ["channel": "A", "q": "\"quoted\" \\ / é 😀\n"])
        let subscribe = try JSONValue(parsing: CableProtocol.subscribe(identifier: identifier))
        #expect(subscribe["identifier"]?.stringValue == identifier)
        var writer = JSONWriter()
        try writer.write(["type": "confirm_subscription", "identifier": .string(identifier)])
        #expect(CableProtocol.decode(writer.text) == .confirm(identifier: identifier))
    }
}

@Suite("CableError")
struct CableErrorTests {
    @Test("compares by code only, not by where it was created")
    func equality() {
        let first = CableError.missingChannel()
        let second = CableError.missingChannel()
        #expect(first == second)
        #expect(first.line != second.line)
        #expect(first.hashValue == second.hashValue)
        #expect(CableError.missingChannel() != .dataNotObject())
        #expect(CableError.invalidOption("a") != .invalidOption("b"))
        // Codes are values to compare or switch over (with a default: new ones may come).
        let option = CableError.invalidOption("staleTimeout")
        #expect(option.code == .invalidOption && option.option == "staleTimeout")
        #expect(CableError.missingChannel().option == nil)
        #expect(
            Set([CableError.Code.invalidURL, .invalidOption, .missingChannel, .unencodableData, .dataNotObject]).count
                == 5)
        #expect(CableError.Code.missingChannel.name == "missing_channel")
        #expect(first.file.hasSuffix("CableProtocolTests.swift"))
    }

    @Test("describes each code")
    func descriptions() {
        #expect(CableError.invalidURL().description == "invalid URL: use ws, wss, http or https with a host")
        #expect(CableError.invalidOption("timeout").description == "invalid option: timeout")
        #expect(CableError.missingChannel().description.hasPrefix("missing channel"))
        #expect(CableError.unencodableData().description.hasPrefix("unencodable data"))
        #expect(CableError.dataNotObject().description.hasPrefix("data is not an object"))
    }
}
