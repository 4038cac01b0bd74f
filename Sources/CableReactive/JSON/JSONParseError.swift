/// Why ``JSONValue/init(parsing:)`` rejected its input, and where.
///
/// `offset` counts UTF-8 bytes from the start of the input and points at the byte where the problem
/// was found (for a bad number or an unpaired surrogate: where the number or escape starts).
///
///     do {
///         _ = try JSONValue(parsing: "[1,]")
///     } catch {
///         print(error, error.offset)
///     }
///     // Prints: JSON parse error: unexpected character at byte 3 3
///
/// What went wrong is in the description, not in a public kind to switch over: the parser's categories
/// are its own and may change.
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The category of a parse failure.
    package struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: Hashable, Sendable {
            case unexpectedEndOfInput
            case unexpectedCharacter
            case invalidLiteral
            case invalidNumber
            case numberOutOfRange
            case invalidEscape
            case invalidUnicodeEscape
            case unpairedSurrogate
            case controlCharacterInString
            case invalidUTF8
            case nestingTooDeep
            case trailingCharacters
        }

        private let code: Code

        private init(_ code: Code) {
            self.code = code
        }

        /// The input ended inside a value (also: empty input).
        package static let unexpectedEndOfInput = Kind(.unexpectedEndOfInput)
        /// A byte that cannot start or continue a value here (e.g. a trailing comma, a comment, `'`).
        package static let unexpectedCharacter = Kind(.unexpectedCharacter)
        /// Something that starts like `true`, `false` or `null` but is not (e.g. `nul`, `True`).
        package static let invalidLiteral = Kind(.invalidLiteral)
        /// A malformed number: leading zeros, `+1`, `.5`, `1.`, `1e`, `NaN`, `Infinity`.
        package static let invalidNumber = Kind(.invalidNumber)
        /// A well-formed number whose value is not a finite `Double` (e.g. `1e400`).
        package static let numberOutOfRange = Kind(.numberOutOfRange)
        /// A backslash followed by a character JSON does not define (e.g. `\x`, `\'`).
        package static let invalidEscape = Kind(.invalidEscape)
        /// `\u` not followed by four hexadecimal digits.
        package static let invalidUnicodeEscape = Kind(.invalidUnicodeEscape)
        /// A `\uD800`–`\uDFFF` escape that is not part of a high-then-low surrogate pair.
        package static let unpairedSurrogate = Kind(.unpairedSurrogate)
        /// An unescaped byte below 0x20 inside a string.
        package static let controlCharacterInString = Kind(.controlCharacterInString)
        /// Bytes that are not well-formed UTF-8 (only checked for byte input; `String`s are always valid).
        package static let invalidUTF8 = Kind(.invalidUTF8)
        /// Arrays and objects nested deeper than ``JSONValue/maximumNestingDepth``.
        package static let nestingTooDeep = Kind(.nestingTooDeep)
        /// Non-whitespace after the end of the top-level value.
        package static let trailingCharacters = Kind(.trailingCharacters)

        /// A short description of the kind.
        package var description: String {
            switch code {
            case .unexpectedEndOfInput: "unexpected end of input"
            case .unexpectedCharacter: "unexpected character"
            case .invalidLiteral: "invalid literal"
            case .invalidNumber: "invalid number"
            case .numberOutOfRange: "number out of range"
            case .invalidEscape: "invalid escape"
            case .invalidUnicodeEscape: "invalid \\u escape"
            case .unpairedSurrogate: "unpaired surrogate"
            case .controlCharacterInString: "control character in string"
            case .invalidUTF8: "invalid UTF-8"
            case .nestingTooDeep: "nesting too deep"
            case .trailingCharacters: "trailing characters"
            }
        }
    }

    /// What went wrong.
    package let kind: Kind
    /// The UTF-8 byte offset in the input where it went wrong.
    public let offset: Int

    package init(kind: Kind, offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    /// The kind and byte offset; never the input itself.
    public var description: String {
        "JSON parse error: \(kind) at byte \(offset)"
    }
}
