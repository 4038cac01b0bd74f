import Foundation
import Testing

@testable import CableReactive

#if os(Linux) && canImport(CCableReactiveOpenSSL)
    import CCableReactiveOpenSSL
#endif

@Suite("SHA-1 and the accept key")
struct SHA1Tests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test(
        "matches the FIPS 180 test vectors",
        arguments: [
            ("", "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
            ("abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "84983e441c3bd26ebaae4aa1f95129e5e54670f1"
            ),
            (
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                    + "mnopqrstnopqrstu",
                "a49b2446a02c645bf419f995b67091253a04a259"
            ),
            ("The quick brown fox jumps over the lazy dog", "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12"),
        ])
    func vectors(message: String, digest: String) {
        #expect(Self.hex(SHA1.hash(Array(message.utf8))) == digest)
    }

    @Test("hashes a million a's (FIPS 180 long message)")
    func millionAs() {
        let message = [UInt8](repeating: 0x61, count: 1_000_000)
        #expect(Self.hex(SHA1.hash(message)) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
    }

    @Test("computes Sec-WebSocket-Accept for RFC 6455's sample key")
    func rfcSample() {
        // RFC 6455 §1.3 (and §4.2.2): key "dGhlIHNhbXBsZSBub25jZQ==" → "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".
        #expect(AcceptKey.compute(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    #if os(Linux) && canImport(CCableReactiveOpenSSL)
        @Test("agrees with OpenSSL's SHA-1 for every padding length and a few blocks")
        func agreesWithOpenSSL() {
            var random = SystemRandomNumberGenerator()
            for length in 0..<300 {
                let message = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
                var digest = [UInt8](repeating: 0, count: Int(SHA_DIGEST_LENGTH))
                var size: UInt32 = 0
                message.withUnsafeBytes { bytes in
                    digest.withUnsafeMutableBufferPointer { out in
                        _ = EVP_Digest(bytes.baseAddress, bytes.count, out.baseAddress, &size, EVP_sha1(), nil)
                    }
                }
                #expect(SHA1.hash(message) == digest, "length \(length)")
            }
        }
    #endif
}
