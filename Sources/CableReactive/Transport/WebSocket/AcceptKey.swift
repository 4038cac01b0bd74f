#if canImport(COpenSSL)
    import COpenSSL
    import Foundation

    /// The `Sec-WebSocket-Accept` value for a key: base64(SHA-1(key + GUID)), RFC 6455 §4.2.2.
    package enum AcceptKey {
        /// The GUID from RFC 6455 §1.3.
        static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

        /// Computes the accept value with OpenSSL's SHA-1.
        ///
        /// ```swift
        /// AcceptKey.compute(forKey: "dGhlIHNhbXBsZSBub25jZQ==")  // "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        /// ```
        package static func compute(forKey key: String) -> String {
            let input = Array((key + guid).utf8)
            var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
            var length: UInt32 = 0
            _ = input.withUnsafeBytes { inBytes in
                digest.withUnsafeMutableBufferPointer { out in
                    EVP_Digest(inBytes.baseAddress, inBytes.count, out.baseAddress, &length, EVP_sha1(), nil)
                }
            }
            return Data(digest).base64EncodedString()
        }
    }
#endif
