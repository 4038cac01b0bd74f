#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

extension JSONValue: Codable {
    /// Decodes whatever JSON value the decoder holds: `null`, a Boolean, an integer that fits in `Int`,
    /// any other number as `.double`, a string, an array or an object.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Int.self) {
            self = .int(number)
        } else if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else if let object = try? container.decode([String: JSONValue].self) {
            self = .object(object)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Not a JSON value")
        }
    }

    /// Encodes the value as the matching JSON construct. With `JSONEncoder`, integral doubles come out
    /// without a fraction (`2`) and decode back as `.int(2)`, which is `==` to `.double(2.0)`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null:
            try container.encodeNil()
        case .bool(let flag):
            try container.encode(flag)
        case .int(let number):
            try container.encode(number)
        case .double(let number):
            try container.encode(number)
        case .string(let string):
            try container.encode(string)
        case .array(let array):
            try container.encode(array)
        case .object(let object):
            try container.encode(object)
        }
    }
}

extension JSONValue {
    /// Converts an `Encodable` value to JSON (through `JSONEncoder`).
    ///
    ///     struct Message: Codable { var body: String; var seq: Int; var at: Date }
    ///     let value = try JSONValue(encoding: Message(body: "hi", seq: 1, at: Date(timeIntervalSince1970: 0)))
    ///     print(value)
    ///     // Prints: {"at":"1970-01-01T00:00:00.000Z","body":"hi","seq":1}
    ///
    /// Without an encoder, the default ``CableCoding`` applies: dates as ISO 8601 with milliseconds, as Rails
    /// writes them, and keys as declared. With your own encoder, its strategies apply instead:
    ///
    ///     let encoder = CableCoding(keys: .snakeCase).makeEncoder()
    ///     print(try JSONValue(encoding: Message(body: "hi", seq: 1, at: Date()), encoder: encoder))
    ///
    /// - Parameters:
    ///   - value: anything `Encodable`, including top-level strings and numbers.
    ///   - encoder: the encoder to use; `nil` (the default) for `CableCoding().makeEncoder()` (made once and
    ///     shared).
    /// - Throws: `EncodingError` from the encoder (e.g. for NaN, or a date outside the years 0000–9999), or
    ///   ``JSONParseError`` (not expected).
    public init(encoding value: some Encodable, encoder: JSONEncoder? = nil) throws {
        let data = try (encoder ?? CableCoders.standard.encoder).encode(value)
        try self.init(parsingUTF8: data)
    }

    /// Converts this JSON to a `Decodable` type: as `JSONDecoder` would, and through it when you pass one.
    ///
    ///     struct Message: Codable { var body: String; var at: Date }
    ///     let value: JSONValue = ["body": "hi", "at": "2026-12-02T00:52:17.123Z", "extra": true]
    ///     let message: Message = try value.decode()
    ///     print(message.body)
    ///     // Prints: hi
    ///
    /// - Parameters:
    ///   - type: the type to decode; usually inferred.
    ///   - decoder: the decoder to use, with its strategies; `nil` (the default) for the strategies of
    ///     `CableCoding()`: ISO 8601 dates, read liberally (see ``CableCoding/DateStrategy``), and keys as
    ///     declared, read straight from this value with no JSON text and no `JSONDecoder` in between.
    /// - Throws: `DecodingError` when the JSON does not match `type`; ``JSONEncodingError`` when this
    ///   value holds a NaN or infinite number (without a `decoder`: when `type` reads it).
    public func decode<T: Decodable>(_ type: T.Type = T.self, decoder: JSONDecoder? = nil) throws -> T {
        guard let decoder else {
            // The default coding's own decoder reads the value itself, with no text in between.
            return try CableCoders.standard.messageDecoder.decode(type, from: self)
        }
        let text = try jsonText()
        return try decoder.decode(type, from: Data(text.utf8))
    }
}
