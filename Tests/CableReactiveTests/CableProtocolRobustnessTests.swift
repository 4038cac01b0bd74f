import Testing

@testable import CableReactive

@Suite("CableProtocol robustness")
struct CableProtocolRobustnessTests {
    static let seeds: [String] = [
        #"{"type":"welcome","sid":"abc"}"#,
        #"{"type":"ping","message":1724150400}"#,
        #"{"identifier":"{\"channel\":\"ChatChannel\",\"room\":\"1\"}","type":"confirm_subscription"}"#,
        #"{"type":"reject_subscription","identifier":"{\"channel\":\"A\"}"}"#,
        #"{"type":"disconnect","reason":"server_restart","reconnect":true}"#,
        #"{"identifier":"{\"channel\":\"A\"}","message":{"body":"h\u00e9\ud83d\ude00","n":[1,-2.5e-3,true,null]}}"#,
        #"{"identifier":"{\"channel\":\"A\"}","message":null,"stream_id":"s","epoch":"e","offset":32}"#,
    ]

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

    @Test("30,000 random and mutated frames never crash the decoder, and both input paths agree")
    func randomFrames() throws {
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
            let parsed = try? JSONValue(parsing: text)
            if Array(text.utf8) == bytes {
                #expect(fromBytes == frame, "\(text)")
            } else {
                #expect(fromBytes == nil, "invalid UTF-8 accepted: \(bytes)")
            }
            if frame != nil {
                decodedCount += 1
                #expect(parsed?.objectValue != nil, "\(text)")
            } else if let object = parsed?.objectValue {
                // Only a missing or ill-typed identifier makes a valid object undecodable.
                let badIdentifier = object["identifier"]?.stringValue == nil
                let needsIdentifier = ["confirm_subscription", "reject_subscription"].contains(object["type"])
                #expect(badIdentifier && (needsIdentifier || object["identifier"] != nil), "\(text)")
            }
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
