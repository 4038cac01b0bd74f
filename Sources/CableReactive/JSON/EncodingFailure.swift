/// What an error may say about a value that did not encode: where (a key path of names and indexes, as
/// ``DecodingFailure`` renders it) and why, never the value.
///
/// - A NaN or infinite number, from `JSONEncoder` or in a ``JSONValue``: JSON cannot express it.
/// - Any other `EncodingError` (a custom `encode(to:)` that throws `invalidValue`, or a date with no ISO 8601
///   form): its debug description, which the code that threw wrote, cut to ``maxReasonLength`` characters.
/// - Any other error: its type name only, since its description may carry the value.
enum EncodingFailure {
    static let maxReasonLength = 200
    static let nonFinite = "JSON cannot express NaN or infinite numbers"

    /// Where `error` happened, below `prefix` (the member of a dictionary form), and why.
    static func describe(_ error: any Error, under prefix: [any CodingKey] = []) -> (keyPath: String?, reason: String) {
        switch error {
        case let error as EncodingError:
            switch error {
            case .invalidValue(let value, let context):
                let path = DecodingFailure.keyPath(prefix + context.codingPath)
                if isNonFinite(value) { return (path, nonFinite) }
                let text = context.debugDescription
                let cut = text.count > maxReasonLength ? text.prefix(maxReasonLength) + "…" : Substring(text)
                return (path, "invalid value: \(cut)")
            @unknown default:
                return (DecodingFailure.keyPath(prefix), "the encoder failed")
            }
        case is JSONEncodingError:
            return (DecodingFailure.keyPath(prefix), nonFinite)
        default:
            return (DecodingFailure.keyPath(prefix), "the encoder threw \(type(of: error))")
        }
    }

    private static func isNonFinite(_ value: Any) -> Bool {
        if let number = value as? Double { return !number.isFinite }
        if let number = value as? Float { return !number.isFinite }
        return false
    }
}

/// A dictionary member's name or an array index, in a key path.
struct MemberKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }

    /// A key that names itself `stringValue` and carries `intValue` (an array index that prints as `Index 2`).
    init(stringValue: String, intValue: Int?) {
        self.stringValue = stringValue
        self.intValue = intValue
    }
}

extension JSONValue {
    /// The path to the first NaN or infinite number (object members in key order), nil if there is none: where
    /// ``jsonText()`` fails, for the error that reports it. Run only after it failed.
    var nonFinitePath: [any CodingKey]? {
        switch self {
        case .double(let number):
            return number.isFinite ? nil : []
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let path = element.nonFinitePath { return [MemberKey(intValue: index)] + path }
            }
            return nil
        case .object(let members):
            for key in members.keys.sorted() {
                if let path = members[key]?.nonFinitePath { return [MemberKey(stringValue: key)] + path }
            }
            return nil
        case .null, .bool, .int, .string:
            return nil
        }
    }
}
