import Testing

@testable import CableReactive

@Suite("SHA-256")
struct SHA256Tests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// A deterministic message of `count` bytes, as generated for the expected digests below:
    /// `bytes((i * 7 + 3) & 0xff for i in range(count))` in Python.
    static func message(count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 * 7 + 3) }
    }

    @Test(
        "matches the FIPS 180 test vectors",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrs"
                    + "mnopqrstnopqrstu",
                "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
            ),
        ])
    func vectors(message: String, digest: String) {
        #expect(Self.hex(SHA256.hash(Array(message.utf8))) == digest)
    }

    @Test("hashes a million a's (FIPS 180 long message)")
    func millionAs() {
        let message = [UInt8](repeating: 0x61, count: 1_000_000)
        #expect(Self.hex(SHA256.hash(message)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    // Expected values from Python's hashlib. 55 is the longest message whose padding fits one block, 56 the
    // shortest that needs a second; 119/120 the same for two blocks.
    @Test(
        "pads correctly around block boundaries",
        arguments: [
            (55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"),
            (56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"),
            (63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"),
            (64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"),
            (65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e"),
            (119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e"),
            (120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5"),
            (127, "a8d23e75d936f303d248888d9b165ee543f4cbafcad3c9dd2a79bd84faa11d07"),
            (128, "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba11c08cf6"),
        ])
    func boundaries(count: Int, digest: String) {
        #expect(Self.hex(SHA256.hash(Self.message(count: count))) == digest)
    }

    @Test("agrees with hashlib for every length from 0 to 130")
    func everyLength() {
        // hashlib.sha256(b"".join(hashlib.sha256(message(n)).digest() for n in range(131))).hexdigest()
        let digests = (0...130).flatMap { SHA256.hash(Self.message(count: $0)) }
        #expect(Self.hex(SHA256.hash(digests)) == "b3d31aa6b4f0810cff11dc15fd1017d7ba047ad10e757b0e36ed68897e6d1851")
    }

    @Test("hashes raw buffers: empty without a base address, and slices not at offset 0")
    func rawBuffers() {
        #expect(
            Self.hex(SHA256.hash(UnsafeRawBufferPointer(start: nil, count: 0)))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let framed = [0xEE] + Self.message(count: 64) + [0xEE]
        let digest = framed[1...64].withUnsafeBytes { SHA256.hash($0) }
        #expect(Self.hex(digest) == "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241")
    }
}
