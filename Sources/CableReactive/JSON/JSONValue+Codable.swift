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
    ///     struct Message: Codable { var body: String; var seq: Int }
    ///     let value = try JSONValue(encoding: Message(body: "hi", seq: 1))
    ///     print(value)
    ///     // Prints: {"body":"hi","seq":1}
    ///
    /// With your own encoder, its strategies apply (snake_case keys and ISO 8601 dates are what Rails apps
    /// usually expect):
    ///
    ///     let encoder = JSONEncoder()
    ///     encoder.keyEncodingStrategy = .convertToSnakeCase
    ///     print(try JSONValue(encoding: ["roomID": 7], encoder: encoder))
    ///
    /// - Parameters:
    ///   - value: anything `Encodable`, including top-level strings and numbers.
    ///   - encoder: the encoder to use; a default `JSONEncoder` if omitted.
    /// - Throws: `EncodingError` from the encoder (e.g. for NaN), or ``JSONParseError`` (not expected).
    public init(encoding value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws {
        let data = try encoder.encode(value)
        try self.init(parsingUTF8: data)
    }

    /// Converts this JSON to a `Decodable` type (through `JSONDecoder`).
    ///
    ///     struct Message: Codable { var body: String; var seq: Int }
    ///     let value: JSONValue = ["body": "hi", "seq": 1, "extra": true]
    ///     let message: Message = try value.decode()
    ///     print(message.body)
    ///     // Prints: hi
    ///
    /// - Parameters:
    ///   - type: the type to decode; usually inferred.
    ///   - decoder: the decoder to use, with its strategies (snake_case keys, ISO 8601 dates); a default
    ///     `JSONDecoder` if omitted.
    /// - Throws: `DecodingError` when the JSON does not match `type`; ``JSONEncodingError`` when this
    ///   value holds a NaN or infinite number.
    public func decode<T: Decodable>(_ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        let text = try jsonText()
        return try decoder.decode(type, from: Data(text.utf8))
    }
}

extension JSONValue {
    /// Each value of `members` encoded on its own: what the dictionary forms of `subscribe` and `perform` take.
    ///
    /// - Throws: ``CableError`` `unencodableData` when a value does not encode.
    static func encodingEach(_ members: [String: any Encodable & Sendable]) throws(CableError) -> [String: JSONValue] {
        var object: [String: JSONValue] = [:]
        object.reserveCapacity(members.count)
        for (key, value) in members {
            do {
                object[key] = try value as? JSONValue ?? JSONValue(encoding: value)
            } catch {
                throw CableError.unencodableData()
            }
        }
        return object
    }
}
