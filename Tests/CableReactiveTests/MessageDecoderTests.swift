import CableTesting
import Foundation
import Testing

@testable import CableReactive

/// What a decode gave: a value, or the case and coding path of its `DecodingError`.
private enum Outcome<T: Equatable>: Equatable, CustomStringConvertible {
    case value(T)
    case failure(String, [String])

    init(_ body: () throws -> T) {
        do {
            self = .value(try body())
        } catch let error as DecodingError {
            func rendered(_ path: [any CodingKey]) -> [String] {
                path.map { "\($0.stringValue)#\($0.intValue.map(String.init) ?? "-")" }
            }
            switch error {
            case .typeMismatch(_, let context): self = .failure("typeMismatch", rendered(context.codingPath))
            case .valueNotFound(_, let context): self = .failure("valueNotFound", rendered(context.codingPath))
            case .keyNotFound(let key, let context):
                self = .failure("keyNotFound", rendered(context.codingPath + [key]))
            case .dataCorrupted(let context): self = .failure("dataCorrupted", rendered(context.codingPath))
            @unknown default: self = .failure("unknown", [])
            }
        } catch {
            self = .failure("not a DecodingError: \(error)", [])
        }
    }

    var description: String {
        switch self {
        case .value(let value): "value(\(value))"
        case .failure(let kind, let path): "\(kind) at \(path)"
        }
    }
}

private let codings: [CableCoding] = [CableCoding.KeyStrategy.asDeclared, .snakeCase].flatMap { keys in
    [
        CableCoding.DateStrategy.iso8601, .iso8601WithoutFraction, .secondsSince1970, .millisecondsSince1970,
        .deferredToDate,
    ]
    .map { CableCoding(dates: $0, keys: keys) }
}

/// Counts the comparisons made, so a test can say it made some.
private final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func add() { lock.withLock { value += 1 } }
    var count: Int { lock.withLock { value } }
}

/// Decodes `text` as `T` with ours, from the parsed value and from the text's bytes (a message's path), and with
/// `JSONDecoder`, from the value's own text (what the client did before) and, when `exact`, from `text` itself,
/// for every coding. Not `exact`: numbers a `JSONValue` cannot hold, which both of ours read as the parser does,
/// or keys that a `JSONValue` keeps other than the text's first (then `bytesExact`: from the bytes, the text's).
private func compare<T: Decodable & Equatable>(
    _ type: T.Type, _ text: String, exact: Bool = true, bytesExact: Bool? = nil, codings: [CableCoding] = codings,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let value: JSONValue
    do {
        value = try JSONValue(parsing: text)
    } catch {
        Issue.record("does not parse: \(text)", sourceLocation: sourceLocation)
        return
    }
    let serialized: String
    do {
        serialized = try value.jsonText()
    } catch {
        Issue.record("does not serialize: \(text)", sourceLocation: sourceLocation)
        return
    }
    for coding in codings {
        let ours = Outcome { try MessageDecoder(coding: coding).decode(T.self, from: value) }
        let fromText = Outcome { try MessageDecoder(coding: coding).decode(T.self, fromJSON: Array(text.utf8)) }
        let before = Outcome { try coding.makeDecoder().decode(T.self, from: Data(serialized.utf8)) }
        #expect(
            ours == before, "\(T.self) from \(text), \(coding.dates) \(coding.keys)", sourceLocation: sourceLocation)
        let original = Outcome { try coding.makeDecoder().decode(T.self, from: Data(text.utf8)) }
        #expect(
            fromText == (bytesExact ?? exact ? original : ours),
            "\(T.self) from the bytes of \(text), \(coding.dates) \(coding.keys)", sourceLocation: sourceLocation)
        if exact {
            #expect(
                ours == original, "\(T.self) from original \(text), \(coding.dates) \(coding.keys)",
                sourceLocation: sourceLocation)
        }
    }
}

// MARK: - Shapes

private struct Box<V: Decodable & Equatable>: Decodable, Equatable {
    var v: V
}

private struct Primitives: Decodable, Equatable {
    var int: Int
    var double: Double
    var bool: Bool
    var string: String
    var optionalInt: Int?
    var optionalString: String?
    var float: Float?
    var small: UInt8?
    var signed: Int8?
    var wide: UInt64?
}

private struct Event: Decodable, Equatable {
    enum Kind: String, Decodable { case created, deleted }
    struct Author: Decodable, Equatable {
        var userID: Int?
        var displayName: String?
        var _private: String?
        var item2Count: Int?
    }
    var id: Int
    var createdAt: Date
    var updatedAt: Date?
    var payload: Data?
    var link: URL?
    var price: Decimal?
    var tags: [String]?
    var counts: [String: Int]?
    var byId: [Int: String]?
    var kind: Kind?
    var author: Author?
    var authors: [Author]?
}

/// Rails' `as_json` of a record, as the message of a broadcast.
private struct Message: Decodable, Equatable {
    var id: Int
    var body: String
    // swift-format-ignore: AlwaysUseLowerCamelCase
    var created_at: Date?
    var createdAt: Date?
    var user: [String: String]?
}

private class Base: Decodable {
    var name: String
    private enum CodingKeys: String, CodingKey { case name }
    required init(from decoder: any Decoder) throws {
        name = try decoder.container(keyedBy: CodingKeys.self).decode(String.self, forKey: .name)
    }
}

private final class Derived: Base, @unchecked Sendable {
    var level: Int
    private enum CodingKeys: String, CodingKey { case level, parent }
    required init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        level = try container.decode(Int.self, forKey: .level)
        try super.init(from: container.superDecoder())
    }
}

private struct SuperShape: Decodable, Equatable {
    var name: String
    var level: Int
    var parentName: String?
    private enum CodingKeys: String, CodingKey { case parent }
    init(from decoder: any Decoder) throws {
        let derived = try Derived(from: decoder)
        name = derived.name
        level = derived.level
        let container = try decoder.container(keyedBy: CodingKeys.self)
        parentName = try? Base(from: container.superDecoder(forKey: .parent)).name
    }
}

/// Nested containers, `allKeys`, `contains`, `decodeNil` and an unkeyed `superDecoder`, by hand.
private struct Custom: Decodable, Equatable {
    var keys: [String]
    var hasFlag: Bool
    var flagIsNil: Bool
    var point: [Double]
    var first: String
    var rest: [Int?]
    var fromSuper: String?
    var atEnd: Bool

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
    private enum Keys: String, CodingKey { case flag, geo, list }
    private enum GeoKeys: String, CodingKey { case lat, lng, innerName }

    init(from decoder: any Decoder) throws {
        keys = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue).sorted()
        let container = try decoder.container(keyedBy: Keys.self)
        hasFlag = container.contains(.flag)
        flagIsNil = hasFlag ? try container.decodeNil(forKey: .flag) : false
        let geo = try container.nestedContainer(keyedBy: GeoKeys.self, forKey: .geo)
        point = [try geo.decode(Double.self, forKey: .lat), try geo.decode(Double.self, forKey: .lng)]
        var list = try container.nestedUnkeyedContainer(forKey: .list)
        var inner = try list.nestedContainer(keyedBy: GeoKeys.self)
        first = try inner.decode(String.self, forKey: .innerName)
        var numbers = try list.nestedUnkeyedContainer()
        var rest: [Int?] = []
        while !numbers.isAtEnd {
            let isNil = try numbers.decodeNil()
            if isNil {
                rest.append(nil)
            } else {
                rest.append(try numbers.decode(Int.self))
            }
        }
        self.rest = rest
        fromSuper = list.isAtEnd ? nil : try list.superDecoder().singleValueContainer().decode(String.self)
        let end = try list.decodeIfPresent(Int.self)
        atEnd = end == nil
        inner = try decoder.container(keyedBy: GeoKeys.self)
        _ = inner
    }
}

private struct SnakeKeys: Decodable, Equatable {
    var createdAt: Date?
    var userID: Int?
    var userId: Int?
    var _leading: Int?
    // swift-format-ignore: AlwaysUseLowerCamelCase
    var trailing_: Int?
    var item2: Int?
    var version2Name: String?
    var aBC: Int?
    var urlPath: String?
}

// MARK: - Tests

@Suite("MessageDecoder")
struct MessageDecoderTests {
    static let numbers = [
        "0", "-0", "1", "1.0", "-1", "1.5", "127", "128", "-128", "-129", "255", "256", "65536", "1e2", "1E2",
        "1e-2", "2.5e1", "-0.0", "4294967296", "9007199254740992", "9007199254740993", "9223372036854775807",
        "-9223372036854775808", "1e17", "1e19", "-1e19", "1e308", "-1e308", "5e-324", "3.4028234663852886e38",
        "3.5e38", "1e-50", "0.1", "3.14", "1796172737.123", "true", "null", "\"1\"", "[]", "{}",
    ]

    /// Numbers whose text a `JSONValue` cannot keep exactly (beyond `Int`, or underflowing), so `JSONDecoder` on
    /// the original text may differ; ours must still agree with `JSONDecoder` on the value's text.
    static let inexactNumbers = [
        "9223372036854775808", "18446744073709551615", "18446744073709551616", "9007199254740993.0",
        "1.2345678901234567e18", "1e-400", "123456789012345678901234567890",
    ]

    private static func compareNumber(_ text: String, exact: Bool) {
        func each<V: Decodable & Equatable>(_ type: V.Type) {
            compare(V.self, text, exact: exact, codings: [CableCoding()])
            compare([V].self, "[\(text)]", exact: exact, codings: [CableCoding()])
            compare([V?].self, "[\(text),null]", exact: exact, codings: [CableCoding()])
            compare(Box<V>.self, #"{"v":\#(text)}"#, exact: exact, codings: [CableCoding()])
            compare(Box<V?>.self, #"{"v":\#(text)}"#, exact: exact, codings: [CableCoding()])
        }
        each(Int.self)
        each(Int8.self)
        each(Int16.self)
        each(Int32.self)
        each(Int64.self)
        each(UInt.self)
        each(UInt8.self)
        each(UInt16.self)
        each(UInt32.self)
        each(UInt64.self)
        each(Double.self)
        each(Float.self)
        each(Decimal.self)
        each(Bool.self)
        each(String.self)
    }

    @Test("numbers into every number type, Bool and String, at the top, in arrays and at keys")
    func numbers() {
        for text in Self.numbers { Self.compareNumber(text, exact: true) }
    }

    @Test("numbers a JSONValue cannot hold exactly decode as JSONDecoder decodes the value's own text")
    func inexactNumbers() {
        for text in Self.inexactNumbers { Self.compareNumber(text, exact: false) }
    }

    @Test("1e400 does not parse, so it never reaches a decoder")
    func hugeNumber() {
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: "[1e400]") }
    }

    @Test("structs of primitives and optionals; missing keys, nulls and wrong types")
    func primitives() {
        let good =
            #"{"int":1,"double":2.5,"bool":true,"string":"é\n\"\u00e9\ud83d\ude00","optionalInt":null,"small":255,"signed":-128,"wide":9223372036854775807,"float":0.1}"#
        compare(Primitives.self, good)
        compare(Primitives.self, #"{"int":1.0,"double":2,"bool":false,"string":"","optionalString":"x"}"#)
        compare(Primitives.self, #"{"double":2,"bool":false,"string":""}"#)
        compare(Primitives.self, #"{"int":null,"double":2,"bool":false,"string":""}"#)
        compare(Primitives.self, #"{"int":1,"double":null,"bool":false,"string":""}"#)
        compare(Primitives.self, #"{"int":1,"double":2,"bool":null,"string":""}"#)
        compare(Primitives.self, #"{"int":1,"double":2,"bool":false,"string":null}"#)
        compare(Primitives.self, #"{"int":1,"double":2,"bool":1,"string":""}"#)
        compare(Primitives.self, #"{"int":"1","double":2,"bool":false,"string":""}"#)
        compare(Primitives.self, #"{"int":1,"double":"2","bool":false,"string":""}"#)
        compare(Primitives.self, #"{"int":1,"double":2,"bool":false,"string":3}"#)
        compare(Primitives.self, #"{"int":1,"double":2,"bool":false,"string":"","small":256}"#)
        compare(Primitives.self, #"{"int":1,"double":2,"bool":false,"string":"","signed":-129}"#)
        compare(Primitives.self, #"{"int":1,"double":2,"bool":false,"string":"","optionalInt":1.5}"#)
        compare(Primitives.self, #"{"int":1,"double":2,"bool":false,"string":"","float":1e39}"#)
        compare(Primitives.self, #"{"int":1,"double":2,"bool":false,"string":"","optionalInt":[]}"#)
        compare(Primitives.self, "[]")
        compare(Primitives.self, "null")
        compare(Primitives.self, "3")
        compare([Primitives].self, #"[{"int":1,"double":2,"bool":false,"string":""},{"int":1}]"#)
        compare([String: Primitives].self, #"{"a_b":{"int":1,"double":2,"bool":false,"string":""},"c":{}}"#)
    }

    static let events = [
        #"{"id":1,"createdAt":"2026-12-02T00:52:17.123Z"}"#,
        #"{"id":1,"created_at":"2026-12-02T00:52:17.123Z","updated_at":"2026-12-02T00:52:17+02:00"}"#,
        #"{"id":1,"createdAt":"2026-12-02T00:52:17Z","updatedAt":"2026-12-02 00:52:17.123456-0530"}"#,
        #"{"id":1,"createdAt":"2026-12-02","updatedAt":"2026-12-02T00:52:17"}"#,
        #"{"id":1,"createdAt":1796172737.123,"updatedAt":1796172737123}"#,
        #"{"id":1,"createdAt":817865537,"updatedAt":-1.5}"#,
        #"{"id":1,"createdAt":"nope"}"#,
        #"{"id":1,"createdAt":"2026-13-02T00:52:17Z"}"#,
        #"{"id":1,"createdAt":null}"#,
        #"{"id":1,"createdAt":true}"#,
        #"{"id":1}"#,
        #"{"id":1,"created_at":0,"createdAt":0,"payload":"aGVsbG8=","link":"https://example.com/a?b=c#d","price":3.14,"tags":["x","y"],"counts":{"a_b":1,"_c":2,"dE":3},"byId":{"1":"one","-2":"two"},"kind":"created","author":{"userID":5,"displayName":"Ann","_private":"p","item2Count":3},"authors":[{},{"user_id":1,"display_name":"Bo","item2_count":4}]}"#,
        #"{"id":1,"created_at":0,"createdAt":0,"by_id":{"1":"one"},"author":{"user_id":5,"display_name":"Ann","_private":"p","item2_count":3}}"#,
        #"{"id":1,"createdAt":0,"payload":"aGVsbG8"}"#,
        #"{"id":1,"createdAt":0,"payload":"!!!!"}"#,
        #"{"id":1,"createdAt":0,"payload":""}"#,
        #"{"id":1,"createdAt":0,"payload":null,"link":null,"price":null}"#,
        #"{"id":1,"createdAt":0,"payload":5}"#,
        #"{"id":1,"createdAt":0,"link":""}"#,
        #"{"id":1,"createdAt":0,"link":"not a url with spaces"}"#,
        #"{"id":1,"createdAt":0,"link":"/relative/path"}"#,
        #"{"id":1,"createdAt":0,"link":3}"#,
        #"{"id":1,"createdAt":0,"price":"3.14"}"#,
        #"{"id":1,"createdAt":0,"price":12345678901234567}"#,
        #"{"id":1,"createdAt":0,"price":-0.001}"#,
        #"{"id":1,"createdAt":0,"price":1e100}"#,
        #"{"id":1,"createdAt":0,"tags":[1]}"#,
        #"{"id":1,"createdAt":0,"tags":{}}"#,
        #"{"id":1,"createdAt":0,"counts":{"a":"1"}}"#,
        #"{"id":1,"createdAt":0,"counts":[]}"#,
        #"{"id":1,"createdAt":0,"byId":{"x":"one"}}"#,
        #"{"id":1,"createdAt":0,"byId":{"1":1}}"#,
        #"{"id":1,"createdAt":0,"kind":"other"}"#,
        #"{"id":1,"createdAt":0,"kind":1}"#,
        #"{"id":1,"createdAt":0,"author":null}"#,
        #"{"id":1,"createdAt":0,"author":[]}"#,
        #"{"id":1,"createdAt":0,"authors":[{},null]}"#,
        #"{"id":1,"createdAt":0,"authors":[{},{"userID":"x"}]}"#,
        #"{"id":1,"createdAt":0,"authors":[{},{"user_id":"x"}]}"#,
    ]

    @Test("dates, Data, URL, Decimal, enums, dictionaries and nested types under every coding")
    func events() {
        for text in Self.events { compare(Event.self, text) }
        compare([Date].self, #"["2026-12-02T00:52:17.123Z","2026-12-02"]"#)
        compare([Date?].self, #"[0,null,1.5e9]"#)
        compare(Date.self, #""2026-12-02T00:52:17.123Z""#)
        compare(Date.self, "1796172737123")
        compare([String: Date].self, #"{"a_b":0}"#)
        compare([Int: Date].self, #"{"1":0}"#)
        compare(
            Message.self, #"{"id":7,"body":"hi","created_at":"2026-12-02T00:52:17.123Z","user":{"first_name":"A"}}"#)
        compare(Message.self, #"{"id":7,"body":null}"#)
    }

    @Test("superDecoder(), superDecoder(forKey:) and hand-written containers")
    func containers() {
        compare(SuperShape.self, #"{"level":2,"super":{"name":"base"},"parent":{"name":"p"}}"#)
        compare(SuperShape.self, #"{"level":2,"super":{"name":"base"}}"#)
        compare(SuperShape.self, #"{"level":2}"#)
        compare(SuperShape.self, #"{"level":2,"super":null}"#)
        compare(SuperShape.self, #"{"level":2,"super":[]}"#)
        let custom = #"{"flag":null,"geo":{"lat":1,"lng":2.5},"list":[{"innerName":"a"},[1,null,3],"s"],"x":1}"#
        compare(Custom.self, custom)
        compare(Custom.self, #"{"geo":{"lat":1,"lng":2.5},"list":[{"inner_name":"a"},[]]}"#)
        compare(Custom.self, #"{"geo":{"lat":1,"lng":2.5},"list":[{"innerName":"a"},[1,"2"]]}"#)
        compare(Custom.self, #"{"geo":{"lat":1},"list":[]}"#)
        compare(Custom.self, #"{"geo":{"lat":1,"lng":2.5},"list":[]}"#)
        compare(Custom.self, #"{"geo":{"lat":1,"lng":2.5},"list":[{"innerName":"a"}]}"#)
        compare(Custom.self, #"{"geo":null,"list":[]}"#)
        compare(Custom.self, #"{"geo":{"lat":1,"lng":2.5}}"#)
    }

    @Test("snake_case keys: underscores at the ends, digits, capitals, collisions with declared keys")
    func snakeCase() {
        compare(
            SnakeKeys.self, #"{"created_at":0,"user_id":1,"_leading":2,"trailing_":3,"item_2":4,"version_2_name":"v"}"#)
        compare(SnakeKeys.self, #"{"a_b_c":1,"url_path":"p","URL_path":"q"}"#, exact: false, bytesExact: true)
        compare(SnakeKeys.self, #"{"userID":1,"user_i_d":2,"__":3,"_":4,"a__b_c":5}"#)
        struct AllKeys: Decodable, Equatable {
            var keys: [String]
            struct Key: CodingKey {
                var stringValue: String
                var intValue: Int? { nil }
                init(stringValue: String) { self.stringValue = stringValue }
                init?(intValue: Int) { nil }
            }
            init(from decoder: any Decoder) throws {
                keys = try decoder.container(keyedBy: Key.self).allKeys.map(\.stringValue).sorted()
            }
        }
        let keys = [
            "a", "a_b", "a_b_c", "_a_b", "__a__b__", "a_", "_", "__", "", "A_B", "ABC_DEF", "user_ID", "item_2",
            "item_2nd", "2_a", "a_2b", "a_b2c", "a_éa", "a_ßa", "a_ǆa", "a_'b", "a_b.c", "a_.b", "a_ b", "a_Ab",
            "snake_Case_KEY", "already_camelCase", "x_y_z_", "_x_y_z", "a-b_c", "a_1_2_3", "über_größe", "a_İb",
            "a_b'c", "a_b:c", "a_b^c", "a_b`c", "a_b\u{00AD}c", "a_b\u{2019}c",
        ]
        for key in keys {
            let text = try? JSONValue.object([key: .int(1)]).jsonText()
            compare(AllKeys.self, text ?? "{}")
        }
    }

    @Test("duplicate keys: from text the first, as JSONDecoder; a JSONValue kept the last")
    func duplicateKeys() throws {
        compare(Box<Int>.self, #"{"v":1,"v":2}"#, exact: false, bytesExact: true)
        compare(Box<[Int]>.self, #"{"v":[1],"w":0,"v":[2,3]}"#, exact: false, bytesExact: true)
        compare([String: Int].self, #"{"a":1,"b":2,"a":3}"#, exact: false, bytesExact: true)
        let decoder = MessageDecoder(coding: CableCoding())
        #expect(try decoder.decode(Box<Int>.self, fromJSON: Array(#"{"v":1,"v":2}"#.utf8)) == Box(v: 1))
        #expect(try decoder.decode(Box<Int>.self, from: JSONValue(parsing: #"{"v":1,"v":2}"#)) == Box(v: 2))
        // An object too large to search member by member is looked up through a table: the same rule.
        let members = (0..<40).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        compare(Box<Int>.self, "{\(members),\"v\":7,\"v\":8}", exact: false, bytesExact: true)
        compare([String: Int].self, "{\(members)}")
    }

    @Test("strings with escapes and surrogate pairs, and 100 levels of arrays")
    func stringsAndDepth() {
        compare([String].self, #"["\"\\\/\b\f\n\r\t","\u0000\u001f","\ud83d\ude00 😀","é","e\u0301",""]"#)
        compare(Box<String>.self, #"{"v":"\ud834\udd1e"}"#)
        let deep = String(repeating: "[", count: 100) + "1" + String(repeating: "]", count: 100)
        compare(JSONValue.self, deep)
        struct Nested: Decodable, Equatable {
            var depth: Int
            init(from decoder: any Decoder) throws {
                var container = try decoder.unkeyedContainer()
                if let inner = try? container.decode(Nested.self) {
                    depth = inner.depth + 1
                } else {
                    depth = 0
                }
            }
        }
        compare(Nested.self, deep)
        compare([[[[Int]]]].self, "[[[[1,2],[]]],[[[\"x\"]]]]")
    }

    @Test("decoding JSONValue itself")
    func jsonValue() {
        compare(JSONValue.self, #"{"a":[1,2.5,-0,1e300,true,null,"s",{"b_c":{}}],"d":9007199254740993}"#)
        compare([String: JSONValue].self, #"{"a_b":{"c_d":1}}"#)
    }

    @Test("random values of random shapes decode as JSONDecoder decodes their text")
    func randomDifferential() {
        var random = SeededRandom(seed: 39)
        let tally = Tally()
        for _ in 0..<2000 {
            let value = Self.randomValue(&random, depth: 0)
            guard let text = try? value.jsonText() else { continue }
            let coding = codings.randomElement(using: &random) ?? CableCoding()
            compareRandom(JSONValue.self, text, coding, tally)
            compareRandom(Box<Int>.self, text, coding, tally)
            compareRandom(RandomShape.self, text, coding, tally)
            compareRandom([RandomShape].self, text, coding, tally)
            compareRandom([String: Double].self, text, coding, tally, loose: true)
            compareRandom(Box<[Date?]>.self, text, coding, tally)
        }
        #expect(tally.count == 12_000)
    }

    private struct RandomShape: Decodable, Equatable {
        var a: Int?
        var b: String?
        var createdAt: Date?
        var n: [Int8]?
        var f: Float?
        var u: UInt64?
        var m: [String: Bool]?
    }

    private func compareRandom<T: Decodable & Equatable>(
        _ type: T.Type, _ text: String, _ coding: CableCoding, _ tally: Tally, loose: Bool = false
    ) {
        guard let value = try? JSONValue(parsing: text) else {
            Issue.record("does not parse: \(text)")
            return
        }
        let ours = Outcome { try MessageDecoder(coding: coding).decode(T.self, from: value) }
        let fromText = Outcome { try MessageDecoder(coding: coding).decode(T.self, fromJSON: Array(text.utf8)) }
        let theirs = Outcome { try coding.makeDecoder().decode(T.self, from: Data(text.utf8)) }
        if loose, case .failure = ours, case .failure = theirs, case .failure = fromText {
            // Several entries of a dictionary may fail; which one is reported depends on dictionary order.
            tally.add()
            return
        }
        #expect(ours == theirs, "\(T.self) from \(text), \(coding.dates) \(coding.keys)")
        #expect(fromText == theirs, "\(T.self) from the bytes of \(text), \(coding.dates) \(coding.keys)")
        tally.add()
    }

    private static let randomKeys = ["a", "b", "v", "n", "f", "u", "m", "created_at", "createdAt", "_x", "a_b"]

    private static func randomValue(_ random: inout SeededRandom, depth: Int) -> JSONValue {
        switch Int.random(in: 0..<(depth > 3 ? 6 : 8), using: &random) {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &random))
        case 2:
            let ranges: [ClosedRange<Int>] = [
                -3...3, -200...300, Int.min...Int.max, 1_700_000_000_000...1_800_000_000_000,
            ]
            return .int(Int.random(in: ranges.randomElement(using: &random) ?? 0...1, using: &random))
        case 3:
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return .double(Double(Int.random(in: -300...300, using: &random)) / 4)
            case 1:
                let bits = Double(bitPattern: random.next())
                return .double(bits.isFinite ? bits : 1)
            case 2: return .double(Double.random(in: -1e20...1e20, using: &random).rounded())
            default: return .double(Double.random(in: 0...2e9, using: &random))
            }
        case 4:
            let strings = ["", "x", "2026-12-02T00:52:17.123Z", "2026-12-02", "aGVsbG8=", "é😀", "\u{0}\"\\", "1"]
            return .string(strings.randomElement(using: &random) ?? "")
        case 5:
            return .string(String(Int.random(in: 0...999, using: &random)))
        case 6:
            return .array(
                (0..<Int.random(in: 0...4, using: &random)).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            var object: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...5, using: &random) {
                let key = randomKeys.randomElement(using: &random) ?? "a"
                object[key] = randomValue(&random, depth: depth + 1)
            }
            return .object(object)
        }
    }
}
