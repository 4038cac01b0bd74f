#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// The `Sec-WebSocket-Accept` value for a key: base64(SHA-1(key + GUID)), RFC 6455 §4.2.2. The client checks
/// the server's answer with it; CableTesting's server sends it.
package enum AcceptKey {
    /// The GUID from RFC 6455 §1.3.
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Computes the accept value.
    ///
    /// ```swift
    /// AcceptKey.compute(forKey: "dGhlIHNhbXBsZSBub25jZQ==")  // "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
    /// ```
    package static func compute(forKey key: String) -> String {
        Data(SHA1.hash(Array((key + guid).utf8))).base64EncodedString()
    }
}
