import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// The encoder and decoder of one ``CableCoding``, made on first use and shared: they are never changed after they
/// are made, so concurrent calls are safe. Made lazily because a client whose app never encodes or decodes a
/// `Codable` type (dictionary params, `JSONValue` messages) should not pay for them: making a `JSONEncoder` and a
/// `JSONDecoder` maps in Foundation's coding machinery, a noticeable share of a small Linux program's memory.
final class CableCoders: Sendable {
    private let coding: CableCoding
    private let made = Locked<(encoder: JSONEncoder, decoder: JSONDecoder)?>(nil)

    /// The decoder of typed messages, straight from their bytes (or a parsed value); cheap, so made at once.
    let messageDecoder: MessageDecoder

    init(_ coding: CableCoding) {
        self.coding = coding
        messageDecoder = MessageDecoder(coding: coding)
    }

    var encoder: JSONEncoder { coders.encoder }
    var decoder: JSONDecoder { coders.decoder }

    private var coders: (encoder: JSONEncoder, decoder: JSONDecoder) {
        made.withLock { made in
            if let made { return made }
            let coders = (encoder: coding.makeEncoder(), decoder: coding.makeDecoder())
            made = coders
            return coders
        }
    }

    /// The coders of `CableCoding()`: what ``JSONValue`` uses when given none.
    static let standard = CableCoders(CableCoding())
}
