import Testing

@testable import CableReactive

@Suite("JSON parser")
struct JSONParserTests {
    static let accepted: [(String, JSONValue)] = [
        ("null", .null),
        ("true", true),
        ("false", false),
        ("0", 0),
        ("-0", 0),
        ("7", 7),
        ("-12", -12),
        ("9223372036854775807", .int(Int.max)),
        ("-9223372036854775808", .int(Int.min)),
        ("9223372036854775808", .double(9_223_372_036_854_775_808.0)),
        ("1.5", 1.5),
        ("-0.25", -0.25),
        ("1e2", .double(100)),
        ("1E+2", .double(100)),
        ("2.5e-3", 0.0025),
        ("0.1", 0.1),
        ("123456789012345678901234567890", .double(1.2345678901234568e29)),
        ("1e-400", .double(0)),
        ("1.7976931348623157e308", .double(.greatestFiniteMagnitude)),
        ("\"\"", ""),
        ("\"abc\"", "abc"),
        (#""a\"b\\c\/d""#, "a\"b\\c/d"),
        (#""\b\f\n\r\t""#, "\u{8}\u{C}\n\r\t"),
        (#""\u0041\u00e9\u20AC""#, "Aé€"),
        (#""\u0000""#, "\u{0}"),
        (#""\ud83d\ude00""#, "😀"),
        ("\"😀 é\"", "😀 é"),
        ("[]", []),
        ("{}", [:]),
        (" \t\r\n[ 1 , \"a\" , null ]\n ", [1, "a", nil]),
        (#"{"a":{"b":[true,false]}}"#, ["a": ["b": [true, false]]]),
        (#"{"k":1,"k":2}"#, ["k": 2]),
        ("[[[[[[[[[[1]]]]]]]]]]", [[[[[[[[[[1]]]]]]]]]]),
    ]

    @Test("accepts valid RFC 8259 text", arguments: accepted)
    func acceptsValid(text: String, expected: JSONValue) throws {
        let value = try JSONValue(parsing: text)
        #expect(value == expected)
        #expect(try JSONValue(parsingUTF8: Array(text.utf8)) == expected)
    }

    @Test("keeps integers as .int and other numbers as .double")
    func numberCases() throws {
        guard case .int(42) = try JSONValue(parsing: "42") else {
            Issue.record("42 should be .int")
            return
        }
        guard case .double(42) = try JSONValue(parsing: "42.0") else {
            Issue.record("42.0 should be .double")
            return
        }
        guard case .double(let huge) = try JSONValue(parsing: "18446744073709551616") else {
            Issue.record("2^64 should be .double")
            return
        }
        #expect(huge == 18_446_744_073_709_551_616.0)
        guard case .double(let negativeZero) = try JSONValue(parsing: "-0.0") else {
            Issue.record("-0.0 should be .double")
            return
        }
        #expect(negativeZero.sign == .minus)
    }

    @Test("parses doubles exactly like the standard library does")
    func doublePrecision() throws {
        let samples = [
            "0.1", "0.3", "1.7976931348623157e308", "4.9e-324", "2.2250738585072014e-308", "123.456e-7",
            "9007199254740993", "0.000001", "1e22", "1e23", "3.141592653589793238462643383279",
            "-98765.4321e+12", "5e-324", "1.00000000000000011102230246251565404236316680908203125",
        ]
        for sample in samples {
            let parsed = try JSONValue(parsing: sample).doubleValue
            #expect(parsed == Double(sample), "\(sample)")
        }
    }

    static let rejected: [(String, JSONParseError.Kind, Int)] = [
        ("", .unexpectedEndOfInput, 0),
        ("   ", .unexpectedEndOfInput, 3),
        ("[1,]", .unexpectedCharacter, 3),
        (#"{"a":1,}"#, .unexpectedCharacter, 7),
        ("[1 2]", .unexpectedCharacter, 3),
        (#"{"a" 1}"#, .unexpectedCharacter, 5),
        ("{a:1}", .unexpectedCharacter, 1),
        ("{1:1}", .unexpectedCharacter, 1),
        ("['a']", .unexpectedCharacter, 1),
        ("// c\n1", .unexpectedCharacter, 0),
        ("[1]/* c */", .trailingCharacters, 3),
        ("1 2", .trailingCharacters, 2),
        ("{} x", .trailingCharacters, 3),
        ("nul", .unexpectedEndOfInput, 3),
        ("nulL", .invalidLiteral, 0),
        ("True", .unexpectedCharacter, 0),
        ("tru e", .invalidLiteral, 0),
        ("01", .invalidNumber, 0),
        ("-01", .invalidNumber, 0),
        ("+1", .unexpectedCharacter, 0),
        (".5", .unexpectedCharacter, 0),
        ("1.", .unexpectedEndOfInput, 2),
        ("1.e3", .invalidNumber, 0),
        ("1e", .unexpectedEndOfInput, 2),
        ("1e+", .unexpectedEndOfInput, 3),
        ("-", .unexpectedEndOfInput, 1),
        ("-a", .invalidNumber, 0),
        ("NaN", .unexpectedCharacter, 0),
        ("Infinity", .unexpectedCharacter, 0),
        ("-Infinity", .invalidNumber, 0),
        ("1e400", .numberOutOfRange, 0),
        ("[-1e309]", .numberOutOfRange, 1),
        ("0x10", .trailingCharacters, 1),
        ("\"abc", .unexpectedEndOfInput, 4),
        ("\"a\tb\"", .controlCharacterInString, 2),
        ("\"a\nb\"", .controlCharacterInString, 2),
        ("\"\u{1F}\"", .controlCharacterInString, 1),
        (#""\x""#, .invalidEscape, 1),
        (#""\'""#, .invalidEscape, 1),
        (#""\u12G4""#, .invalidUnicodeEscape, 5),
        (#""\u12""#, .invalidUnicodeEscape, 5),
        (#""\ud800""#, .unpairedSurrogate, 1),
        (#""\ud800x""#, .unpairedSurrogate, 1),
        (#""\ud800\n""#, .unpairedSurrogate, 1),
        (#""\ud800\u0041""#, .unpairedSurrogate, 1),
        (#""\udc00\ud800""#, .unpairedSurrogate, 1),
        (#""ok\uDFFF""#, .unpairedSurrogate, 3),
        ("\u{FEFF}1", .unexpectedCharacter, 0),
        ("'a'", .unexpectedCharacter, 0),
    ]

    @Test("rejects invalid text with the kind and byte offset of the problem", arguments: rejected)
    func rejectsInvalid(text: String, kind: JSONParseError.Kind, offset: Int) {
        #expect(throws: JSONParseError(kind: kind, offset: offset)) {
            try JSONValue(parsing: text)
        }
    }

    @Test("finds the byte that ends a run of plain string content at every offset of the 16- and 8-byte steps")
    func specialBytesAtEveryOffset() throws {
        for length in 0..<56 {
            for position in 0...length {
                let before = String(repeating: "a", count: position)
                let after = String(repeating: "b", count: length - position)
                // The closing quote, an escape, a multi-byte character: all parse.
                let plain = "\"" + before + after + "\""
                #expect(try JSONValue(parsing: plain) == .string(before + after))
                let escaped = "\"" + before + "\\n" + after + "\""
                #expect(try JSONValue(parsingUTF8: Array(escaped.utf8)) == .string(before + "\n" + after))
                let accented = "\"" + before + "é" + after + "\""
                #expect(try JSONValue(parsingUTF8: Array(accented.utf8)) == .string(before + "é" + after))
                // A control character or a broken UTF-8 sequence at `position` is reported there.
                var control = Array(plain.utf8)
                control.insert(0x01, at: position + 1)
                #expect(throws: JSONParseError.self) { try JSONValue(parsingUTF8: control) }
                do {
                    _ = try JSONValue(parsingUTF8: control)
                } catch {
                    #expect(error.kind == .controlCharacterInString && error.offset == position + 1)
                }
                var broken = Array(plain.utf8)
                broken.insert(0xFF, at: position + 1)
                do {
                    _ = try JSONValue(parsingUTF8: broken)
                    Issue.record("accepted 0xFF at \(position)")
                } catch {
                    #expect(error.kind == .invalidUTF8 && error.offset == position + 1)
                }
                // An unterminated string runs out of input wherever the words end.
                #expect(throws: JSONParseError.self) { try JSONValue(parsingUTF8: Array(plain.utf8.dropLast())) }
            }
        }
    }

    @Test("rejects nesting deeper than the limit and accepts it at the limit")
    func nestingLimit() throws {
        let limit = JSONValue.maximumNestingDepth
        let atLimit = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(throws: Never.self) { try JSONValue(parsing: atLimit) }
        let overLimit = String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1)
        #expect(throws: JSONParseError(kind: .nestingTooDeep, offset: limit)) { try JSONValue(parsing: overLimit) }
        let hostile = String(repeating: "[", count: 10_000)
        #expect(throws: JSONParseError(kind: .nestingTooDeep, offset: limit)) { try JSONValue(parsing: hostile) }
        let objects = String(repeating: #"{"a":"#, count: 10_000)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: objects) }
    }

    @Test("handles huge and very long numbers without trapping")
    func hugeNumbers() throws {
        let longInteger = String(repeating: "9", count: 5_000)
        #expect(throws: JSONParseError(kind: .numberOutOfRange, offset: 0)) { try JSONValue(parsing: longInteger) }
        let longFraction = "0." + String(repeating: "1", count: 5_000)
        #expect(try JSONValue(parsing: longFraction).doubleValue == Double(longFraction))
        let hugeExponent = "1e" + String(repeating: "9", count: 100)
        #expect(throws: JSONParseError(kind: .numberOutOfRange, offset: 0)) { try JSONValue(parsing: hugeExponent) }
        let tinyExponent = "1e-" + String(repeating: "9", count: 100)
        #expect(try JSONValue(parsing: tinyExponent) == .double(0))
        let zeros = "0." + String(repeating: "0", count: 400) + "1"
        #expect(try JSONValue(parsing: zeros).doubleValue == Double(zeros))
    }

    @Test("throws for every truncated prefix of a valid document")
    func truncatedPrefixes() throws {
        let document =
            #"{"identifier":"{\"channel\":\"A\"}","#
            + #""message":{"a":[1,-2.5e3,true,false,null],"s":"é\u00e9\ud83d\ude00"}}"#
        let bytes = Array(document.utf8)
        #expect(throws: Never.self) { try JSONValue(parsingUTF8: bytes) }
        for length in 0..<bytes.count {
            #expect(throws: JSONParseError.self, "prefix of \(length) bytes") {
                try JSONValue(parsingUTF8: bytes[0..<length])
            }
        }
    }

    static let invalidUTF8: [[UInt8]] = [
        [0x22, 0x80, 0x22],  // lone continuation byte
        [0x22, 0xC0, 0x80, 0x22],  // overlong NUL
        [0x22, 0xC1, 0xBF, 0x22],  // overlong
        [0x22, 0xE0, 0x80, 0x80, 0x22],  // overlong 3-byte
        [0x22, 0xED, 0xA0, 0x80, 0x22],  // UTF-16 surrogate encoded in UTF-8
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
        [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22],  // invalid lead byte
        [0x22, 0xFF, 0x22],
        [0x22, 0xE2, 0x82, 0x22],  // truncated sequence
        [0x22, 0x5C, 0x6E, 0xC3, 0x22],  // after an escape (slow path)
    ]

    @Test("rejects malformed UTF-8 in byte input", arguments: invalidUTF8)
    func rejectsInvalidUTF8(bytes: [UInt8]) {
        #expect(throws: JSONParseError.self) { try JSONValue(parsingUTF8: bytes) }
        do {
            _ = try JSONValue(parsingUTF8: bytes)
        } catch {
            #expect(error.kind == .invalidUTF8)
        }
    }

    @Test("accepts well-formed multi-byte UTF-8 in byte input")
    func acceptsValidUTF8() throws {
        let text = "\"\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF} \\n\u{E9}\""
        let value = try JSONValue(parsingUTF8: Array(text.utf8))
        #expect(value == .string("\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\u{10000}\u{10FFFF} \n\u{E9}"))
    }

    @Test("rejects a raw non-ASCII byte outside strings")
    func rejectsNonASCIIOutsideStrings() {
        #expect(throws: JSONParseError(kind: .unexpectedCharacter, offset: 1)) {
            try JSONValue(parsingUTF8: [0x5B, 0xC3, 0xA9, 0x5D])
        }
    }

    @Test("describes errors with kind and offset")
    func errorDescription() {
        let error = JSONParseError(kind: .trailingCharacters, offset: 4)
        #expect(error.description == "JSON parse error: trailing characters at byte 4")
    }
}
