/// An error reported by the Action Cable client.
///
/// Compare its ``code`` with the static codes. The description is log-safe: it names options, keys and array
/// indexes, never values. The one text it takes from elsewhere is an `EncodingError`'s debug description
/// (``Code/unencodableData``: Foundation's, or the one your own `encode(to:)` wrote), cut to 200 characters.
///
///     do {
///         _ = try client.subscribe(["room": "lobby"])
///     } catch where error.code == .missingChannel {
///         print(error)
///         // Prints: missing channel: identifier params need a string "channel"
///     }
///
/// New codes are added as new static members, so adding one never breaks existing code.
public struct CableError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong: compare it with the static members, or switch over them with a `default` (new codes
    /// may be added in later versions without breaking a `switch`, as swift-nio's error codes do).
    ///
    ///     switch error.code {
    ///     case .missingChannel: fixParams()
    ///     case .invalidOption: print("bad option:", error.option ?? "?")
    ///     default: print(error)
    ///     }
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        package let name: String

        private init(_ name: String) { self.name = name }

        /// The URL is not `ws`, `wss`, `http` or `https` with a host. The URL itself is not kept: it may hold a
        /// token.
        public static let invalidURL = Code("invalid_url")
        /// An option is out of range; ``CableError/option`` names it.
        public static let invalidOption = Code("invalid_option")
        /// The subscription parameters have no `channel` string.
        public static let missingChannel = Code("missing_channel")
        /// An `Encodable` value could not be encoded as JSON; ``CableError/codingPath`` says where, and the
        /// description why (a NaN or infinite number, or the encoder's own message).
        public static let unencodableData = Code("unencodable_data")
        /// Parameters or `perform` data must encode to a JSON object.
        public static let dataNotObject = Code("data_not_object")

        /// The code's name: `invalid_url`, `invalid_option`, …
        public var description: String { name }
    }

    /// What went wrong.
    public let code: Code
    /// The option that is out of range, for ``Code/invalidOption``.
    public let option: String?
    /// Where encoding failed, for ``Code/unencodableData``: the coding keys and array indexes down to the value
    /// (`members[1].joinedAt`), reduced to safe characters as log lines are; never a value. `nil` when the
    /// failure is at the top level, and for other codes.
    ///
    /// ```swift
    /// do {
    ///     _ = try client.subscribe(Params(channel: "Stats", weights: [1, .nan]))
    /// } catch where error.code == .unencodableData {
    ///     print(error.codingPath ?? "top level")  // Prints: weights[1]
    ///     print(error)  // Prints: unencodable data at weights[1]: JSON cannot express NaN or infinite numbers
    /// }
    /// ```
    public let codingPath: String?
    /// Why encoding failed, for ``Code/unencodableData``; part of the description.
    package let reason: String?
    /// Where in the library the error was created (`#fileID`, `#line`), for our own diagnostics;
    /// equality ignores them.
    package let file: String
    package let line: UInt

    init(
        _ code: Code, option: String? = nil, codingPath: String? = nil, reason: String? = nil,
        file: String = #fileID, line: UInt = #line
    ) {
        self.code = code
        self.option = option
        self.codingPath = codingPath
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// Errors are equal when their codes (and options) are; the file and line, and where and why encoding
    /// failed, are diagnostics.
    public static func == (lhs: CableError, rhs: CableError) -> Bool {
        lhs.code == rhs.code && lhs.option == rhs.option
    }

    /// Hashes the code and option.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(option)
    }

    /// The cable URL is not a usable `ws`/`wss` (or `http`/`https`) URL.
    package static func invalidURL(file: String = #fileID, line: UInt = #line) -> CableError {
        CableError(.invalidURL, file: file, line: line)
    }

    /// A configuration option has an unusable value; `detail` names it.
    package static func invalidOption(_ detail: String, file: String = #fileID, line: UInt = #line) -> CableError {
        CableError(.invalidOption, option: detail, file: file, line: line)
    }

    /// Channel params are not an object with a string `"channel"` member.
    package static func missingChannel(file: String = #fileID, line: UInt = #line) -> CableError {
        CableError(.missingChannel, file: file, line: line)
    }

    /// Params or data contain a number JSON cannot express (NaN or infinity), at `path`.
    package static func unencodableData(
        nonFiniteAt path: [any CodingKey] = [], file: String = #fileID, line: UInt = #line
    ) -> CableError {
        CableError(
            .unencodableData, codingPath: DecodingFailure.keyPath(path), reason: EncodingFailure.nonFinite,
            file: file, line: line)
    }

    /// `error`, thrown while encoding params or data (the member `prefix` of a dictionary form), as an
    /// `unencodableData` error that says where and why (``EncodingFailure``).
    package static func unencodableData(
        _ error: any Error, under prefix: [any CodingKey] = [], file: String = #fileID, line: UInt = #line
    ) -> CableError {
        let (path, reason) = EncodingFailure.describe(error, under: prefix)
        return CableError(.unencodableData, codingPath: path, reason: reason, file: file, line: line)
    }

    /// Data passed to `perform` is not a JSON object.
    package static func dataNotObject(file: String = #fileID, line: UInt = #line) -> CableError {
        CableError(.dataNotObject, file: file, line: line)
    }

    /// A log-safe description of the error.
    public var description: String {
        switch code {
        case .invalidURL: "invalid URL: use ws, wss, http or https with a host"
        case .invalidOption: "invalid option: \(option ?? "?")"
        case .missingChannel: "missing channel: identifier params need a string \"channel\""
        case .unencodableData:
            "unencodable data\(codingPath.map { " at \($0)" } ?? ""): \(reason ?? EncodingFailure.nonFinite)"
        case .dataNotObject: "data is not an object: perform needs a JSON object"
        default: code.name
        }
    }
}
