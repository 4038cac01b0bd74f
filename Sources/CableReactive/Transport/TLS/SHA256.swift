/// SHA-256 (FIPS 180-4), in pure Swift, for certificate pins (``CertificatePin``).
///
/// A pin is the SHA-256 of a certificate's SubjectPublicKeyInfo. Both transports check pins (OpenSSL on
/// Linux, the Security framework on Apple platforms) with this one implementation, which needs neither
/// OpenSSL nor CryptoKit and is tested everywhere. Hashing a few hundred bytes per certificate needs no speed.
///
/// ```swift
/// SHA256.hash(Array("abc".utf8))  // ba7816bf 8f01cfea 414140de 5dae2223 b00361a3 96177a9c b410ff61 f20015ad
/// ```
package enum SHA256 {
    /// The 32-byte digest of `message`.
    package static func hash(_ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { hash($0) }
    }

    /// The 32-byte digest of the bytes in `message`.
    package static func hash(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        var h: [UInt32] = [
            0x6A09_E667, 0xBB67_AE85, 0x3C6E_F372, 0xA54F_F53A, 0x510E_527F, 0x9B05_688C, 0x1F83_D9AB, 0x5BE0_CD19,
        ]
        var w = [UInt32](repeating: 0, count: 64)
        let wholeBlocks = message.count / 64
        for block in 0..<wholeBlocks {
            compress(&h, block: UnsafeRawBufferPointer(rebasing: message[block * 64..<(block + 1) * 64]), w: &w)
        }
        // The rest, then the padding: a 1 bit, zeros up to 56 mod 64 bytes, the message length in bits
        // (big-endian). One or two more blocks.
        var tail = Array(message[(wholeBlocks * 64)...])
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        let bitLength = UInt64(message.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) {
            tail.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        tail.withUnsafeBytes { tail in
            for start in stride(from: 0, to: tail.count, by: 64) {
                compress(&h, block: UnsafeRawBufferPointer(rebasing: tail[start..<start + 64]), w: &w)
            }
        }
        return h.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> UInt32(24 - $0 * 8)) } }
    }

    /// Processes one 64-byte block into the hash value `h`; `w` is the message schedule's storage (64 words).
    private static func compress(_ h: inout [UInt32], block: UnsafeRawBufferPointer, w: inout [UInt32]) {
        for t in 0..<16 {
            let i = t * 4
            w[t] =
                UInt32(block[i]) << 24 | UInt32(block[i + 1]) << 16 | UInt32(block[i + 2]) << 8 | UInt32(block[i + 3])
        }
        for t in 16..<64 {
            let s0 = rotateRight(w[t - 15], 7) ^ rotateRight(w[t - 15], 18) ^ (w[t - 15] >> 3)
            let s1 = rotateRight(w[t - 2], 17) ^ rotateRight(w[t - 2], 19) ^ (w[t - 2] >> 10)
            w[t] = w[t - 16] &+ s0 &+ w[t - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
        for t in 0..<64 {
            let sigma1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25)
            let choose = (e & f) ^ (~e & g)
            let temp1 = hh &+ sigma1 &+ choose &+ k[t] &+ w[t]
            let sigma0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22)
            let majority = (a & b) ^ (a & c) ^ (b & c)
            let temp2 = sigma0 &+ majority
            (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ temp1, c, b, a, temp1 &+ temp2)
        }
        h[0] &+= a
        h[1] &+= b
        h[2] &+= c
        h[3] &+= d
        h[4] &+= e
        h[5] &+= f
        h[6] &+= g
        h[7] &+= hh
    }

    /// The round constants: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
    private static let k: [UInt32] = [
        0x428A_2F98, 0x7137_4491, 0xB5C0_FBCF, 0xE9B5_DBA5, 0x3956_C25B, 0x59F1_11F1, 0x923F_82A4, 0xAB1C_5ED5,
        0xD807_AA98, 0x1283_5B01, 0x2431_85BE, 0x550C_7DC3, 0x72BE_5D74, 0x80DE_B1FE, 0x9BDC_06A7, 0xC19B_F174,
        0xE49B_69C1, 0xEFBE_4786, 0x0FC1_9DC6, 0x240C_A1CC, 0x2DE9_2C6F, 0x4A74_84AA, 0x5CB0_A9DC, 0x76F9_88DA,
        0x983E_5152, 0xA831_C66D, 0xB003_27C8, 0xBF59_7FC7, 0xC6E0_0BF3, 0xD5A7_9147, 0x06CA_6351, 0x1429_2967,
        0x27B7_0A85, 0x2E1B_2138, 0x4D2C_6DFC, 0x5338_0D13, 0x650A_7354, 0x766A_0ABB, 0x81C2_C92E, 0x9272_2C85,
        0xA2BF_E8A1, 0xA81A_664B, 0xC24B_8B70, 0xC76C_51A3, 0xD192_E819, 0xD699_0624, 0xF40E_3585, 0x106A_A070,
        0x19A4_C116, 0x1E37_6C08, 0x2748_774C, 0x34B0_BCB5, 0x391C_0CB3, 0x4ED8_AA4A, 0x5B9C_CA4F, 0x682E_6FF3,
        0x748F_82EE, 0x78A5_636F, 0x84C8_7814, 0x8CC7_0208, 0x90BE_FFFA, 0xA450_6CEB, 0xBEF9_A3F7, 0xC671_78F2,
    ]

    /// `value` rotated right by `count` bits (FIPS 180-4's ROTR).
    @inline(__always)
    private static func rotateRight(_ value: UInt32, _ count: UInt32) -> UInt32 {
        value >> count | value << (32 - count)
    }
}
