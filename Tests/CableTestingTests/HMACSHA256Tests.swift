import CableReactive
import Testing

@testable import CableTesting

/// The HMAC-SHA256 behind AnyCable's signed stream names, against RFC 4231, and the FIPS 180-4 examples of the
/// SHA-256 it builds on (CableReactive's, tested in full in CableReactiveTests' SHA256Tests).
@Suite("HMAC-SHA256 for signed stream names")
struct HMACSHA256Tests {
    static func sha(_ text: String) -> String { HMACSHA256.hex(SHA256.hash(Array(text.utf8))) }

    static func mac(_ key: [UInt8], _ message: String) -> String {
        HMACSHA256.hex(HMACSHA256.mac(key: key, message: Array(message.utf8)))
    }

    @Test("the SHA-256 underneath: FIPS 180-4's one block, empty and two-block (56 bytes) examples")
    func fips() {
        #expect(Self.sha("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Self.sha("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let twoBlocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        #expect(twoBlocks.utf8.count == 56)
        #expect(Self.sha(twoBlocks) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("RFC 4231 test cases 1 and 2")
    func rfc4231() {
        #expect(
            Self.mac([UInt8](repeating: 0x0b, count: 20), "Hi There")
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            Self.mac(Array("Jefe".utf8), "what do ya want for nothing?")
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("a key longer than a block is hashed first (RFC 4231 test case 6, a 131-byte key)")
    func longKey() {
        #expect(
            Self.mac([UInt8](repeating: 0xaa, count: 131), "Test Using Larger Than Block-Size Key - Hash Key First")
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        // A key of exactly one block is used as it is (checked against Python's hmac).
        #expect(
            Self.mac([UInt8](repeating: 0xaa, count: 64), "x")
                == "ce3c639dcb9d8baae5d44c3b8b5e233faab4d1860e07489af5c84f213998bd79")
    }

    @Test("constant-time comparison: equal, different, different lengths")
    func compare() {
        #expect(HMACSHA256.constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!HMACSHA256.constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!HMACSHA256.constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(HMACSHA256.constantTimeEqual([], []))
    }
}
