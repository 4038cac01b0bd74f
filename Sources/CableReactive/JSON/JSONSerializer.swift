/// Why a ``JSONValue`` could not be written as JSON text.
public struct JSONEncodingError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Code: Hashable, Sendable {
        case nonFiniteNumber
    }

    private let code: Code

    private init(_ code: Code) {
        self.code = code
    }

    /// The value contains a `.double` that is NaN or infinite; JSON has no way to write it.
    public static let nonFiniteNumber = JSONEncodingError(.nonFiniteNumber)

    /// A short description of what could not be encoded.
    public var description: String {
        switch code {
        case .nonFiniteNumber: "JSON encoding error: a number is NaN or infinite"
        }
    }
}

extension JSONValue {
    /// The compact, canonical JSON text of this value.
    ///
    /// Canonical means equal values always produce identical bytes, which is what Action Cable
    /// identifiers need (the server compares them verbatim):
    /// - no whitespace;
    /// - object keys sorted by their UTF-8 bytes (Unicode scalar order), whatever order they were built in;
    /// - strings escape only `"`, `\` and control characters (`\b \f \n \r \t`, others `\u00XX`);
    ///   `/` and non-ASCII characters are written as they are;
    /// - `.int` prints as an integer; `.double` prints the shortest text that parses back to the same
    ///   `Double`, and integral doubles keep a fraction (`2.0`) so they parse back as `.double`.
    ///   Large or tiny doubles use an exponent (`1e+20`, `1e-07`).
    ///
    ///     let params: JSONValue = ["room": 1, "channel": "ChatChannel", "ratio": 2.0]
    ///     print(try params.jsonText())
    ///     // Prints: {"channel":"ChatChannel","ratio":2.0,"room":1}
    ///
    /// - Throws: ``JSONEncodingError/nonFiniteNumber`` when a `.double` is NaN or infinite.
    public func jsonText() throws(JSONEncodingError) -> String {
        var writer = JSONWriter(nonFiniteAsNull: false)
        try writer.write(self)
        return writer.text
    }
}

extension JSONValue: CustomStringConvertible {
    /// The same compact, canonical text as ``jsonText()``, except that a NaN or infinite `.double`
    /// is written as `null` instead of throwing.
    ///
    ///     print(JSONValue.array([1, .double(.infinity)]))
    ///     // Prints: [1,null]
    public var description: String {
        var writer = JSONWriter(nonFiniteAsNull: true)
        // Cannot throw: non-finite numbers become `null`.
        try? writer.write(self)
        return writer.text
    }
}

/// Appends compact JSON to a byte buffer.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private let nonFiniteAsNull: Bool

    init(nonFiniteAsNull: Bool = false) {
        self.nonFiniteAsNull = nonFiniteAsNull
    }

    /// The bytes written so far, as a String (always valid UTF-8).
    var text: String {
        String(decoding: bytes, as: UTF8.self)
    }

    mutating func write(_ value: JSONValue) throws(JSONEncodingError) {
        switch value {
        case .null:
            writeRaw("null")
        case .bool(let flag):
            writeRaw(flag ? "true" : "false")
        case .int(let number):
            bytes.append(contentsOf: String(number).utf8)
        case .double(let number):
            if number.isFinite {
                // `description` is the shortest round-tripping form, e.g. "2.0", "0.1", "1e+20", "5e-324".
                bytes.append(contentsOf: number.description.utf8)
            } else if nonFiniteAsNull {
                writeRaw("null")
            } else {
                throw .nonFiniteNumber
            }
        case .string(let string):
            writeString(string)
        case .array(let array):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in array.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                try write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            let keys = object.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (position, key) in keys.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                if let member = object[key] {
                    try write(member)
                }
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Writes `string` as a quoted JSON string with minimal escaping.
    mutating func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""):
                writeRaw("\\\"")
            case UInt8(ascii: "\\"):
                writeRaw("\\\\")
            case 0x0A:
                writeRaw("\\n")
            case 0x0D:
                writeRaw("\\r")
            case 0x09:
                writeRaw("\\t")
            case 0x08:
                writeRaw("\\b")
            case 0x0C:
                writeRaw("\\f")
            case 0..<0x20:
                writeRaw("\\u00")
                bytes.append(JSONWriter.hexDigit(byte >> 4))
                bytes.append(JSONWriter.hexDigit(byte & 0x0F))
            default:
                bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends ASCII text verbatim (punctuation and literals only).
    mutating func writeRaw(_ ascii: StaticString) {
        ascii.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
