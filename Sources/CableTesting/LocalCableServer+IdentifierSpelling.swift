import CableReactive

extension LocalCableServer {
    /// The ways a server that parses and re-encodes identifiers may spell them differently from the client
    /// (see ``Options/identifierSpelling``). Combine them freely.
    public struct IdentifierSpelling: OptionSet, Sendable, Hashable {
        /// The options as bits.
        public let rawValue: Int

        /// Creates a set from its bits.
        public init(rawValue: Int) { self.rawValue = rawValue }

        /// Every non-ASCII character as `\uXXXX`: `é` as `\u00e9`, astral characters (emoji) as a surrogate pair,
        /// U+2028 as `\u2028`.
        public static let escapedNonASCII = IdentifierSpelling(rawValue: 1 << 0)
        /// `/` as `\/`.
        public static let escapedSlash = IdentifierSpelling(rawValue: 1 << 1)
        /// A space after every `:` and `,`.
        public static let spaced = IdentifierSpelling(rawValue: 1 << 2)
        /// Object keys in reverse sorted order (the client sends them sorted).
        public static let reversedKeys = IdentifierSpelling(rawValue: 1 << 3)

        /// `identifier` (a JSON text) written again in this spelling; unchanged when it is not valid JSON. This is
        /// what the server sends back, for tests that feed a ``FakeTransport`` by hand:
        ///
        /// ```swift
        /// let spelled = LocalCableServer.IdentifierSpelling.spaced.respell(#"{"channel":"Chat"}"#)
        /// // {"channel": "Chat"}
        /// ```
        public func respell(_ identifier: String) -> String {
            guard let value = try? JSONValue(parsing: identifier) else { return identifier }
            var text = ""
            write(value, into: &text)
            return text
        }

        private func write(_ value: JSONValue, into text: inout String) {
            switch value {
            case .object(let members):
                let keys = members.keys.sorted()
                text += "{"
                for (index, key) in (contains(.reversedKeys) ? keys.reversed() : keys).enumerated() {
                    if index > 0 { text += contains(.spaced) ? ", " : "," }
                    writeString(key, into: &text)
                    text += contains(.spaced) ? ": " : ":"
                    if let member = members[key] { write(member, into: &text) }
                }
                text += "}"
            case .array(let elements):
                text += "["
                for (index, element) in elements.enumerated() {
                    if index > 0 { text += contains(.spaced) ? ", " : "," }
                    write(element, into: &text)
                }
                text += "]"
            case .string(let string):
                writeString(string, into: &text)
            default:
                text += value.description
            }
        }

        private func writeString(_ string: String, into text: inout String) {
            text += "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": text += "\\\""
                case "\\": text += "\\\\"
                case "/" where contains(.escapedSlash): text += "\\/"
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                case "\t": text += "\\t"
                case _ where scalar.value < 0x20 || (scalar.value > 0x7E && contains(.escapedNonASCII)):
                    for unit in String(scalar).utf16 { text += "\\u" + Self.hex(unit) }
                default:
                    text.unicodeScalars.append(scalar)
                }
            }
            text += "\""
        }

        private static func hex(_ unit: UInt16) -> String {
            let digits = String(unit, radix: 16)
            return String(repeating: "0", count: 4 - digits.count) + digits
        }
    }
}
