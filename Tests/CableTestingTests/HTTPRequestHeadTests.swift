import CableReactive
import Foundation
import Testing

@testable import CableTesting

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
