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
        (#"{"type":"pong"}"#, .pong),
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
        // presence: not data (no position, never offset-tracked); the message is read liberally
        (
            #"{"type":"presence","identifier":"\#(chat)","message":{"type":"join"}}"#,
            .presence(identifier: chatID, update: .unknown)
        ),
        (
            #"{"type":"presence","identifier":"\#(chat)","message":{"type":"join","id":"u1","info":{"n":1}}}"#,
            .presence(identifier: chatID, update: .joined(PresenceMember(id: "u1", info: ["n": 1])))
        ),
        (
            #"{"type":"presence","identifier":"\#(chat)","message":{"type":"join","id":7,"info":null}}"#,
            .presence(identifier: chatID, update: .joined(PresenceMember(id: "7")))
        ),
        (
            #"{"type":"presence","identifier":"\#(chat)","message":{"type":"leave","id":"u1"}}"#,
            .presence(identifier: chatID, update: .left(id: "u1"))
        ),
        (
            #"{"type":"presence","identifier":"\#(chat)","message":{"type":"info","total":2,"records":[{"info":{"a":1},"id":"u1"},{"id":"u2"},3,{"info":1}]}}"#,
            .presence(
                identifier: chatID,
                update: .info([PresenceMember(id: "u1", info: ["a": 1]), PresenceMember(id: "u2")]))
        ),
        (
            #"{"type":"presence","identifier":"\#(chat)","message":{"type":"info","total":0}}"#,
            .presence(identifier: chatID, update: .info([]))
        ),
        (
            #"{"type":"presence","identifier":"\#(chat)","message":{"type":"error","total":0}}"#,
            .presence(identifier: chatID, update: .error)
        ),
        (
            #"{"type":"presence","identifier":"\#(chat)","message":{"type":"leave"},"stream_id":"s","epoch":"e","offset":3}"#,
            .presence(identifier: chatID, update: .unknown)
        ),
        (#"{"type":7,"identifier":"\#(chat)","message":1}"#, .message(identifier: chatID, message: 1)),
        // unknown
        (#"{}"#, .unknown),
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

@Suite("CableProtocol one-pass decoding")
struct CableProtocolFrameDecodingTests {
    /// What `decodeFrame` gives, with a data frame's token as the text it covers.
    enum Decoded: Equatable {
        case message(token: String, message: JSONValue, position: StreamPosition?)
        case control(ControlFrame)
    }

    static func decodeFrame(_ text: String) -> Decoded? {
        Array(text.utf8).withUnsafeBufferPointer { bytes in
            switch CableProtocol.decodeFrame(validatedUTF8: bytes) {
            case .message(_, .text, _)?:
                Issue.record("a message is parsed unless the caller keeps its text: \(text)")
                return nil
            case .message(let range, .value(let message), let position)?:
                // The range is a string token's contents: quotes on both sides.
                #expect(range.lowerBound > 0 && range.upperBound < bytes.count, "\(text)")
                #expect(bytes[range.lowerBound - 1] == UInt8(ascii: "\""), "\(text)")
                #expect(bytes[range.upperBound] == UInt8(ascii: "\""), "\(text)")
                return .message(
                    token: String(decoding: bytes[range], as: UTF8.self), message: message, position: position)
            case .control(let control)?:
                return .control(control)
            case nil:
                return nil
            }
        }
    }

    /// `decodeFrame` and then the identifier read from the token: what `decode(validatedUTF8:)` gives.
    static func unescaped(_ text: String) -> ServerFrame? {
        Array(text.utf8).withUnsafeBufferPointer { bytes in
            CableProtocol.decodeFrame(validatedUTF8: bytes).flatMap { ServerFrame($0, in: bytes) }
        }
    }

    @Test(
        "agrees with decode(_:) on every frame of the table, data frames as .message only",
        arguments: CableProtocolDecodingTests.frames)
    func agreesWithTable(text: String, expected: ServerFrame?) {
        #expect(Self.unescaped(text) == expected)
        switch (Self.decodeFrame(text), expected) {
        case (.message?, .message?), (nil, nil): break
        case (.control(let control)?, let expected?): #expect(ServerFrame(control) == expected)
        case (let decoded, _):
            Issue.record("\(text): \(String(describing: decoded)) for \(String(describing: expected))")
        }
    }

    @Test("a data frame's token is the identifier as the server wrote it, escapes and all")
    func tokenAsWritten() {
        let escaped = #"{\"a\":\"\u00e9\\\/\ud83d\ude00\"}"#
        #expect(
            Self.decodeFrame(#"{"identifier":"\#(escaped)","message":{"n":1}}"#)
                == .message(token: escaped, message: ["n": 1], position: nil))
        #expect(
            Self.unescaped(#"{"identifier":"\#(escaped)","message":1}"#)
                == .message(identifier: #"{"a":"é\/😀"}"#, message: 1))
        #expect(
            Self.decodeFrame(
                #" { "message" : [1] , "stream_id":"s","epoch":"e","offset":3, "identifier" : "héllo ✓" } "#)
                == .message(
                    token: "héllo ✓", message: [1], position: StreamPosition(stream: "s", epoch: "e", offset: 3)))
        #expect(
            Self.decodeFrame(#"{"identifier":"","message":null}"#) == .message(token: "", message: nil, position: nil))
    }

    @Test("a repeated key counts with its last value; a bad token it replaces still fails the frame")
    func repeatedKeys() {
        #expect(
            Self.decodeFrame(#"{"identifier":"x","message":1,"identifier":"y","message":2}"#)
                == .message(token: "y", message: 2, position: nil))
        #expect(
            Self.decodeFrame(#"{"identifier":1,"identifier":"y","message":1}"#)
                == .message(token: "y", message: 1, position: nil))
        #expect(Self.decodeFrame(#"{"identifier":"x","identifier":2,"message":1}"#) == nil, "rule 4")
        #expect(Self.decodeFrame(#"{"identifier":"x","identifier":null,"type":"ping"}"#) == .control(.ping))
        for bad in [#"\&"#, #"\u12G4"#, #"\ud800"#, "tab\tin"] {
            #expect(Self.decodeFrame(#"{"identifier":"\#(bad)","identifier":"x","message":1}"#) == nil, "\(bad)")
            #expect(Self.decodeFrame(#"{"identifier":"\#(bad)","identifier":1,"type":"ping"}"#) == nil, "\(bad)")
            #expect(
                Self.decodeFrame(#"{"type":"confirm_subscription","identifier":"\#(bad)","identifier":"x"}"#) == nil)
            #expect(CableProtocol.decode(#"{"identifier":"\#(bad)","identifier":"x","message":1}"#) == nil)
        }
    }

    @Test("a malformed last token: a data frame whose identifier does not read, and nil for every other frame")
    func badToken() {
        for bad in [#"\&"#, #"\u12"#, #"\ud800"#, #"\udc00x"#, "tab\tin", "nul\u{0}"] {
            let data = #"{"identifier":"\#(bad)","message":1}"#
            #expect(Self.decodeFrame(data) == .message(token: bad, message: 1, position: nil), "\(bad)")
            #expect(Self.unescaped(data) == nil, "\(bad)")
            #expect(CableProtocol.decode(data) == nil, "\(bad)")
            for other in [
                #"{"identifier":"\#(bad)"}"#, #"{"identifier":"\#(bad)","type":"ping"}"#,
                #"{"identifier":"\#(bad)","type":"presence"}"#,
                #"{"identifier":"\#(bad)","type":"confirm_subscription","message":1}"#,
                #"{"identifier":"\#(bad)","type":"reject_history"}"#,
            ] {
                #expect(Self.decodeFrame(other) == nil, "\(other)")
            }
        }
    }

    @Test(
        "the types that carry an identifier are control frames, with or without a message",
        arguments: [
            ("confirm_subscription", ControlFrame.confirm(identifier: "x")),
            ("reject_subscription", ControlFrame.reject(identifier: "x")),
            ("confirm_history", ControlFrame.historyConfirmed(identifier: "x")),
            ("reject_history", ControlFrame.historyRejected(identifier: "x")),
        ])
    func identifiedControl(type: String, expected: ControlFrame) {
        #expect(Self.decodeFrame(#"{"type":"\#(type)","identifier":"\u0078"}"#) == .control(expected))
        #expect(Self.decodeFrame(#"{"message":{"m":1},"type":"\#(type)","identifier":"x"}"#) == .control(expected))
        #expect(Self.decodeFrame(#"{"identifier":"x","message":null,"type":"\#(type)"}"#) == .control(expected))
        #expect(Self.decodeFrame(#"{"type":"\#(type)","message":1}"#) == nil)
        #expect(Self.decodeFrame(#"{"type":"\#(type)","identifier":{"channel":"A"},"message":1}"#) == nil)
        #expect(Self.decodeFrame(#"{"type":"\#(type)","identifier":null}"#) == nil)
    }

    @Test("keys are matched as JSON compares them: escapes decoded, no prefix or near miss taken")
    func keysMatchAfterUnescaping() {
        #expect(
            Self.decodeFrame(#"{"identifi\u0065r":"x","m\u0065ssage":1,"\u006ffset":2}"#)
                == .message(token: "x", message: 1, position: StreamPosition(stream: nil, epoch: nil, offset: 2)))
        #expect(Self.decodeFrame(#"{"typ\u0065":"ping"}"#) == .control(.ping))
        #expect(
            Self.decodeFrame(#"{"\u0074ype":"disconnect","r\u0065ason":"x"}"#)
                == .control(.disconnect(reason: "x", reconnect: nil)))
        for key in ["identifie", "identifierx", "Identifier", "identifier ", #"ident\u0069fie"#, #"identifier\u0000"#] {
            #expect(Self.decodeFrame(#"{"\#(key)":"x","message":1}"#) == .control(.unknown), "\(key)")
        }
        #expect(Self.decodeFrame(#"{"typ":"ping"}"#) == .control(.unknown))
        #expect(Self.decodeFrame(#"{"":"ping","type":"ping"}"#) == .control(.ping))
    }

    @Test("an unknown type: data with a message, else .unknown, unless the identifier is not a string")
    func unknownTypes() {
        #expect(
            Self.decodeFrame(#"{"type":"presences","identifier":"x","message":1}"#)
                == .message(token: "x", message: 1, position: nil))
        #expect(
            Self.decodeFrame(#"{"type":"presence","identifier":"x","message":1}"#)
                == .control(.presence(identifier: "x", update: .unknown)))
        #expect(Self.decodeFrame(#"{"type":"presence","identifier":"x"}"#) == .control(.unknown))
        #expect(Self.decodeFrame(#"{"type":"confirm_subscriptions","identifier":"x"}"#) == .control(.unknown))
        #expect(Self.decodeFrame(#"{"type":"presence"}"#) == .control(.unknown))
        #expect(Self.decodeFrame(#"{"type":"presence","identifier":1,"message":1}"#) == nil)
        #expect(
            Self.decodeFrame(#"{"type":"welcome","identifier":1,"message":1}"#)
                == .control(.welcome(sessionID: nil, restored: nil)))
    }

    @Test("identifier(token:in:) reads just the token, and nothing that is not a string token")
    func identifierFromToken() {
        let text = #"{"identifier":"a\"b\u00e9","x":"\&","message":1}"#
        let bytes = Array(text.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            let token = 15..<25  // a\"b\u00e9
            #expect(String(decoding: buffer[token], as: UTF8.self) == #"a\"b\u00e9"#)
            #expect(CableProtocol.identifier(token: token, in: buffer) == #"a"bé"#)
            #expect(CableProtocol.identifier(token: 2..<12, in: buffer) == "identifier")
            #expect(CableProtocol.identifier(token: 32..<34, in: buffer) == nil, "a bad escape")
            #expect(CableProtocol.identifier(token: 16..<25, in: buffer) == nil, "not bounded by quotes")
            #expect(CableProtocol.identifier(token: 15..<17, in: buffer) == nil, "an escaped quote is no end")
            #expect(CableProtocol.identifier(token: 0..<3, in: buffer) == nil)
            #expect(CableProtocol.identifier(token: 40..<bytes.count, in: buffer) == nil)
            #expect(CableProtocol.identifier(token: 50..<90, in: buffer) == nil, "out of bounds")
        }
        [UInt8]().withUnsafeBufferPointer { #expect(CableProtocol.identifier(token: 0..<0, in: $0) == nil) }
    }

    @Test("decode(utf8:) checks the UTF-8 of identifier tokens, read or replaced")
    func invalidUTF8InTokens() {
        let bad: [UInt8] = [0xFF]
        let frames: [[UInt8]] = [
            Array(#"{"identifier":""#.utf8) + bad + Array(#"","message":1}"#.utf8),
            Array(#"{"identifier":""#.utf8) + bad + Array(#"","identifier":"x","message":1}"#.utf8),
            Array(#"{"type":"confirm_subscription","identifier":""#.utf8) + bad + Array(#""}"#.utf8),
            Array(#"{"type":"ping","identifier":""#.utf8) + bad + Array(#""}"#.utf8),
        ]
        for frame in frames {
            #expect(frame.withUnsafeBufferPointer { CableProtocol.decode(utf8: $0) } == nil, "\(frame)")
        }
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
