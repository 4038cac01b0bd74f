import Foundation
import Testing

@testable import CableReactive

@Suite("JSONValue")
struct JSONValueTests {
    @Test("literals build the matching cases")
    func literals() {
        let value: JSONValue = ["n": nil, "b": true, "i": 1, "d": 1.5, "s": "x", "a": [1, "two"], "o": ["k": false]]
        #expect(
            value
                == .object([
                    "n": .null, "b": .bool(true), "i": .int(1), "d": .double(1.5), "s": .string("x"),
                    "a": .array([.int(1), .string("two")]), "o": .object(["k": .bool(false)]),
                ])
        )
        let repeated: JSONValue = ["k": 1, "k": 2]
        #expect(repeated == ["k": 2])
    }

    @Test("subscripts return nil instead of trapping")
    func safeSubscripts() {
        let value: JSONValue = ["list": [10, 20], "name": "x"]
        #expect(value["list"]?[1] == 20)
        #expect(value["list"]?[2] == nil)
        #expect(value["list"]?[-1] == nil)
        #expect(value["missing"] == nil)
        #expect(value["name"]?["key"] == nil)
        #expect(value["name"]?[0] == nil)
        #expect(value[0] == nil)
    }

    @Test("accessors return values only for their own cases")
    func accessors() {
        #expect(JSONValue.string("a").stringValue == "a")
        #expect(JSONValue.int(1).stringValue == nil)
        #expect(JSONValue.int(3).intValue == 3)
        #expect(JSONValue.double(3).intValue == 3)
        #expect(JSONValue.double(3.5).intValue == nil)
        #expect(JSONValue.double(1e300).intValue == nil)
        #expect(JSONValue.string("3").intValue == nil)
        #expect(JSONValue.int(3).doubleValue == 3.0)
        #expect(JSONValue.double(0.5).doubleValue == 0.5)
        #expect(JSONValue.bool(true).doubleValue == nil)
        #expect(JSONValue.bool(false).boolValue == false)
        #expect(JSONValue.int(1).boolValue == nil)
        #expect(JSONValue.string("true").boolValue == nil)
        #expect(JSONValue.array([1]).arrayValue == [1])
        #expect(JSONValue.object([:]).arrayValue == nil)
        #expect(JSONValue.object(["a": 1]).objectValue == ["a": 1])
        #expect(JSONValue.array([]).objectValue == nil)
        #expect(JSONValue.null.isNull)
        #expect(!JSONValue.bool(false).isNull)
    }

    @Test("numbers compare and hash by value across .int and .double")
    func numericEquality() {
        #expect(JSONValue.int(2) == .double(2.0))
        #expect(JSONValue.double(2.0) == .int(2))
        #expect(JSONValue.int(0) == .double(-0.0))
        #expect(JSONValue.int(2) != .double(2.5))
        #expect(JSONValue.int(9_007_199_254_740_993) != .double(9_007_199_254_740_992))
        #expect(JSONValue.int(1) != .bool(true))
        #expect(JSONValue.string("1") != .int(1))
        #expect(Set<JSONValue>([.int(2), .double(2.0), .double(2.5)]).count == 2)
        #expect(JSONValue.int(2).hashValue == JSONValue.double(2).hashValue)
        #expect([JSONValue.int(1)] as JSONValue == [1.0])
    }
}

@Suite("JSON serializer")
struct JSONSerializerTests {
    static let cases: [(JSONValue, String)] = [
        (nil, "null"),
        (true, "true"),
        (false, "false"),
        (0, "0"),
        (-42, "-42"),
        (.int(Int.min), "-9223372036854775808"),
        (1.5, "1.5"),
        (2.0, "2.0"),
        (-0.0, "-0.0"),
        (0.1, "0.1"),
        (1e20, "1e+20"),
        (1e-7, "1e-07"),
        (.double(.greatestFiniteMagnitude), "1.7976931348623157e+308"),
        ("", #""""#),
        ("a/b", #""a/b""#),
        ("q\"b\\", #""q\"b\\""#),
        ("\n\r\t\u{8}\u{C}", #""\n\r\t\b\f""#),
        ("\u{0}\u{1F}\u{7F}", "\"\\u0000\\u001f\u{7F}\""),
        ("é😀\u{2028}", "\"é😀\u{2028}\""),
        ([], "[]"),
        ([:], "{}"),
        ([1, [2, [3]], nil], "[1,[2,[3]],null]"),
        (["b": 1, "a": ["d": 1, "c": 2], "A": 0, "é": 3, "z": 4], #"{"A":0,"a":{"c":2,"d":1},"b":1,"z":4,"é":3}"#),
    ]

    @Test("writes compact JSON with sorted keys and minimal escaping", arguments: cases)
    func writes(value: JSONValue, expected: String) throws {
        #expect(try value.jsonText() == expected)
        #expect(value.description == expected)
    }

    @Test("writes integral doubles so they parse back as .double")
    func integralDoublesStayDoubles() throws {
        let text = try JSONValue.double(3).jsonText()
        guard case .double(3) = try JSONValue(parsing: text) else {
            Issue.record("\(text) did not parse back as .double")
            return
        }
    }

    @Test("refuses non-finite doubles in jsonText and prints null in description")
    func nonFinite() {
        for number in [Double.nan, .infinity, -.infinity] {
            let value: JSONValue = ["x": [.double(number)]]
            #expect(throws: JSONEncodingError.nonFiniteNumber) { try value.jsonText() }
            #expect(value.description == #"{"x":[null]}"#)
        }
    }

    @Test("produces the same text whatever order keys were inserted in")
    func keyOrderIndependence() throws {
        var forward: [String: JSONValue] = [:]
        var backward: [String: JSONValue] = [:]
        let keys = (0..<50).map { "key\($0)" }
        for key in keys { forward[key] = .string(key) }
        for key in keys.reversed() { backward[key] = .string(key) }
        #expect(try JSONValue.object(forward).jsonText() == JSONValue.object(backward).jsonText())
    }

    @Test("escapes every control character so the output parses back")
    func controlCharacters() throws {
        let all = String(String.UnicodeScalarView((0..<0x20).compactMap(Unicode.Scalar.init)))
        let text = try JSONValue.string(all).jsonText()
        #expect(!text.utf8.contains { $0 < 0x20 })
        #expect(try JSONValue(parsing: text) == .string(all))
    }
}

@Suite("JSON round trip")
struct JSONRoundTripTests {
    /// SplitMix64: a tiny seedable generator, so failures reproduce.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var mixed = state
            mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
            mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
            return mixed ^ (mixed >> 31)
        }
    }

    static func randomString(_ rng: inout SeededGenerator) -> String {
        let alphabet: [Unicode.Scalar] = [
            "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "\u{2028}",
            "€", "😀", "\u{FFFF}", "\u{10FFFF}", "{", "}", "[", ":", ",",
        ]
        let length = Int.random(in: 0...12, using: &rng)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            if let scalar = alphabet.randomElement(using: &rng) { scalars.append(scalar) }
        }
        return String(scalars)
    }

    static func randomDouble(_ rng: inout SeededGenerator) -> Double {
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return Double(Int.random(in: -1000...1000, using: &rng)) / 8
        case 1: return Double.random(in: -1e6...1e6, using: &rng)
        case 2: return Double(bitPattern: rng.next())
        default:
            let specials: [Double] = [0.1, 1e-7, 1e21, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -0.0]
            return specials.randomElement(using: &rng) ?? 0
        }
    }

    static func randomValue(_ rng: inout SeededGenerator, depth: Int) -> JSONValue {
        let choice = Int.random(in: 0..<(depth > 4 ? 5 : 7), using: &rng)
        switch choice {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2: return .int(Int(truncatingIfNeeded: rng.next()) >> Int.random(in: 0..<64, using: &rng))
        case 3:
            let number = randomDouble(&rng)
            return .double(number.isFinite ? number : 1.25)
        case 4: return .string(randomString(&rng))
        case 5:
            return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            var object: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                object[randomString(&rng)] = randomValue(&rng, depth: depth + 1)
            }
            return .object(object)
        }
    }

    @Test("serialize then parse gives back an equal value (seeded random values)", arguments: [1, 2, 3, 42])
    func serializeParse(seed: UInt64) throws {
        var rng = SeededGenerator(state: seed)
        for _ in 0..<500 {
            let value = Self.randomValue(&rng, depth: 0)
            let text = try value.jsonText()
            let parsed = try JSONValue(parsing: text)
            #expect(parsed == value, "\(text)")
            #expect(try parsed.jsonText() == text)
            #expect(try JSONValue(parsingUTF8: Array(text.utf8)) == value)
        }
    }

    @Test("JSONEncoder then JSONDecoder gives back an equal value (seeded random values)")
    func codableRoundTrip() throws {
        var rng = SeededGenerator(state: 7)
        for _ in 0..<300 {
            let value = Self.randomValue(&rng, depth: 0)
            let data = try JSONEncoder().encode(value)
            let decoded = try JSONDecoder().decode(JSONValue.self, from: data)
            #expect(decoded == value, "\(value)")
        }
    }

    @Test("our parser reads what JSONEncoder writes, and JSONSerialization reads what we write")
    func foundationInterop() throws {
        var rng = SeededGenerator(state: 99)
        for _ in 0..<300 {
            let value = Self.randomValue(&rng, depth: 0)
            let encoded = try JSONEncoder().encode(value)
            #expect(try JSONValue(parsingUTF8: encoded) == value)
            let text = try value.jsonText()
            #expect(throws: Never.self) {
                try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)
            }
        }
    }
}

@Suite("JSON Codable bridges")
struct JSONCodableBridgeTests {
    struct Message: Codable, Equatable {
        var body: String
        var seq: Int
        var tags: [String]
        var ratio: Double?
        var nested: Nested

        struct Nested: Codable, Equatable {
            var flag: Bool
        }
    }

    @Test("encodes a struct into a JSONValue and decodes it back")
    func structRoundTrip() throws {
        let message = Message(body: "hi /there", seq: 3, tags: ["a", "b"], ratio: 0.5, nested: .init(flag: true))
        let value = try JSONValue(encoding: message)
        #expect(
            value == ["body": "hi /there", "seq": 3, "tags": ["a", "b"], "ratio": 0.5, "nested": ["flag": true]]
        )
        let decoded: Message = try value.decode()
        #expect(decoded == message)
        #expect(try value.decode(Message.self) == message)
    }

    @Test("decoding ignores extra keys and reports mismatched types")
    func decodeMismatch() throws {
        let value: JSONValue = ["body": "x", "seq": 1, "tags": [], "nested": ["flag": false], "extra": nil]
        #expect(try value.decode(Message.self).seq == 1)
        let wrong: JSONValue = ["body": 1, "seq": 1, "tags": [], "nested": ["flag": false]]
        #expect(throws: DecodingError.self) { try wrong.decode(Message.self) }
        #expect(throws: JSONEncodingError.nonFiniteNumber) {
            try JSONValue.array([.double(.nan)]).decode([Double].self)
        }
    }

    @Test("encodes top-level scalars")
    func scalars() throws {
        #expect(try JSONValue(encoding: "text") == "text")
        #expect(try JSONValue(encoding: 5) == 5)
        #expect(try JSONValue(encoding: [true]) == [true])
        #expect(try JSONValue(encoding: Int?.none) == nil)
        #expect(throws: (any Error).self) { try JSONValue(encoding: Double.nan) }
    }
}
