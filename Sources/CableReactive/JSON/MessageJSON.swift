#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// A data frame's `message` on its way to the consumers: parsed, or the bytes the server sent.
///
/// The client parses a message into a ``JSONValue`` on the I/O thread when its subscription has a consumer that
/// reads ``JSONValue``s (``ChannelSubscription/messages``, positions, presence); when every consumer is typed
/// (``ChannelSubscription/messages(as:decoder:)``, ``CableChannel``), no tree is built: the frame parser checks
/// the message and hands on its bytes, and each typed consumer decodes its type from them in one parse
/// (``MessageDecoder``). Either form serves either consumer, so a consumer that starts while messages of the
/// other form are buffered reads them too: a `.text` message is parsed for an untyped one, a `.value` decoded
/// for a typed one.
@usableFromInline
package enum MessageJSON: Sendable, Equatable {
    /// The parsed message.
    case value(JSONValue)
    /// The message's JSON text, as the server wrote it; valid UTF-8 and one JSON value (the frame parser
    /// checked both).
    case text([UInt8])

    /// Two messages are equal when their values are, whatever their forms.
    @usableFromInline
    package static func == (lhs: MessageJSON, rhs: MessageJSON) -> Bool {
        switch (lhs, rhs) {
        case (.text(let a), .text(let b)) where a == b: true
        default: lhs.value == rhs.value
        }
    }

    /// The message as a value, parsed now if it is `.text`. Never nil for a message the frame parser made
    /// (it checked the text); nil for text that is not JSON.
    package var value: JSONValue? {
        switch self {
        case .value(let value): value
        case .text(let utf8): try? JSONValue(parsingUTF8: utf8)
        }
    }

    /// The message decoded as `type` by `decoder`: from the text when there is one, with no value in between.
    ///
    /// - Throws: `DecodingError` (or ``JSONParseError`` for text that is not JSON).
    func decode<T: Decodable>(_ type: T.Type, with decoder: MessageDecoder) throws -> T {
        switch self {
        case .value(let value): try decoder.decode(type, from: value)
        case .text(let utf8): try decoder.decode(type, fromJSON: utf8)
        }
    }

    /// The message decoded as `type` by an app's `JSONDecoder`, from the text (written from the value for
    /// `.value`).
    ///
    /// - Throws: what `decoder` throws; ``JSONEncodingError`` for a value that holds a NaN or infinite number.
    func decode<T: Decodable>(_ type: T.Type, with decoder: JSONDecoder) throws -> T {
        switch self {
        case .value(let value): try decoder.decode(type, from: Data(value.jsonText().utf8))
        case .text(let utf8): try decoder.decode(type, from: Data(utf8))
        }
    }
}
