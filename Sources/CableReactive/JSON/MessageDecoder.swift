#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// Decodes a `Decodable` type from JSON text or from a ``JSONValue``, with the strategies of a ``CableCoding``:
/// one parse from the bytes of a message to the app's type, with no tree of values, no JSON text written and no
/// `JSONDecoder`. Both inputs are read through a ``JSONTape``.
///
/// It behaves as `JSONDecoder` (swift-foundation's) made by ``CableCoding/makeDecoder()`` does on the same text
/// (for a ``JSONValue``: on ``JSONValue/jsonText()``): the same values, and the same `DecodingError` case and
/// coding path when decoding fails. The differences:
///
/// - a number is read as the parser reads it (``JSONValue/init(parsing:)``): one beyond `Int` is a `Double`
///   (`18446744073709551615` decodes as `UInt64` only as far as `1.8446744073709552e19` does, that is not at
///   all), and a number that underflowed to zero (`1e-400`) is zero;
/// - `Float` is rounded from the `Double`, not from the text (a difference only for a decimal within a rounding
///   error of a `Float` halfway point);
/// - from a ``JSONValue``, which kept the last of duplicate keys (the parser's rule), that one is read, and of two
///   keys that snake-case conversion makes equal, the one that sorts first; from text, the first, as
///   `JSONDecoder` does.
///
/// A NaN or infinite `.double` in a ``JSONValue`` (which the parser never makes) throws
/// ``JSONEncodingError/nonFiniteNumber`` when a number is read from it, as writing the text did; unlike the text,
/// one at a key the type ignores does not.
///
/// Every path is safe against any input: nothing traps.
struct MessageDecoder: Sendable {
    /// How dates are read.
    let dates: CableCoding.DateStrategy.Kind
    /// Whether keys are converted from snake_case.
    let snakeCase: Bool

    /// A decoder with the strategies of `coding`; cheap, it allocates nothing.
    init(coding: CableCoding) {
        dates = coding.dates.kind
        snakeCase = coding.keys.snakeCased
    }

    /// Decodes `type` from `value`.
    ///
    /// - Throws: `DecodingError`, as `JSONDecoder` would on the text of `value`.
    func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try decode(type, from: JSONTape(value))
    }

    /// Decodes `type` from the JSON text `utf8`, which must be valid UTF-8 (a message's bytes, as the frame
    /// parser checked them).
    ///
    /// - Throws: `DecodingError`, as `JSONDecoder` would; ``JSONParseError`` when `utf8` is not one JSON value.
    func decode<T: Decodable>(_ type: T.Type, fromJSON utf8: [UInt8]) throws -> T {
        try decode(type, from: JSONTape(parsing: utf8))
    }

    private func decode<T: Decodable>(_ type: T.Type, from tape: JSONTape) throws -> T {
        try DecoderImpl(tape: tape, index: 0, path: .root, options: self).unwrap(0, as: type, path: .root, key: nil)
    }

    /// Foundation's `convertFromSnakeCase`: underscores at either end kept, the first word lowercased, the others
    /// capitalized (`created_at` → `createdAt`, `_user_ID` → `_userId`), a key without inner underscores as is.
    static func convertFromSnakeCase(_ key: String) -> String {
        guard key.utf8.contains(UInt8(ascii: "_")) else { return key }
        guard let first = key.firstIndex(where: { $0 != "_" }) else { return key }
        var last = key.index(before: key.endIndex)
        while last > first && key[last] == "_" { key.formIndex(before: &last) }
        let components = key[first...last].split(separator: "_")
        guard components.count > 1 else { return key }
        var result = String(key[..<first])
        for (offset, component) in components.enumerated() {
            result += offset == 0 ? component.lowercased() : capitalized(component)
        }
        result += key[key.index(after: last)...]
        return result
    }

    /// swift-foundation's `capitalized`: the first cased letter after an uncased character is titlecased, later
    /// cased letters lowercased (`2nd` → `2Nd`, `b.c` → `B.C`); case-ignorable characters (`'`) keep the state.
    private static func capitalized(_ word: Substring) -> String {
        var result = ""
        var lastCased = false
        for scalar in word.unicodeScalars {
            let properties = scalar.properties
            if properties.isUppercase {
                result += lastCased ? properties.lowercaseMapping : String(scalar)
                lastCased = true
            } else if properties.isLowercase {
                result += lastCased ? String(scalar) : properties.titlecaseMapping
                lastCased = true
            } else {
                // Foundation ignores a subset of the case-ignorable characters: in ASCII, ' ^ ` but not . or :.
                let ignorable =
                    scalar.isASCII ? scalar == "'" || scalar == "^" || scalar == "`" : properties.isCaseIgnorable
                if !ignorable { lastCased = false }
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

// MARK: - Coding paths

/// A coding path as a linked list, so that going one level down costs one small allocation, and the array of
/// keys is built only when asked for (an error, or a type reading `codingPath`).
private indirect enum PathNode {
    case root
    case key(any CodingKey, PathNode)
    case index(Int, PathNode)

    var path: [any CodingKey] {
        var keys: [any CodingKey] = []
        var node = self
        while true {
            switch node {
            case .root:
                return keys.reversed()
            case .key(let key, let parent):
                keys.append(key)
                node = parent
            case .index(let index, let parent):
                keys.append(MemberKey(index: index))
                node = parent
            }
        }
    }

    func appending(_ key: (any CodingKey)?) -> PathNode {
        guard let key else { return self }
        return .key(key, self)
    }

    func path(appending key: (any CodingKey)?) -> [any CodingKey] {
        var path = self.path
        if let key { path.append(key) }
        return path
    }
}

/// The keys this decoder makes itself: array indexes (`Index 2`, as Foundation names them) and `super`; a
/// dictionary's keys are plain ``MemberKey``s.
extension MemberKey {
    fileprivate init(index: Int) {
        self.init(stringValue: "Index \(index)", intValue: index)
    }

    fileprivate static let `super` = MemberKey(stringValue: "super")
}

// MARK: - Dictionaries under snake_case

/// `[String: Value]`, which Foundation decodes with its keys as they are even when other keys are converted.
private protocol StringKeyedDictionary {
    static func decodeEntries(of object: Int, with impl: DecoderImpl, path: PathNode) throws -> Self
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Decodable {
    fileprivate static func decodeEntries(of object: Int, with impl: DecoderImpl, path: PathNode) throws -> Self {
        var result: [String: Value] = [:]
        var member = object + 1
        for _ in 0..<impl.tape.count(of: object) {
            let key = impl.tape.string(at: member) ?? ""
            if result[key] == nil {  // of duplicate keys, the first
                result[key] = try impl.unwrap(member + 1, as: Value.self, path: path, key: MemberKey(stringValue: key))
            }
            member = impl.tape.end(of: member + 1)
        }
        return result
    }
}

// MARK: - The decoder

/// The `Decoder`: the tape, the value being decoded (an index in it) and its path, changed in place as decoding
/// goes down and back up (as `JSONDecoder` does), so that a nested value costs no new decoder.
private final class DecoderImpl: Decoder, SingleValueDecodingContainer {
    let tape: JSONTape
    var index: Int
    var node: PathNode
    let options: MessageDecoder

    init(tape: JSONTape, index: Int, path: PathNode, options: MessageDecoder) {
        self.tape = tape
        self.index = index
        self.node = path
        self.options = options
    }

    var codingPath: [any CodingKey] { node.path }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Runs `body` with the value at `index` and `path` as the current ones, then restores the previous ones.
    func with<T>(index: Int, path: PathNode, _ body: () throws -> T) rethrows -> T {
        let (oldIndex, oldNode) = (self.index, self.node)
        self.index = index
        self.node = path
        defer {
            self.index = oldIndex
            self.node = oldNode
        }
        return try body()
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch tape[index] {
        case .object:
            return KeyedDecodingContainer(KeyedContainer<Key>(impl: self, node: node, object: index))
        case .null:
            throw DecodingError.valueNotFound(
                [String: Any].self,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Cannot get keyed decoding container -- found null value instead"))
        default:
            throw typeMismatch([String: Any].self, path: codingPath, at: index)
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch tape[index] {
        case .array:
            return UnkeyedContainer(impl: self, node: node, array: index)
        case .null:
            throw DecodingError.valueNotFound(
                [Any].self,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Cannot get unkeyed decoding container -- found null value instead"))
        default:
            throw typeMismatch([Any].self, path: codingPath, at: index)
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Unwrapping

    /// Decodes `type` from the value at `value`, found at `key` under `path` (no key: `path` itself).
    func unwrap<T: Decodable>(_ value: Int, as type: T.Type, path: PathNode, key: (any CodingKey)?) throws -> T {
        if T.self == Date.self {
            return try cast(unwrapDate(value, path: path, key: key), path: path, key: key)
        }
        if T.self == Data.self {
            return try cast(unwrapData(value, path: path, key: key), path: path, key: key)
        }
        if T.self == URL.self {
            return try cast(unwrapURL(value, path: path, key: key), path: path, key: key)
        }
        if T.self == Decimal.self {
            return try cast(unwrapDecimal(value, path: path, key: key), path: path, key: key)
        }
        if options.snakeCase, let dictionary = T.self as? any StringKeyedDictionary.Type {
            try checkNotNull(value, [String: Any].self, path: path, key: key)
            guard case .object = tape[value] else {
                throw typeMismatch([String: Any].self, path: path.path(appending: key), at: value)
            }
            return try cast(
                dictionary.decodeEntries(of: value, with: self, path: path.appending(key)), path: path, key: key)
        }
        return try with(index: value, path: path.appending(key)) { try T(from: self) }
    }

    /// `value as? T`, which the callers have made sure succeeds.
    private func cast<T>(_ value: Any, path: PathNode, key: (any CodingKey)?) throws -> T {
        guard let result = value as? T else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: path.path(appending: key), debugDescription: "Internal type error"))
        }
        return result
    }

    private func unwrapDate(_ value: Int, path: PathNode, key: (any CodingKey)?) throws -> Date {
        try checkNotNull(value, Date.self, path: path, key: key)
        switch options.dates {
        case .iso8601:
            let string = try unwrapString(value, path: path, key: key)
            guard let date = ISO8601Date.date(from: string) else {
                throw DecodingError.dataCorrupted(
                    DecodingError.Context(
                        codingPath: path.path(appending: key),
                        debugDescription: "Expected an ISO 8601 date, such as 2026-12-02T00:52:17.123Z or 2026-12-02"))
            }
            return date
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try unwrapFloatingPoint(value, as: Double.self, path: path, key: key))
        case .millisecondsSince1970:
            let milliseconds = try unwrapFloatingPoint(value, as: Double.self, path: path, key: key)
            return Date(timeIntervalSince1970: milliseconds / 1000)
        case .deferredToDate:
            return try with(index: value, path: path.appending(key)) { try Date(from: self) }
        }
    }

    private func unwrapData(_ value: Int, path: PathNode, key: (any CodingKey)?) throws -> Data {
        try checkNotNull(value, Data.self, path: path, key: key)
        guard let string = tape.string(at: value) else {
            throw typeMismatch(String.self, path: path.path(appending: key), at: value)
        }
        guard let data = Data(base64Encoded: string) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: path.path(appending: key), debugDescription: "Encountered Data is not valid Base64."))
        }
        return data
    }

    private func unwrapURL(_ value: Int, path: PathNode, key: (any CodingKey)?) throws -> URL {
        try checkNotNull(value, URL.self, path: path, key: key)
        let string = try unwrapString(value, path: path, key: key)
        guard let url = URL(string: string) else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: path.path(appending: key), debugDescription: "Invalid URL string."))
        }
        return url
    }

    private func unwrapDecimal(_ value: Int, path: PathNode, key: (any CodingKey)?) throws -> Decimal {
        try checkNotNull(value, Decimal.self, path: path, key: key)
        switch tape[value] {
        case .int(let number):
            return Decimal(number)
        case .double(let number):
            // Foundation reads the number's text; the shortest text of the Double is what jsonText() writes.
            guard number.isFinite else { throw JSONEncodingError.nonFiniteNumber }
            guard let decimal = Decimal(string: number.description) else {
                throw notRepresentable(number.description)
            }
            return decimal
        default:
            throw DecodingError.typeMismatch(
                Decimal.self,
                DecodingError.Context(
                    codingPath: path.path(appending: key),
                    debugDescription: "Expected to decode Decimal but found \(tape.kindDescription(at: value)) instead."
                ))
        }
    }

    func unwrapString(_ value: Int, path: PathNode, key: (any CodingKey)?) throws -> String {
        if let string = tape.string(at: value) { return string }
        if case .null = tape[value] { throw valueNotFound(String.self, path: path, key: key) }
        throw typeMismatch(String.self, path: path.path(appending: key), at: value)
    }

    func unwrapBool(_ value: Int, path: PathNode, key: (any CodingKey)?) throws -> Bool {
        guard case .bool(let flag) = tape[value] else {
            throw typeMismatch(Bool.self, path: path.path(appending: key), at: value)
        }
        return flag
    }

    func unwrapFloatingPoint<T: BinaryFloatingPoint>(
        _ value: Int, as type: T.Type, path: PathNode, key: (any CodingKey)?
    ) throws -> T {
        switch tape[value] {
        case .int(let number):
            return T(number)
        case .double(let number):
            guard number.isFinite else { throw JSONEncodingError.nonFiniteNumber }
            let result = T(number)
            // Foundation rejects a number that rounds to infinity, or to zero when it is not zero.
            guard result.isFinite, result != 0 || number == 0 else { throw notRepresentable(number.description) }
            return result
        case .null:
            throw valueNotFound(T.self, path: path, key: key)
        default:
            throw typeMismatch(T.self, path: path.path(appending: key), at: value)
        }
    }

    func unwrapInteger<T: FixedWidthInteger>(
        _ value: Int, as type: T.Type, path: PathNode, key: (any CodingKey)?
    ) throws -> T {
        switch tape[value] {
        case .int(let number):
            guard let result = T(exactly: number) else { throw notRepresentable(String(number)) }
            return result
        case .double(let number):
            guard number.isFinite else { throw JSONEncodingError.nonFiniteNumber }
            guard let result = T(exactly: number) else { throw notRepresentable(number.description) }
            // As Foundation: beyond 2^53 a Double no longer tells neighbouring integers apart, so the number is
            // read again from its text, exactly, as a Decimal would.
            if number.magnitude < 9_007_199_254_740_992 { return result }
            guard let exact = Self.integer(fromText: number.description, as: T.self) else {
                throw notRepresentable(number.description)
            }
            return exact
        case .null:
            throw valueNotFound(T.self, path: path, key: key)
        default:
            throw typeMismatch(T.self, path: path.path(appending: key), at: value)
        }
    }
    /// The integer a Decimal parsed from `text` (`1.2345678901234568e+18`, `9007199254740994.0`) converts to, as
    /// Foundation converts one: the fraction truncated, nil when it does not fit (a negative number must fit once
    /// negated, so `T.min` does not).
    private static func integer<T: FixedWidthInteger>(fromText text: String, as type: T.Type) -> T? {
        var magnitude: UInt64 = 0
        var exponent = 0
        var negative = false
        var inFraction = false
        var exponentText: Substring?
        for (offset, byte) in zip(text.utf8.indices, text.utf8) {
            switch byte {
            case UInt8(ascii: "-"):
                negative = true
            case UInt8(ascii: "."):
                inFraction = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                exponentText = text[text.utf8.index(after: offset)...]
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                guard !overflow1, !overflow2 else { return nil }
                magnitude = sum
                if inFraction { exponent -= 1 }
            default:
                return nil
            }
            if exponentText != nil { break }
        }
        if let exponentText {
            guard let value = Int(exponentText.hasPrefix("+") ? exponentText.dropFirst() : exponentText) else {
                return nil
            }
            exponent += value
        }
        while exponent < 0 {
            magnitude /= 10
            exponent += 1
        }
        while exponent > 0 {
            let (times10, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            magnitude = times10
            exponent -= 1
        }
        guard let sized = T(exactly: magnitude) else { return nil }
        if negative {
            guard T.isSigned else { return magnitude == 0 ? sized : nil }
            return 0 - sized
        }
        return sized
    }

    // MARK: Errors

    func checkNotNull(_ value: Int, _ type: Any.Type, path: PathNode, key: (any CodingKey)?) throws {
        if case .null = tape[value] { throw valueNotFound(type, path: path, key: key) }
    }

    func valueNotFound(_ type: Any.Type, path: PathNode, key: (any CodingKey)?) -> DecodingError {
        DecodingError.valueNotFound(
            type,
            DecodingError.Context(
                codingPath: path.path(appending: key),
                debugDescription: "Cannot get value of type \(type) -- found null value instead"))
    }

    func typeMismatch(_ type: Any.Type, path: [any CodingKey], at value: Int) -> DecodingError {
        DecodingError.typeMismatch(
            type,
            DecodingError.Context(
                codingPath: path,
                debugDescription: "Expected to decode \(type) but found \(tape.kindDescription(at: value)) instead."))
    }

    /// What `JSONDecoder` throws for a number that does not fit the type asked for: it reports it as invalid
    /// JSON, at the top (an empty coding path).
    func notRepresentable(_ number: String) -> DecodingError {
        DecodingError.dataCorrupted(
            DecodingError.Context(
                codingPath: [], debugDescription: "Number \(number) is not representable in Swift."))
    }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool {
        if case .null = tape[index] { return true }
        return false
    }

    func decode(_ type: Bool.Type) throws -> Bool { try unwrapBool(index, path: node, key: nil) }
    func decode(_ type: String.Type) throws -> String { try unwrapString(index, path: node, key: nil) }
    func decode(_ type: Double.Type) throws -> Double { try unwrapFloatingPoint(index, as: type, path: node, key: nil) }
    func decode(_ type: Float.Type) throws -> Float { try unwrapFloatingPoint(index, as: type, path: node, key: nil) }
    func decode(_ type: Int.Type) throws -> Int { try unwrapInteger(index, as: type, path: node, key: nil) }
    func decode(_ type: Int8.Type) throws -> Int8 { try unwrapInteger(index, as: type, path: node, key: nil) }
    func decode(_ type: Int16.Type) throws -> Int16 { try unwrapInteger(index, as: type, path: node, key: nil) }
    func decode(_ type: Int32.Type) throws -> Int32 { try unwrapInteger(index, as: type, path: node, key: nil) }
    func decode(_ type: Int64.Type) throws -> Int64 { try unwrapInteger(index, as: type, path: node, key: nil) }
    func decode(_ type: UInt.Type) throws -> UInt { try unwrapInteger(index, as: type, path: node, key: nil) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try unwrapInteger(index, as: type, path: node, key: nil) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try unwrapInteger(index, as: type, path: node, key: nil) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try unwrapInteger(index, as: type, path: node, key: nil) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try unwrapInteger(index, as: type, path: node, key: nil) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try unwrap(index, as: type, path: node, key: nil) }
}

extension JSONTape {
    /// `null`, `bool`, `number`, `string`, `array` or `dictionary`, for error messages (Foundation's words).
    fileprivate func kindDescription(at index: Int) -> String {
        switch self[index] {
        case .null: "null"
        case .bool: "bool"
        case .int, .double: "number"
        case .text, .string: "a string"
        case .array: "an array"
        case .object: "a dictionary"
        }
    }

    /// The number of elements or members of the container at `index` (0 for any other value).
    fileprivate func count(of index: Int) -> Int {
        switch self[index] {
        case .array(let count, _), .object(let count, _): Int(count)
        default: 0
        }
    }
}

// MARK: - Keyed container

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let impl: DecoderImpl
    let node: PathNode
    /// The object's entry in the tape.
    let object: Int
    /// The object's keys, converted from snake case when the coding converts them, with the index of each one's
    /// value; made only then, or for an object too large to search member by member. Otherwise (a message's
    /// object, as a rule) a key is found by comparing its UTF-8 with the members' keys, with no `String` made.
    private let table: [String: Int]?

    /// Objects up to this many members are searched member by member.
    private static var searchedMembers: Int { 16 }

    init(impl: DecoderImpl, node: PathNode, object: Int) {
        self.impl = impl
        self.node = node
        self.object = object
        let tape = impl.tape
        let count = tape.count(of: object)
        guard impl.options.snakeCase || count > Self.searchedMembers else {
            table = nil
            return
        }
        var table: [String: Int] = [:]
        table.reserveCapacity(count)
        // From text, of two keys that are (or convert to) the same, the first, as Foundation; a JSONValue has
        // no duplicates, and of two keys that convert alike the one that sorts first, whatever its order.
        var sources: [String: String] = [:]
        let fromValue = tape.bytes.isEmpty
        var member = object + 1
        for _ in 0..<count {
            let key = tape.string(at: member) ?? ""
            let converted = impl.options.snakeCase ? MessageDecoder.convertFromSnakeCase(key) : key
            if let source = sources[converted] {
                if fromValue, key < source {
                    sources[converted] = key
                    table[converted] = member + 1
                }
            } else {
                sources[converted] = key
                table[converted] = member + 1
            }
            member = tape.end(of: member + 1)
        }
        self.table = table
    }

    var codingPath: [any CodingKey] { node.path }

    var allKeys: [Key] {
        if let table { return table.keys.compactMap { Key(stringValue: $0) } }
        var keys: [Key] = []
        var seen: Set<String> = []
        var member = object + 1
        for _ in 0..<impl.tape.count(of: object) {
            if let name = impl.tape.string(at: member), seen.insert(name).inserted, let key = Key(stringValue: name) {
                keys.append(key)
            }
            member = impl.tape.end(of: member + 1)
        }
        return keys
    }

    func contains(_ key: Key) -> Bool { valueIndex(forKey: key) != nil }

    /// The index of the value at `key`: of the first member with that key.
    private func valueIndex(forKey key: some CodingKey) -> Int? {
        if let table { return table[key.stringValue] }
        var name = key.stringValue
        return name.withUTF8 { utf8 in
            let tape = impl.tape
            var member = object + 1
            for _ in 0..<tape.count(of: object) {
                if tape.string(at: member, equals: utf8) { return member + 1 }
                member = tape.end(of: member + 1)
            }
            return nil
        }
    }

    private func value(forKey key: some CodingKey) throws -> Int {
        guard let value = valueIndex(forKey: key) else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return value
    }

    /// The value at `key`, or nil when it is missing or null.
    private func presentValue(forKey key: Key) -> Int? {
        guard let value = valueIndex(forKey: key) else { return nil }
        if case .null = impl.tape[value] { return nil }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if case .null = impl.tape[try value(forKey: key)] { return true }
        return false
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try impl.unwrapBool(value(forKey: key), path: node, key: key)
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try impl.unwrapString(value(forKey: key), path: node, key: key)
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try floatingPoint(key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try floatingPoint(key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try impl.unwrap(value(forKey: key), as: type, path: node, key: key)
    }

    private func integer<T: FixedWidthInteger>(_ key: Key) throws -> T {
        try impl.unwrapInteger(value(forKey: key), as: T.self, path: node, key: key)
    }

    private func floatingPoint<T: BinaryFloatingPoint>(_ key: Key) throws -> T {
        try impl.unwrapFloatingPoint(value(forKey: key), as: T.self, path: node, key: key)
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        guard let value = presentValue(forKey: key) else { return nil }
        return try impl.unwrapBool(value, path: node, key: key)
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        guard let value = presentValue(forKey: key) else { return nil }
        return try impl.unwrapString(value, path: node, key: key)
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try floatingPointIfPresent(key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try floatingPointIfPresent(key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try integerIfPresent(key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try integerIfPresent(key) }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = presentValue(forKey: key) else { return nil }
        return try impl.unwrap(value, as: type, path: node, key: key)
    }

    private func integerIfPresent<T: FixedWidthInteger>(_ key: Key) throws -> T? {
        guard let value = presentValue(forKey: key) else { return nil }
        return try impl.unwrapInteger(value, as: T.self, path: node, key: key)
    }

    private func floatingPointIfPresent<T: BinaryFloatingPoint>(_ key: Key) throws -> T? {
        guard let value = presentValue(forKey: key) else { return nil }
        return try impl.unwrapFloatingPoint(value, as: T.self, path: node, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let value = try value(forKey: key)
        return try impl.with(index: value, path: node.appending(key)) { try impl.container(keyedBy: type) }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let value = try value(forKey: key)
        return try impl.with(index: value, path: node.appending(key)) { try impl.unkeyedContainer() }
    }

    func superDecoder() throws -> any Decoder { decoder(for: MemberKey.super) }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder(for: key) }

    /// A decoder for the value at `key`, or for null when there is none (as Foundation).
    private func decoder(for key: some CodingKey) -> DecoderImpl {
        guard let value = valueIndex(forKey: key) else {
            return DecoderImpl(tape: .null, index: 0, path: node.appending(key), options: impl.options)
        }
        return DecoderImpl(tape: impl.tape, index: value, path: node.appending(key), options: impl.options)
    }
}

// MARK: - Unkeyed container

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let impl: DecoderImpl
    let node: PathNode
    let count: Int?
    private(set) var currentIndex = 0
    /// The entry of the element at `currentIndex`, while there is one.
    private var element: Int

    init(impl: DecoderImpl, node: PathNode, array: Int) {
        self.impl = impl
        self.node = node
        count = impl.tape.count(of: array)
        element = array + 1
    }

    var codingPath: [any CodingKey] { node.path }
    var isAtEnd: Bool { currentIndex >= count ?? 0 }
    private var indexKey: MemberKey { MemberKey(index: currentIndex) }

    /// Moves to the next element (past the end too, as the IfPresent forms do in Foundation).
    private mutating func advance() {
        if !isAtEnd { element = impl.tape.end(of: element) }
        currentIndex += 1
    }

    private func next(_ type: Any.Type, message: String = "Unkeyed container is at end.") throws -> Int {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, DecodingError.Context(codingPath: node.path(appending: indexKey), debugDescription: message))
        }
        return element
    }

    private var nextIfPresent: Int? {
        guard !isAtEnd else { return nil }
        if case .null = impl.tape[element] { return nil }
        return element
    }

    mutating func decodeNil() throws -> Bool {
        guard case .null = impl.tape[try next(Never.self)] else { return false }
        advance()
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let result = try impl.unwrapBool(next(type), path: node, key: indexKey)
        advance()
        return result
    }

    mutating func decode(_ type: String.Type) throws -> String {
        let result = try impl.unwrapString(next(type), path: node, key: indexKey)
        advance()
        return result
    }

    mutating func decode(_ type: Double.Type) throws -> Double { try floatingPoint() }
    mutating func decode(_ type: Float.Type) throws -> Float { try floatingPoint() }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer() }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let result = try impl.unwrap(next(type), as: type, path: node, key: indexKey)
        advance()
        return result
    }

    private mutating func integer<T: FixedWidthInteger>() throws -> T {
        let result = try impl.unwrapInteger(next(T.self), as: T.self, path: node, key: indexKey)
        advance()
        return result
    }

    private mutating func floatingPoint<T: BinaryFloatingPoint>() throws -> T {
        let result = try impl.unwrapFloatingPoint(next(T.self), as: T.self, path: node, key: indexKey)
        advance()
        return result
    }

    mutating func decodeIfPresent(_ type: Bool.Type) throws -> Bool? {
        let result = try nextIfPresent.map { try impl.unwrapBool($0, path: node, key: indexKey) }
        advance()
        return result
    }

    mutating func decodeIfPresent(_ type: String.Type) throws -> String? {
        let result = try nextIfPresent.map { try impl.unwrapString($0, path: node, key: indexKey) }
        advance()
        return result
    }

    mutating func decodeIfPresent(_ type: Double.Type) throws -> Double? { try floatingPointIfPresent() }
    mutating func decodeIfPresent(_ type: Float.Type) throws -> Float? { try floatingPointIfPresent() }
    mutating func decodeIfPresent(_ type: Int.Type) throws -> Int? { try integerIfPresent() }
    mutating func decodeIfPresent(_ type: Int8.Type) throws -> Int8? { try integerIfPresent() }
    mutating func decodeIfPresent(_ type: Int16.Type) throws -> Int16? { try integerIfPresent() }
    mutating func decodeIfPresent(_ type: Int32.Type) throws -> Int32? { try integerIfPresent() }
    mutating func decodeIfPresent(_ type: Int64.Type) throws -> Int64? { try integerIfPresent() }
    mutating func decodeIfPresent(_ type: UInt.Type) throws -> UInt? { try integerIfPresent() }
    mutating func decodeIfPresent(_ type: UInt8.Type) throws -> UInt8? { try integerIfPresent() }
    mutating func decodeIfPresent(_ type: UInt16.Type) throws -> UInt16? { try integerIfPresent() }
    mutating func decodeIfPresent(_ type: UInt32.Type) throws -> UInt32? { try integerIfPresent() }
    mutating func decodeIfPresent(_ type: UInt64.Type) throws -> UInt64? { try integerIfPresent() }

    mutating func decodeIfPresent<T: Decodable>(_ type: T.Type) throws -> T? {
        let result = try nextIfPresent.map { try impl.unwrap($0, as: type, path: node, key: indexKey) }
        advance()
        return result
    }

    private mutating func integerIfPresent<T: FixedWidthInteger>() throws -> T? {
        let result = try nextIfPresent.map { try impl.unwrapInteger($0, as: T.self, path: node, key: indexKey) }
        advance()
        return result
    }

    private mutating func floatingPointIfPresent<T: BinaryFloatingPoint>() throws -> T? {
        let result = try nextIfPresent.map { try impl.unwrapFloatingPoint($0, as: T.self, path: node, key: indexKey) }
        advance()
        return result
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        let value = try next(KeyedDecodingContainer<NestedKey>.self)
        let container = try impl.with(index: value, path: .index(currentIndex, node)) {
            try impl.container(keyedBy: type)
        }
        advance()
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let value = try next(
            (any UnkeyedDecodingContainer).self,
            message: "Cannot get nested unkeyed container -- unkeyed container is at end.")
        let container = try impl.with(index: value, path: .index(currentIndex, node)) { try impl.unkeyedContainer() }
        advance()
        return container
    }

    mutating func superDecoder() throws -> any Decoder {
        let value = try next((any Decoder).self, message: "Cannot get superDecoder() -- unkeyed container is at end.")
        let decoder = DecoderImpl(
            tape: impl.tape, index: value, path: .index(currentIndex, node), options: impl.options)
        advance()
        return decoder
    }
}
