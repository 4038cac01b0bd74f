#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// How a client turns your `Codable` types into JSON and back: the strategies of the `JSONEncoder` and
/// `JSONDecoder` it makes once, from ``CableOptions/coding``, and uses for every typed and dictionary form:
/// ``ActionCableClient/subscribe(_:)-(Encodable)`` and its dictionary form,
/// ``ChannelSubscription/perform(_:_:encoder:)`` and its dictionary form, and
/// ``ChannelSubscription/messages(as:decoder:)``. An `encoder:` or `decoder:` passed to one call replaces the
/// client's for that call. ``JSONValue/init(encoding:encoder:)`` and ``JSONValue/decode(_:decoder:)`` use the
/// default `CableCoding()` when given none.
///
/// The default suits Rails: dates as ISO 8601 in UTC with milliseconds (`2026-12-02T00:52:17.123Z`, what
/// `Time#as_json` writes and `Time.iso8601` reads), keys as your types declare them.
///
/// ```swift
/// struct Speak: Encodable { let text: String; let sentAt: Date }
/// var options = CableOptions()
/// options.coding.keys = .snakeCase  // sentAt goes out as sent_at, and sent_at decodes into sentAt
/// let client = try ActionCableClient(url: url, options: options)
/// let room = try client.subscribe(["channel": "ChatChannel"])
/// room.perform("speak", Speak(text: "hi", sentAt: Date()))
/// // data: {"action":"speak","sent_at":"2026-12-02T00:52:17.123Z","text":"hi"}
/// ```
///
/// Params with no dates (and keys as declared) give the same identifier whatever the coding: strings,
/// numbers, Booleans and nested values encode the same under every strategy.
public struct CableCoding: Sendable, Hashable {
    /// How a `Date` is written, and read back.
    ///
    /// | strategy | writes | reads |
    /// |---|---|---|
    /// | ``iso8601`` (the default) | `"2026-12-02T00:52:17.123Z"` | any ISO 8601 date or date-time, see below |
    /// | ``iso8601WithoutFraction`` | `"2026-12-02T00:52:17Z"` | the same as ``iso8601`` |
    /// | ``secondsSince1970`` | `1796172737.123` | a number of seconds |
    /// | ``millisecondsSince1970`` | `1796172737123` | a number of milliseconds |
    /// | ``deferredToDate`` | `817865537.123` | a number of seconds since 2001-01-01 |
    ///
    /// The ISO 8601 strategies write UTC with a `Z`, truncating to the millisecond (or the second) as Ruby
    /// does. They read liberally: a fraction of any length or none, `Z`, `+hh:mm`, `+hhmm` or `+hh`, `T` or a
    /// space between date and time, a date-time with no offset (read as UTC) and a date alone (`2026-12-02`,
    /// Rails' `Date#as_json`: midnight UTC). A string that is not such a date throws a `DecodingError`
    /// (`dataCorrupted`, with the key path of the date); a date outside the years 0000–9999 does not encode
    /// (an `EncodingError`, reported as ``CableError/Code/unencodableData``).
    ///
    /// ``deferredToDate`` is Foundation's own default, seconds since 2001, which no Rails or JavaScript code
    /// reads as a date; it is here for a server that was built around it.
    public struct DateStrategy: Sendable, Hashable, CustomStringConvertible {
        /// The strategies, for ``MessageDecoder``.
        enum Kind: Hashable, Sendable {
            case iso8601(fractionDigits: Int)
            case secondsSince1970
            case millisecondsSince1970
            case deferredToDate
        }

        /// Which strategy this is; ``MessageDecoder`` reads it.
        let kind: Kind

        private init(_ kind: Kind) { self.kind = kind }

        /// ISO 8601 in UTC with milliseconds, `2026-12-02T00:52:17.123Z`: what Rails writes. The default.
        public static let iso8601 = DateStrategy(.iso8601(fractionDigits: 3))
        /// ISO 8601 in UTC with whole seconds, `2026-12-02T00:52:17Z`; reads as ``iso8601`` does.
        public static let iso8601WithoutFraction = DateStrategy(.iso8601(fractionDigits: 0))
        /// A number of seconds since 1970-01-01 UTC (Unix time), with a fraction.
        public static let secondsSince1970 = DateStrategy(.secondsSince1970)
        /// A number of milliseconds since 1970-01-01 UTC (JavaScript's `Date.now()`).
        public static let millisecondsSince1970 = DateStrategy(.millisecondsSince1970)
        /// Foundation's default: `Date`'s own encoding, seconds since 2001-01-01 UTC.
        public static let deferredToDate = DateStrategy(.deferredToDate)

        /// The strategy's name: `iso8601`, `iso8601WithoutFraction`, `secondsSince1970`, …
        public var description: String {
            switch kind {
            case .iso8601(let digits): digits == 0 ? "iso8601WithoutFraction" : "iso8601"
            case .secondsSince1970: "secondsSince1970"
            case .millisecondsSince1970: "millisecondsSince1970"
            case .deferredToDate: "deferredToDate"
            }
        }

        var encoding: JSONEncoder.DateEncodingStrategy {
            switch kind {
            case .iso8601(let digits):
                .custom { date, encoder in
                    guard let text = ISO8601Date.string(from: date, fractionDigits: digits) else {
                        throw EncodingError.invalidValue(
                            date,
                            EncodingError.Context(
                                codingPath: encoder.codingPath,
                                debugDescription: "a date outside the years 0000-9999 has no ISO 8601 form"))
                    }
                    var container = encoder.singleValueContainer()
                    try container.encode(text)
                }
            case .secondsSince1970: .secondsSince1970
            case .millisecondsSince1970: .millisecondsSince1970
            case .deferredToDate: .deferredToDate
            }
        }

        var decoding: JSONDecoder.DateDecodingStrategy {
            switch kind {
            case .iso8601:
                .custom { decoder in
                    let container = try decoder.singleValueContainer()
                    guard let date = ISO8601Date.date(from: try container.decode(String.self)) else {
                        throw DecodingError.dataCorruptedError(
                            in: container,
                            debugDescription:
                                "Expected an ISO 8601 date, such as 2026-12-02T00:52:17.123Z or 2026-12-02")
                    }
                    return date
                }
            case .secondsSince1970: .secondsSince1970
            case .millisecondsSince1970: .millisecondsSince1970
            case .deferredToDate: .deferredToDate
            }
        }
    }

    /// How the coding keys of your types are spelled in JSON.
    ///
    /// ``snakeCase`` is Foundation's `convertToSnakeCase` and `convertFromSnakeCase`: `replyTo` is written as
    /// `reply_to`, and `reply_to` is read into `replyTo`. As in Foundation, it applies to every keyed
    /// container, the `String` keys of a dictionary inside your type included; the top-level keys of the
    /// dictionary forms (`["room_id": id]`) and the keys of a ``JSONValue`` are sent as you wrote them.
    public struct KeyStrategy: Sendable, Hashable, CustomStringConvertible {
        /// Whether keys are snake_case in JSON; ``MessageDecoder`` reads it.
        let snakeCased: Bool

        private init(snakeCased: Bool) { self.snakeCased = snakeCased }

        /// Keys as your types declare them (their `CodingKeys`). The default.
        public static let asDeclared = KeyStrategy(snakeCased: false)
        /// `camelCase` keys as `snake_case` in JSON, both ways.
        public static let snakeCase = KeyStrategy(snakeCased: true)

        /// `asDeclared` or `snakeCase`.
        public var description: String { snakeCased ? "snakeCase" : "asDeclared" }

        var encoding: JSONEncoder.KeyEncodingStrategy { snakeCased ? .convertToSnakeCase : .useDefaultKeys }
        var decoding: JSONDecoder.KeyDecodingStrategy { snakeCased ? .convertFromSnakeCase : .useDefaultKeys }
    }

    /// How dates are written and read; ``DateStrategy/iso8601`` if not set.
    public var dates: DateStrategy
    /// How coding keys are spelled; ``KeyStrategy/asDeclared`` if not set.
    public var keys: KeyStrategy

    /// A coding; `CableCoding()` is the default, ISO 8601 dates with milliseconds and keys as declared.
    ///
    /// ```swift
    /// let coding = CableCoding(dates: .millisecondsSince1970, keys: .snakeCase)
    /// ```
    public init(dates: DateStrategy = .iso8601, keys: KeyStrategy = .asDeclared) {
        self.dates = dates
        self.keys = keys
    }

    /// A new `JSONEncoder` with these strategies, for your own use (a REST call that should agree with the
    /// cable); the client makes its own. Data is Foundation's default, Base64.
    ///
    /// ```swift
    /// let body = try CableCoding().makeEncoder().encode(["at": Date(timeIntervalSince1970: 0)])
    /// // {"at":"1970-01-01T00:00:00.000Z"}
    /// ```
    public func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = dates.encoding
        encoder.keyEncodingStrategy = keys.encoding
        return encoder
    }

    /// A new `JSONDecoder` with these strategies, for your own use; the client makes its own.
    ///
    /// ```swift
    /// let date = try CableCoding().makeDecoder().decode([Date].self, from: Data(#"["2026-12-02"]"#.utf8))
    /// ```
    public func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = dates.decoding
        decoder.keyDecodingStrategy = keys.decoding
        return decoder
    }
}
