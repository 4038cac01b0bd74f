/// A JSON document held as a Swift value: what Action Cable frames carry in `message` and `data`.
///
/// Build one with literals, parse one from text with ``init(parsing:)``, or convert an `Encodable`
/// with ``init(encoding:encoder:)``. Values are immutable and `Sendable`, so they can cross threads freely.
///
///     let params: JSONValue = ["channel": "ChatChannel", "room": 1]
///     print(params["room"]?.intValue ?? 0)
///     // Prints: 1
///     print(params)
///     // Prints: {"channel":"ChatChannel","room":1}
///
/// Numbers: JSON has a single number type, so equality and hashing compare numbers by value:
/// `.int(2) == .double(2.0)` is `true`. Pattern matching still tells the two cases apart. A `.double`
/// that holds NaN is never equal to anything (the parser never produces one).
public enum JSONValue: Sendable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int`.
    case int(Int)
    /// Any other number. Always finite when it comes from the parser.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object. Duplicate keys in parsed text keep the last value.
    case object([String: JSONValue])
}

// MARK: - Equality and hashing

extension JSONValue: Hashable {
    /// Structural equality; numbers compare by value, so `1` equals `1.0`.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null):
            return true
        case (.bool(let a), .bool(let b)):
            return a == b
        case (.int(let a), .int(let b)):
            return a == b
        case (.double(let a), .double(let b)):
            return a == b
        case (.int(let a), .double(let b)), (.double(let b), .int(let a)):
            return Int(exactly: b) == a
        case (.string(let a), .string(let b)):
            return a == b
        case (.array(let a), .array(let b)):
            return a == b
        case (.object(let a), .object(let b)):
            return a == b
        default:
            return false
        }
    }

    /// Hashes consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0 as UInt8)
        case .bool(let value):
            hasher.combine(1 as UInt8)
            hasher.combine(value)
        case .int(let value):
            hasher.combine(2 as UInt8)
            hasher.combine(value)
        case .double(let value):
            // Integral doubles hash like the equal `.int`, so `==` and hashing agree.
            hasher.combine(2 as UInt8)
            if let integral = Int(exactly: value) {
                hasher.combine(integral)
            } else {
                hasher.combine(value)
            }
        case .string(let value):
            hasher.combine(3 as UInt8)
            hasher.combine(value)
        case .array(let value):
            hasher.combine(4 as UInt8)
            hasher.combine(value)
        case .object(let value):
            hasher.combine(5 as UInt8)
            hasher.combine(value)
        }
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByNilLiteral {
    /// `nil` is JSON `null`.
    public init(nilLiteral: ()) {
        self = .null
    }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// A Boolean literal is a JSON `true` or `false`.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// An integer literal is a JSON number.
    public init(integerLiteral value: Int) {
        self = .int(value)
    }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// A floating-point literal is a JSON number.
    public init(floatLiteral value: Double) {
        self = .double(value)
    }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// A string literal is a JSON string.
    public init(stringLiteral value: String) {
        self = .string(value)
    }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// An array literal is a JSON array.
    public init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// Builds an object; when a key repeats, the last value wins.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

// MARK: - Accessors

extension JSONValue {
    /// The member named `key` when this is an object that has it, otherwise `nil`.
    ///
    ///     let frame: JSONValue = ["type": "ping", "message": 1_724_150_400]
    ///     print(frame["type"]?.stringValue ?? "-")
    ///     // Prints: ping
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// The element at `index` when this is an array and `index` is in range, otherwise `nil` (never traps).
    ///
    ///     let list: JSONValue = [10, 20]
    ///     print(list[1]?.intValue ?? 0, list[5] == nil)
    ///     // Prints: 20 true
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let array) = self, array.indices.contains(index) else { return nil }
        return array[index]
    }

    /// The string, when this is `.string`.
    public var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    /// The integer, when this is `.int`, or a `.double` that holds an integer exactly representable as `Int`.
    ///
    ///     print(JSONValue.double(3.0).intValue ?? -1, JSONValue.double(3.5).intValue ?? -1)
    ///     // Prints: 3 -1
    public var intValue: Int? {
        switch self {
        case .int(let value):
            return value
        case .double(let value):
            return Int(exactly: value)
        default:
            return nil
        }
    }

    /// The number as a `Double`, when this is `.int` or `.double` (large integers may round).
    public var doubleValue: Double? {
        switch self {
        case .int(let value):
            return Double(value)
        case .double(let value):
            return value
        default:
            return nil
        }
    }

    /// The Boolean, when this is `.bool`. Numbers and strings are not converted.
    public var boolValue: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    /// The elements, when this is `.array`.
    public var arrayValue: [JSONValue]? {
        guard case .array(let value) = self else { return nil }
        return value
    }

    /// The members, when this is `.object`.
    public var objectValue: [String: JSONValue]? {
        guard case .object(let value) = self else { return nil }
        return value
    }

    /// Whether this is `.null`.
    public var isNull: Bool {
        guard case .null = self else { return false }
        return true
    }
}
