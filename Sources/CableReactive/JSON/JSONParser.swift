// A strict RFC 8259 parser over contiguous UTF-8. No Foundation, no traps: every read is bounds-checked
// by hand, integer accumulation uses overflow-reporting arithmetic, and nesting is capped.

extension JSONValue {
    /// How deeply arrays and objects may nest in parsed text (128). Deeper input throws
    /// a ``JSONParseError`` ("nesting too deep") instead of exhausting the stack.
    public static let maximumNestingDepth = 128

    /// Parses JSON text (RFC 8259, strict).
    ///
    /// Any JSON value may be at the top level. Rejected: trailing commas, comments, single quotes,
    /// leading zeros, `NaN`/`Infinity`, raw control characters in strings, unpaired `\u` surrogates,
    /// nesting deeper than ``maximumNestingDepth``, numbers that overflow `Double`, and anything but
    /// whitespace after the value. An integer literal (no fraction, no exponent) that fits in `Int`
    /// becomes `.int` (`-0` becomes `.int(0)`); every other number becomes `.double`, rounded to nearest.
    /// Duplicate object keys keep the last value.
    ///
    ///     let value = try JSONValue(parsing: #"{"seq":1,"ok":true,"ratio":0.5}"#)
    ///     print(value["seq"] == .int(1), value["ratio"]?.doubleValue ?? 0)
    ///     // Prints: true 0.5
    ///
    /// The input size is not limited here; the transport bounds message size.
    ///
    /// - Parameter text: the JSON text.
    /// - Throws: ``JSONParseError`` with the kind and UTF-8 byte offset of the first problem.
    public init(parsing text: String) throws(JSONParseError) {
        var text = text
        let result = text.withUTF8 { buffer in
            var parser = JSONParser(bytes: buffer, validatesUTF8: false)
            return Result { () throws(JSONParseError) in try parser.parseDocument() }
        }
        self = try result.get()
    }

    /// Parses JSON from UTF-8 bytes, validating the UTF-8 as well (see ``init(parsing:)``).
    ///
    ///     let bytes: [UInt8] = Array(#"[1,"two",null]"#.utf8)
    ///     print(try JSONValue(parsingUTF8: bytes))
    ///     // Prints: [1,"two",null]
    ///
    /// - Parameter bytes: the JSON text as UTF-8; a byte-order mark is not accepted.
    /// - Throws: ``JSONParseError``, also for malformed UTF-8 ("invalid UTF-8").
    public init<Bytes: Collection<UInt8>>(parsingUTF8 bytes: Bytes) throws(JSONParseError) {
        let parse = { (buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JSONParseError> in
            var parser = JSONParser(bytes: buffer, validatesUTF8: true)
            return Result { () throws(JSONParseError) in try parser.parseDocument() }
        }
        let result = bytes.withContiguousStorageIfAvailable(parse) ?? Array(bytes).withUnsafeBufferPointer(parse)
        self = try result.get()
    }
}

/// Recursive-descent parser over one contiguous UTF-8 buffer. Create one per document.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let validatesUTF8: Bool
    private let maxDepth: Int
    private(set) var index = 0
    private var depth = 0
    /// Reused for strings that contain escapes.
    private var scratch: [UInt8] = []

    /// - Parameters:
    ///   - bytes: the whole input.
    ///   - validatesUTF8: check that string contents are well-formed UTF-8 (not needed for `String` input).
    ///   - maxDepth: deepest allowed nesting of arrays and objects.
    init(bytes: UnsafeBufferPointer<UInt8>, validatesUTF8: Bool, maxDepth: Int = JSONValue.maximumNestingDepth) {
        self.bytes = bytes
        self.validatesUTF8 = validatesUTF8
        self.maxDepth = maxDepth
    }

    /// Parses one value surrounded by optional whitespace and requires the input to end there.
    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        try expectEnd()
        return value
    }

    /// Parses a top-level object, handing each key and the parser (positioned at the value) to `member`,
    /// which must consume exactly one value. Requires the input to end after the object.
    ///
    /// The keys are handed over as read, not as `String`s: a caller matches them with the names it knows
    /// (`switch key { case "type": … }`), and a frame's keys are never kept.
    ///
    /// - Returns: `false` (without reading further) when the document is valid JSON start but not an object.
    mutating func parseTopLevelObject(
        _ member: (JSONKey, inout JSONParser) throws(JSONParseError) -> Void
    ) throws(JSONParseError) -> Bool {
        skipWhitespace()
        guard let first = peek() else { throw fail(.unexpectedEndOfInput) }
        guard first == UInt8(ascii: "{") else { return false }
        try enterContainer()
        index += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                let key = JSONKey(try scanKey(), in: bytes)
                try member(key, &self)
                if try endOfMember(closing: UInt8(ascii: "}")) { break }
            }
        }
        depth -= 1
        try expectEnd()
        return true
    }

    // MARK: Values

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard let byte = peek() else { throw fail(.unexpectedEndOfInput) }
        switch byte {
        case UInt8(ascii: "{"):
            return try parseObject()
        case UInt8(ascii: "["):
            return try parseArray()
        case UInt8(ascii: "\""):
            return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try parseNumber()
        default:
            throw fail(.unexpectedCharacter)
        }
    }

    /// An empty object with room for 3 members (see parseObject), copied on the first insert. Copying it is
    /// specialized code, while `Dictionary(minimumCapacity:)` per object is a call into the standard library
    /// that looks up the storage's generic metadata at run time, once per object of every message.
    private static let emptyObject = [String: JSONValue](minimumCapacity: 3)

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object([:])
        }
        // Sized for a typical message object (up to 3 members: 4 buckets) so that it allocates once instead
        // of resizing on the second member; capacity 4 would take 8 buckets, and every buffered small message
        // would carry the 4 it never uses. Larger objects grow as usual.
        var object = Self.emptyObject
        while true {
            let key = try parseKey()
            object[key] = try parseValue()  // a repeated key keeps the last value
            if try endOfMember(closing: UInt8(ascii: "}")) { break }
        }
        depth -= 1
        return .object(object)
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        index += 1
        skipWhitespace()
        var array: [JSONValue] = []
        if peek() == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(array)
        }
        while true {
            array.append(try parseValue())
            if try endOfMember(closing: UInt8(ascii: "]")) { break }
        }
        depth -= 1
        return .array(array)
    }

    /// Reads `"key"` `:` and the whitespace after it; leaves the parser at the value.
    private mutating func parseKey() throws(JSONParseError) -> String {
        string(try scanKey())
    }

    /// As ``parseKey()``, returning the key as read.
    private mutating func scanKey() throws(JSONParseError) -> ScannedString {
        guard let byte = peek() else { throw fail(.unexpectedEndOfInput) }
        guard byte == UInt8(ascii: "\"") else { throw fail(.unexpectedCharacter) }
        let key = try scanString()
        skipWhitespace()
        guard let colon = peek() else { throw fail(.unexpectedEndOfInput) }
        guard colon == UInt8(ascii: ":") else { throw fail(.unexpectedCharacter) }
        index += 1
        skipWhitespace()
        return key
    }

    /// After a member or element: consumes `,` (returns false) or `closing` (returns true).
    private mutating func endOfMember(closing: UInt8) throws(JSONParseError) -> Bool {
        skipWhitespace()
        guard let byte = peek() else { throw fail(.unexpectedEndOfInput) }
        if byte == UInt8(ascii: ",") {
            index += 1
            skipWhitespace()
            return false
        }
        guard byte == closing else { throw fail(.unexpectedCharacter) }
        index += 1
        return true
    }

    private mutating func enterContainer() throws(JSONParseError) {
        guard depth < maxDepth else { throw fail(.nestingTooDeep) }
        depth += 1
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let length = literal.utf8CodeUnitCount
        let available = bytes.count - index
        let matches = literal.withUTF8Buffer { word in
            for offset in 0..<min(length, available) where bytes[index + offset] != word[offset] {
                return false
            }
            return true
        }
        guard matches else { throw fail(.invalidLiteral) }
        guard available >= length else { throw JSONParseError(kind: .unexpectedEndOfInput, offset: bytes.count) }
        index += length
    }

    private mutating func expectEnd() throws(JSONParseError) {
        skipWhitespace()
        guard index == bytes.count else { throw fail(.trailingCharacters) }
    }

    // MARK: Tapes and skipping

    /// As ``parseDocument()``, writing the value to `tape` (see ``JSONTape``) instead of building it.
    mutating func parseDocument(into tape: inout JSONTape) throws(JSONParseError) {
        skipWhitespace()
        try appendValue(to: &tape)
        try expectEnd()
    }

    /// As ``parseValue()``, appending the value's entries to `tape`.
    private mutating func appendValue(to tape: inout JSONTape) throws(JSONParseError) {
        guard let byte = peek() else { throw fail(.unexpectedEndOfInput) }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let object = byte == UInt8(ascii: "{")
            let closing = object ? UInt8(ascii: "}") : UInt8(ascii: "]")
            try enterContainer()
            index += 1
            skipWhitespace()
            let start = tape.startContainer()
            var count = 0
            if peek() == closing {
                index += 1
            } else {
                while true {
                    if object { tape.append(try scanKey()) }
                    try appendValue(to: &tape)
                    count += 1
                    if try endOfMember(closing: closing) { break }
                }
            }
            depth -= 1
            tape.endContainer(at: start, count: count, object: object)
        case UInt8(ascii: "\""):
            tape.append(try scanString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            switch try parseNumber() {
            case .int(let number): tape.append(.int(number))
            case .double(let number): tape.append(.double(number))
            default: throw fail(.invalidNumber)  // parseNumber makes numbers only
            }
        default:
            tape.append(try parseLiteral())
        }
    }

    /// `true`, `false` or `null` at the current byte, as a tape entry.
    private mutating func parseLiteral() throws(JSONParseError) -> JSONTape.Entry {
        switch peek() {
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        default:
            throw fail(.unexpectedCharacter)
        }
    }

    /// Checks the value at the parser as ``parseValue()`` does, building nothing (a string with escapes is
    /// decoded to check them), and returns its range in the input.
    mutating func skipValue() throws(JSONParseError) -> Range<Int> {
        let start = index
        guard let byte = peek() else { throw fail(.unexpectedEndOfInput) }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let object = byte == UInt8(ascii: "{")
            let closing = object ? UInt8(ascii: "}") : UInt8(ascii: "]")
            try enterContainer()
            index += 1
            skipWhitespace()
            if peek() == closing {
                index += 1
            } else {
                while true {
                    if object { _ = try scanKey() }
                    _ = try skipValue()
                    if try endOfMember(closing: closing) { break }
                }
            }
            depth -= 1
        case UInt8(ascii: "\""):
            _ = try scanString()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            _ = try parseNumber()
        default:
            _ = try parseLiteral()
        }
        return start..<index
    }

    // MARK: Strings

    /// Whether the next value is a string.
    var atString: Bool { peek() == UInt8(ascii: "\"") }

    /// Skips a string starting at its opening quote without decoding it, and returns the range of its raw
    /// contents (between the quotes, escapes as written). It checks only where the string ends: a caller
    /// must either compare the contents with a token it knows to be valid, or parse the string properly.
    mutating func skipStringToken() throws(JSONParseError) -> Range<Int> {
        index += 1
        let start = index
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                return start..<(index - 1)
            case UInt8(ascii: "\\"):
                index += 2
            default:
                index += 1
            }
        }
        throw fail(.unexpectedEndOfInput)
    }

    /// Parses a string starting at its opening quote.
    private mutating func parseString() throws(JSONParseError) -> String {
        string(try scanString())
    }

    /// The text of a string read by ``scanString()``.
    @inline(__always)
    private func string(_ scanned: ScannedString) -> String {
        switch scanned {
        case .plain(let contents): String(decoding: UnsafeBufferPointer(rebasing: bytes[contents]), as: UTF8.self)
        case .escaped(let text): text
        }
    }

    /// Reads and checks a string starting at its opening quote. Without escapes (the fast path) its contents
    /// are the input's bytes between the quotes, and no `String` is made yet.
    @inline(__always)
    private mutating func scanString() throws(JSONParseError) -> ScannedString {
        index += 1
        let start = index
        while index < bytes.count {
            skipPlainWords()
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return .plain(start..<(index - 1))
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail(.controlCharacterInString) }
            if byte >= 0x80 && validatesUTF8 {
                try skipUTF8Sequence()
            } else {
                index += 1
            }
        }
        guard index < bytes.count else { throw fail(.unexpectedEndOfInput) }
        return .escaped(try parseEscapedString(from: start))
    }

    /// Moves `index` over whole 8-byte words of string content that need no look: no quote, no backslash,
    /// no control character, and (when validating UTF-8) no byte of a multi-byte sequence. Long strings are
    /// most of a big message's bytes, so this scan is where a client receiving big messages spends its time:
    /// it must not go a byte at a time. It stops at the first word that holds such a byte; the byte loop
    /// takes it from there.
    @inline(__always)
    private mutating func skipPlainWords() {
        guard let base = bytes.baseAddress else { return }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let multiByte = validatesUTF8 ? high : 0
        let end = bytes.count
        var at = index
        // A byte equal to c makes `x = word ^ (c × ones)` hold a zero byte; `(x - ones) & ~x & high` is
        // non-zero exactly when x holds one. `(word - 0x20 × ones) & ~word & high` is non-zero exactly when
        // some byte is below 0x20. (Byte order does not matter to either test.)
        @inline(__always) func needsLook(_ word: UInt64) -> UInt64 {
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let special =
                ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | ((word &- ones &* 0x20) & ~word)
            return (special & high) | (word & multiByte)
        }
        let raw = UnsafeRawPointer(base)
        // Two words per test while the string is long: one branch for sixteen bytes. Over a 4 KiB string this
        // scans 9–10 GB/s against 4–4.5 GB/s a word at a time (four words: 11–12 GB/s); `SIMD16<UInt8>` compares
        // were twenty times slower here, its masks not lowered to vector code on Linux.
        while end - at >= 16 {
            let first = raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)
            let second = raw.loadUnaligned(fromByteOffset: at + 8, as: UInt64.self)
            if needsLook(first) | needsLook(second) != 0 { break }
            at += 16
        }
        while end - at >= 8 {
            if needsLook(raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)) != 0 { break }
            at += 8
        }
        index = at
    }

    /// Slow path: the string from `start` contains a backslash at `index`.
    private mutating func parseEscapedString(from start: Int) throws(JSONParseError) -> String {
        scratch.removeAll(keepingCapacity: true)
        // Unescaping never lengthens text, so the rest of the input bounds the size; capped so a huge
        // frame does not reserve a huge buffer up front.
        scratch.reserveCapacity(min(bytes.count - start, 4096))
        var runStart = start
        while index < bytes.count {
            skipPlainWords()
            guard index < bytes.count else { break }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 {
                // Copy the run of plain bytes before this one in one go.
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return String(decoding: scratch, as: UTF8.self)
                }
                guard byte == UInt8(ascii: "\\") else { throw fail(.controlCharacterInString) }
                try parseEscape()
                runStart = index
            } else if byte >= 0x80 && validatesUTF8 {
                try skipUTF8Sequence()
            } else {
                index += 1
            }
        }
        throw fail(.unexpectedEndOfInput)
    }

    /// Decodes one escape sequence starting at its backslash into `scratch`.
    private mutating func parseEscape() throws(JSONParseError) {
        let escapeStart = index
        index += 1
        guard let code = peek() else { throw fail(.unexpectedEndOfInput) }
        let decoded: UInt8
        switch code {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
            decoded = code
        case UInt8(ascii: "b"):
            decoded = 0x08
        case UInt8(ascii: "f"):
            decoded = 0x0C
        case UInt8(ascii: "n"):
            decoded = 0x0A
        case UInt8(ascii: "r"):
            decoded = 0x0D
        case UInt8(ascii: "t"):
            decoded = 0x09
        case UInt8(ascii: "u"):
            index += 1
            try parseUnicodeEscape(escapeStart: escapeStart)
            return
        default:
            throw JSONParseError(kind: .invalidEscape, offset: escapeStart)
        }
        scratch.append(decoded)
        index += 1
    }

    /// After `\u`: four hex digits, plus a second `\uXXXX` for a surrogate pair; appends the scalar as UTF-8.
    private mutating func parseUnicodeEscape(escapeStart: Int) throws(JSONParseError) {
        let first = try parseHex4()
        let scalar: UInt32
        switch first {
        case 0xD800...0xDBFF:
            guard bytes.count - index >= 2 else {
                if index < bytes.count && bytes[index] != UInt8(ascii: "\\") {
                    throw JSONParseError(kind: .unpairedSurrogate, offset: escapeStart)
                }
                throw fail(.unexpectedEndOfInput)
            }
            guard bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw JSONParseError(kind: .unpairedSurrogate, offset: escapeStart)
            }
            index += 2
            let second = try parseHex4()
            guard (0xDC00...0xDFFF).contains(second) else {
                throw JSONParseError(kind: .unpairedSurrogate, offset: escapeStart)
            }
            scalar = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        case 0xDC00...0xDFFF:
            throw JSONParseError(kind: .unpairedSurrogate, offset: escapeStart)
        default:
            scalar = first
        }
        appendUTF8(scalar)
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard bytes.count - index >= 4 else {
            // Report a non-hex byte before reporting truncation, so the kind is stable.
            var probe = index
            while probe < bytes.count {
                if JSONParser.hexValue(bytes[probe]) == nil {
                    throw JSONParseError(kind: .invalidUnicodeEscape, offset: probe)
                }
                probe += 1
            }
            throw JSONParseError(kind: .unexpectedEndOfInput, offset: bytes.count)
        }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = JSONParser.hexValue(bytes[index]) else { throw fail(.invalidUnicodeEscape) }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private static func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// Appends a Unicode scalar value (never a surrogate, at most 0x10FFFF) as UTF-8.
    private mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(truncatingIfNeeded: scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(truncatingIfNeeded: 0xC0 | scalar >> 6))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(truncatingIfNeeded: 0xE0 | scalar >> 12))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(truncatingIfNeeded: 0xF0 | scalar >> 18))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        }
    }

    /// Checks one multi-byte UTF-8 sequence at `index` (Unicode Table 3-7) and moves past it.
    private mutating func skipUTF8Sequence() throws(JSONParseError) {
        let lead = bytes[index]
        let length: Int
        let secondRange: ClosedRange<UInt8>
        switch lead {
        case 0xC2...0xDF:
            (length, secondRange) = (2, 0x80...0xBF)
        case 0xE0:
            (length, secondRange) = (3, 0xA0...0xBF)
        case 0xE1...0xEC, 0xEE...0xEF:
            (length, secondRange) = (3, 0x80...0xBF)
        case 0xED:
            (length, secondRange) = (3, 0x80...0x9F)
        case 0xF0:
            (length, secondRange) = (4, 0x90...0xBF)
        case 0xF1...0xF3:
            (length, secondRange) = (4, 0x80...0xBF)
        case 0xF4:
            (length, secondRange) = (4, 0x80...0x8F)
        default:
            throw fail(.invalidUTF8)
        }
        guard bytes.count - index >= length, secondRange.contains(bytes[index + 1]) else {
            throw fail(.invalidUTF8)
        }
        for offset in 2..<length where !(0x80...0xBF).contains(bytes[index + offset]) {
            throw fail(.invalidUTF8)
        }
        index += length
    }

    // MARK: Numbers

    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }

        // Significant decimal digits, accumulated while they fit; `overflowed` once they do not.
        var significand: UInt64 = 0
        var overflowed = false
        var fractionDigits = 0

        guard let firstDigit = peek() else { throw fail(.unexpectedEndOfInput) }
        if firstDigit == UInt8(ascii: "0") {
            index += 1
            if let next = peek(), JSONParser.isDigit(next) {
                throw JSONParseError(kind: .invalidNumber, offset: start)
            }
        } else if JSONParser.isDigit(firstDigit) {
            while let byte = peek(), JSONParser.isDigit(byte) {
                accumulate(byte, &significand, &overflowed)
                index += 1
            }
        } else {
            throw JSONParseError(kind: .invalidNumber, offset: start)
        }

        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let byte = peek() else { throw fail(.unexpectedEndOfInput) }
            guard JSONParser.isDigit(byte) else { throw JSONParseError(kind: .invalidNumber, offset: start) }
            while let byte = peek(), JSONParser.isDigit(byte) {
                accumulate(byte, &significand, &overflowed)
                if fractionDigits < 1_000_000 { fractionDigits += 1 }
                index += 1
            }
        }

        var exponent = 0
        if let marker = peek(), marker == UInt8(ascii: "e") || marker == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            var exponentNegative = false
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
                exponentNegative = sign == UInt8(ascii: "-")
                index += 1
            }
            guard let byte = peek() else { throw fail(.unexpectedEndOfInput) }
            guard JSONParser.isDigit(byte) else { throw JSONParseError(kind: .invalidNumber, offset: start) }
            while let byte = peek(), JSONParser.isDigit(byte) {
                // Saturate: anything this large is out of range (or zero) anyway.
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(byte - UInt8(ascii: "0")) }
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }

        if isInteger && !overflowed {
            if let magnitude = Int(exactly: significand) {
                return .int(negative ? -magnitude : magnitude)
            }
            if negative && significand == UInt64(Int.max) + 1 {
                return .int(Int.min)
            }
        }

        // Exact fast path (Clinger): significand and power of ten both exactly representable.
        let decimalExponent = exponent - fractionDigits
        if !overflowed && significand < 1 << 53 && (-22...22).contains(decimalExponent) {
            let scale = JSONParser.exactPowersOfTen[abs(decimalExponent)]
            let magnitude = decimalExponent < 0 ? Double(significand) / scale : Double(significand) * scale
            return .double(negative ? -magnitude : magnitude)
        }

        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONParseError(kind: .numberOutOfRange, offset: start)
        }
        return .double(value)
    }

    private func accumulate(_ digitByte: UInt8, _ significand: inout UInt64, _ overflowed: inout Bool) {
        let digit = UInt64(digitByte - UInt8(ascii: "0"))
        if significand == 0 && digit == 0 { return }  // leading zeros carry no precision
        guard !overflowed else { return }
        let (times10, overflow1) = significand.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times10.addingReportingOverflow(digit)
        if overflow1 || overflow2 {
            overflowed = true
        } else {
            significand = sum
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    // MARK: Helpers

    @inline(__always)
    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    @inline(__always)
    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09:
                index += 1
            default:
                return
            }
        }
    }

    private func fail(_ kind: JSONParseError.Kind) -> JSONParseError {
        JSONParseError(kind: kind, offset: index)
    }
}

/// A string as ``JSONParser`` read it: the range of its contents in the input when it holds no escape, or its
/// decoded text.
enum ScannedString {
    case plain(Range<Int>)
    case escaped(String)
}

/// An object member's key as the input spells it, for ``JSONParser/parseTopLevelObject(_:)``: matched with the
/// names a caller knows without making a `String` of it. Valid only during the call it is handed to.
struct JSONKey {
    private let scanned: ScannedString
    private let input: UnsafeBufferPointer<UInt8>

    init(_ scanned: ScannedString, in input: UnsafeBufferPointer<UInt8>) {
        self.scanned = scanned
        self.input = input
    }

    /// Whether the key is `name` (as JSON compares keys: after unescaping); what `case "type":` uses in a
    /// `switch` over a key.
    @inline(__always)
    static func ~= (name: StaticString, key: JSONKey) -> Bool {
        guard name.hasPointerRepresentation else { return false }  // a name is a literal of ASCII letters
        let count = name.utf8CodeUnitCount
        switch key.scanned {
        case .plain(let contents):
            guard contents.count == count, let base = key.input.baseAddress else { return false }
            let spelled = base + contents.lowerBound
            for offset in 0..<count where spelled[offset] != name.utf8Start[offset] { return false }
            return true
        case .escaped(let text):
            return text.utf8.elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: count))
        }
    }
}
