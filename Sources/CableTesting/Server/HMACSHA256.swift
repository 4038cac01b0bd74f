import CableReactive

/// HMAC-SHA256 (RFC 2104 over FIPS 180-4), for AnyCable's signed stream names only
/// (``LocalCableServer/signedStreamName(_:secret:)``), on the package's own SHA-256 (the one certificate pins
/// use), so the test server needs neither OpenSSL nor CryptoKit. A stream name is a few dozen bytes: speed does
/// not matter.
///
/// ```swift
/// HMACSHA256.hex(HMACSHA256.mac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
/// // 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843 (RFC 4231 test case 2)
/// ```
enum HMACSHA256 {
    static let blockSize = 64

    /// The 32-byte MAC of `message` under `key`; a key longer than a block is hashed first.
    static func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var block = key.count > blockSize ? SHA256.hash(key) : key
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        let inner = SHA256.hash(block.map { $0 ^ 0x36 } + message)
        return SHA256.hash(block.map { $0 ^ 0x5c } + inner)
    }

    /// Lowercase hexadecimal, two digits a byte.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `a` and `b` hold the same bytes, in time that depends only on their lengths.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
