import CableReactive
import Foundation
import Testing

@testable import CableTesting

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
        #expect(WebSocketAccept.value(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    #if os(Linux)
        @Test("agrees with the client's OpenSSL accept key for keys of every padding length")
        func agreesWithOpenSSL() {
            var random = SystemRandomNumberGenerator()
            for length in 0..<200 {
                let key = String(
                    (0..<length).map { _ in Character(UnicodeScalar(UInt8.random(in: 0x21...0x7E, using: &random))) })
                #expect(WebSocketAccept.value(forKey: key) == AcceptKey.compute(forKey: key), "length \(length)")
            }
        }
    #endif
}

@Suite("HTTP request head")
struct HTTPRequestHeadTests {
    static func parse(_ text: String) -> HTTPRequestHead? { HTTPRequestHead.parse(Array(text.utf8)[...]) }

    @Test("parses the request line and fields, trimming values and keeping names as sent")
    func parses() throws {
        let head = try #require(
            Self.parse("GET /cable?token=a%20b HTTP/1.1\r\nHost: x\r\nX-Token:\t tok \r\nx-token: two"))
        #expect(head.method == "GET")
        #expect(head.target == "/cable?token=a%20b")
        #expect(head.headers.map(\.name) == ["Host", "X-Token", "x-token"])
        #expect(head.header("X-TOKEN") == "tok, two")
    }

    @Test(
        "rejects malformed heads",
        arguments: [
            "", "GET /cable HTTP/1.0", "GET /cable", "get /cable HTTP/1.1", "GET cable HTTP/1.1",
            "GET /ca ble HTTP/1.1", "GET /cable HTTP/1.1\r\nNo colon", "GET /cable HTTP/1.1\r\n folded: x",
            "GET /cable HTTP/1.1\r\nBad Name: x", "GET /cable HTTP/1.1\r\n: empty",
        ])
    func rejects(text: String) {
        #expect(Self.parse(text) == nil)
    }

    @Test("recognizes upgrades by token lists and checks the key")
    func upgrade() throws {
        let head = try #require(
            Self.parse(
                "GET / HTTP/1.1\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\n"
                    + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="))
        #expect(head.isWebSocketUpgrade)
        #expect(head.validKey == "dGhlIHNhbXBsZSBub25jZQ==")
        let short = try #require(
            Self.parse("GET / HTTP/1.1\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: c2hvcnQ="))
        #expect(!short.isWebSocketUpgrade)
        #expect(short.validKey == nil)
    }

    @Test("reads query values, percent-decoded")
    func query() {
        let request = LocalCableServer.Request(
            connection: .init(1), method: "GET", target: "/c?token=a%20b&x&y=1&token=2", path: "/c",
            query: "token=a%20b&x&y=1&token=2", headers: [], status: 101)
        #expect(request.queryValue("token") == "a b")
        #expect(request.queryValue("x") == "")
        #expect(request.queryValue("z") == nil)
    }
}
