import Testing

@testable import CableReactive

@Suite("CableProtocol robustness")
struct CableProtocolRobustnessTests {
    static let seeds: [String] = [
        #"{"type":"welcome","sid":"abc"}"#,
        #"{"type":"ping","message":1724150400}"#,
        #"{"type":"pong"}"#,
        #"{"identifier":"{\"channel\":\"ChatChannel\",\"room\":\"1\"}","type":"confirm_subscription"}"#,
        #"{"type":"reject_subscription","identifier":"{\"channel\":\"A\"}"}"#,
        #"{"type":"disconnect","reason":"server_restart","reconnect":true}"#,
        #"{"identifier":"{\"channel\":\"A\"}","message":{"body":"h\u00e9\ud83d\ude00","n":[1,-2.5e-3,true,null]}}"#,
        #"{"identifier":"{\"channel\":\"A\"}","message":null,"stream_id":"s","epoch":"e","offset":32}"#,
        #"{"type":"confirm_history","identifier":"{\"channel\":\"A\"}","message":1}"#,
        #"{"identifier":"\u0041","type":"reject_history","identifier":"x"}"#,
    ]

    /// The rules of `CableProtocol.decode(_:)` (its doc comment) applied to the frame parsed whole by
    /// `JSONValue(parsing:)`: a reference that shares no code with the decoder but the JSON parser.
    static func reference(_ text: String) -> ServerFrame? {
        guard let object = (try? JSONValue(parsing: text))?.objectValue else { return nil }
        let type = object["type"]?.stringValue
        let identifier = object["identifier"]?.stringValue
        let identified: [String: (String) -> ServerFrame] = [
            "confirm_subscription": ServerFrame.confirm, "reject_subscription": ServerFrame.reject,
            "confirm_history": ServerFrame.historyConfirmed, "reject_history": ServerFrame.historyRejected,
        ]
        if let type, let make = identified[type] { return identifier.map(make) }
        if let identifier, let message = object["message"] {
            var position: StreamPosition?
            if case .string(let stream)? = object["stream_id"], case .string(let epoch)? = object["epoch"],
                let offset = object["offset"]?.intValue
            {
                position = StreamPosition(stream: stream, epoch: epoch, offset: offset)
            }
            return .message(identifier: identifier, message: message, position: position)
        }
        switch type {
        case "welcome":
            let sessionID = object["sid"]?.stringValue
            guard object["restored"] == true else { return .welcome(sessionID: sessionID, restored: nil) }
            let restored = object["restored_ids"]?.arrayValue?.compactMap(\.stringValue)
            return .welcome(sessionID: sessionID, restored: .init(identifiers: restored))
        case "ping":
            return .ping
        case "pong":
            return .pong
        case "disconnect":
            var reason: String?
            switch object["reason"] {
            case nil, .null?: break
            case .string(let text)?: reason = text
            default: return .unknown
            }
            var reconnect: Bool?
            switch object["reconnect"] {
            case nil, .null?: break
            case .bool(let flag)?: reconnect = flag
            default: return .unknown
            }
            return .disconnect(reason: reason, reconnect: reconnect)
        default:
            return object["identifier"] != nil && identifier == nil ? nil : .unknown
        }
    }

    static let interesting: [UInt8] =
        Array(#"{}[]":,\"-+.0123456789eEtrufalsn u/ "#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xFF]

    /// Applies one to three random edits: flip, insert, delete, truncate, duplicate a range.
    static func mutate(_ input: [UInt8], _ rng: inout JSONRoundTripTests.SeededGenerator) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &rng)
            switch Int.random(in: 0..<6, using: &rng) {
            case 0 where !bytes.isEmpty:
                bytes[position] = UInt8.random(in: 0...255, using: &rng)
            case 1:
                bytes.insert(interesting.randomElement(using: &rng) ?? 0x20, at: position)
            case 2 where !bytes.isEmpty:
                bytes.remove(at: position)
            case 3:
                bytes.removeLast(bytes.count - position)
            case 4 where !bytes.isEmpty:
                let end = min(bytes.count, position + Int.random(in: 1...20, using: &rng))
                bytes.insert(contentsOf: bytes[position..<end], at: position)
            default:
                if !bytes.isEmpty { bytes[position] = interesting.randomElement(using: &rng) ?? 0x20 }
            }
        }
        return bytes
    }

    @Test("30,000 random and mutated frames never crash the decoder, both input paths agree, and so does the reference")
    func randomFrames() {
        var rng = JSONRoundTripTests.SeededGenerator(state: 0xCAB1E)
        var decodedCount = 0
        for round in 0..<30_000 {
            let bytes: [UInt8]
            if round % 10 == 0 {
                bytes = (0..<Int.random(in: 0...40, using: &rng)).map { _ in
                    Self.interesting.randomElement(using: &rng) ?? 0
                }
            } else {
                let seed = Array((Self.seeds.randomElement(using: &rng) ?? "{}").utf8)
                bytes = Self.mutate(seed, &rng)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            let frame = CableProtocol.decode(text)
            let fromBytes = bytes.withUnsafeBufferPointer { CableProtocol.decode(utf8: $0) }
            if Array(text.utf8) == bytes {
                #expect(fromBytes == frame, "\(text)")
            } else {
                #expect(fromBytes == nil, "invalid UTF-8 accepted: \(bytes)")
            }
            #expect(frame == Self.reference(text), "\(text)")
            if frame != nil { decodedCount += 1 }
        }
        // The mutations must leave enough frames intact to exercise the classifier, too.
        #expect(decodedCount > 3_000)
    }

    @Test("random bytes never crash the parser")
    func randomBytes() {
        var rng = JSONRoundTripTests.SeededGenerator(state: 12_345)
        for _ in 0..<5_000 {
            let bytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = try? JSONValue(parsingUTF8: bytes)
            _ = try? JSONValue(parsing: String(decoding: bytes, as: UTF8.self))
        }
    }
}
