import CableReactive
import Foundation
import Testing

@Suite("WebSocketEndpoint")
struct WebSocketEndpointTests {
    @Test(
        "splits ws and wss URLs",
        arguments: [
            ("ws://example.com/cable", true, "example.com", 80, false, "/cable", "example.com"),
            ("wss://example.com", false, "example.com", 443, false, "/", "example.com"),
            (
                "ws://127.0.0.1:8080/a%20b?x=1&y=%2F", true, "127.0.0.1", 8080, true, "/a%20b?x=1&y=%2F",
                "127.0.0.1:8080"
            ),
            ("wss://[::1]:9443/cable", false, "::1", 9443, true, "/cable", "[::1]:9443"),
            ("wss://host:443/", false, "host", 443, false, "/", "host"),
        ])
    func splits(url: String, plain: Bool, host: String, port: Int, literal: Bool, target: String, hostHeader: String)
        throws
    {
        let endpoint = try WebSocketEndpoint(url: try #require(URL(string: url)))
        #expect(endpoint.isSecure == !plain)
        #expect(endpoint.host == host)
        #expect(Int(endpoint.port) == port)
        #expect(endpoint.isIPLiteral == literal)
        #expect(endpoint.target == target)
        #expect(endpoint.hostHeader == hostHeader)
    }

    @Test(
        "rejects other schemes, missing hosts and bad ports",
        arguments: ["ftp://x/", "ws:///path", "ws://x:0/", "ws://x:70000/"])
    func rejects(url: String) throws {
        #expect(throws: WebSocketError(.invalidURL)) { try WebSocketEndpoint(url: try #require(URL(string: url))) }
    }
}

@Suite("Handshake")
struct HandshakeTests {
    static let nonce: [UInt8] = Array(0..<16)

    @Test("builds the upgrade request with key, version, subprotocols and the caller's header lines in order")
    func buildsRequest() throws {
        let endpoint = try WebSocketEndpoint(url: try #require(URL(string: "ws://example.com:8080/cable?token=abc")))
        let request = HandshakeRequest(
            endpoint: endpoint,
            protocols: ["actioncable-v1-json", "bad protocol"],
            headers: [
                .init("Origin", "https://example.com"), .init("Upgrade", "h2c"), .init("X-Evil", "a\r\nInjected: yes"),
                .init("Cookie", "a=b"), .init("X-Many", "1"), .init("Bad Name", "x"), .init("X-Many", "2"),
            ],
            offerDeflate: true,
            nonce: Self.nonce
        )
        #expect(request.key == "AAECAwQFBgcICQoLDA0ODw==")
        #expect(request.offeredProtocols == ["actioncable-v1-json"])
        let text = String(decoding: request.bytes, as: UTF8.self)
        #expect(
            text == "GET /cable?token=abc HTTP/1.1\r\nHost: example.com:8080\r\nUpgrade: websocket\r\n"
                + "Connection: Upgrade\r\nSec-WebSocket-Key: AAECAwQFBgcICQoLDA0ODw==\r\nSec-WebSocket-Version: 13\r\n"
                + "Sec-WebSocket-Protocol: actioncable-v1-json\r\nSec-WebSocket-Extensions: permessage-deflate\r\n"
                + "Origin: https://example.com\r\nCookie: a=b\r\nX-Many: 1\r\nX-Many: 2\r\n\r\n")
    }

    #if os(Linux)
        @Test("computes Sec-WebSocket-Accept as in RFC 6455 §1.3")
        func acceptKey() {
            #expect(AcceptKey.compute(forKey: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        }
    #endif

    static let accept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

    static func head(_ lines: [String]) -> [UInt8] { Array(lines.joined(separator: "\r\n").utf8) }

    static func validate(_ lines: [String], protocols: [String] = ["chat"], deflate: Bool = false)
        throws(WebSocketError)
        -> HandshakeResult
    {
        try HandshakeValidator.validate(
            head: head(lines), expectedAccept: accept, offeredProtocols: protocols, offeredDeflate: deflate)
    }

    static let good = [
        "HTTP/1.1 101 Switching Protocols", "upgrade: WebSocket", "Connection: keep-alive, Upgrade",
        "Sec-WebSocket-Accept: \(accept)",
    ]

    @Test("accepts a valid 101 with case-insensitive headers and a token-list Connection")
    func acceptsValid() throws {
        #expect(try Self.validate(Self.good) == HandshakeResult(subprotocol: nil, deflate: nil))
        #expect(try Self.validate(Self.good + ["Sec-WebSocket-Protocol: chat"]).subprotocol == "chat")
    }

    @Test(
        "rejects a response that does not match the request",
        arguments: [
            ["HTTP/1.1 101 OK", "Connection: Upgrade", "Sec-WebSocket-Accept: \(accept)"],
            ["HTTP/1.1 101 OK", "Upgrade: websocket", "Sec-WebSocket-Accept: \(accept)"],
            ["HTTP/1.1 101 OK", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Accept: x"],
            ["HTTP/1.1 101 OK", "Upgrade: websocket", "Connection: Upgrade"],
            good + ["Sec-WebSocket-Protocol: other"],
            good + ["Sec-WebSocket-Extensions: permessage-deflate"],
            good + [" folded: header"],
            good + ["no colon"],
            ["HTTP/1.0 101 OK"] + good.dropFirst(),
            ["garbage"],
            ["HTTP/1.1 1O1 OK"],
        ])
    func rejectsMismatch(lines: [String]) {
        #expect(throws: WebSocketError(.invalidHandshake)) { try Self.validate(lines) }
    }

    @Test("an AnyCable token goes first in Sec-WebSocket-Protocol, and the server may not choose it")
    func anyCableTokenSubprotocol() throws {
        var cable = CableRequest(url: try #require(URL(string: "ws://example.com/cable")))
        cable.anyCableToken = "tok.en-1"
        let offered = cable.offeredSubprotocols(["actioncable-v1-json", "actioncable-unsupported"])
        let endpoint = try WebSocketEndpoint(url: cable.url)
        let request = HandshakeRequest(
            endpoint: endpoint, protocols: offered, headers: [], offerDeflate: false, nonce: Self.nonce)
        let text = String(decoding: request.bytes, as: UTF8.self)
        #expect(
            text.contains(
                "\r\nSec-WebSocket-Protocol: anycable-token.tok.en-1, actioncable-v1-json, actioncable-unsupported\r\n")
        )
        #expect(request.offeredProtocols == offered)

        // Choosing one of the Action Cable protocols is fine; echoing the token fails the attempt (RFC 6455 §4.1
        // lets a server choose only a protocol offered to be spoken, and the token is a credential).
        let chosen = try Self.validate(
            Self.good + ["Sec-WebSocket-Protocol: actioncable-v1-json"], protocols: request.offeredProtocols)
        #expect(chosen.subprotocol == "actioncable-v1-json")
        do {
            _ = try Self.validate(
                Self.good + ["Sec-WebSocket-Protocol: anycable-token.tok.en-1"], protocols: request.offeredProtocols)
            Issue.record("the token was accepted as the chosen subprotocol")
        } catch {
            #expect(error.kind == .invalidHandshake)
            #expect(!error.description.contains("tok.en-1"))
        }
    }

    @Test(
        "reports any status other than 101 without headers or body",
        arguments: [200, 301, 302, 400, 401, 403, 404, 500])
    func rejectsStatus(status: Int) {
        #expect(throws: WebSocketError(.upgradeRejected(status: status))) {
            try Self.validate(["HTTP/1.1 \(status) Nope", "Location: https://secret.example/path", "Set-Cookie: s=1"])
        }
    }

    @Test("accepts permessage-deflate parameters we allow, only when offered")
    func deflateNegotiation() throws {
        let response =
            Self.good + [
                "Sec-WebSocket-Extensions: permessage-deflate; server_max_window_bits=10; client_no_context_takeover"
            ]
        #expect(try Self.validate(response, deflate: true).deflate == DeflateParameters(clientNoContextTakeover: true))
        #expect(throws: WebSocketError(.invalidHandshake)) { try Self.validate(response, deflate: false) }
        for bad in [
            "permessage-deflate; client_max_window_bits=10", "x-webkit-deflate-frame",
            "permessage-deflate; server_max_window_bits=16",
            "permessage-deflate, permessage-deflate",
            "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
        ] {
            #expect(throws: WebSocketError(.invalidHandshake)) { try DeflateParameters.parse(response: bad) }
        }
    }

    @Test("collects the response head across reads and hands back the bytes after it", arguments: Feeding.all)
    func readsHead(feeding: Feeding) throws {
        let bytes = Array("HTTP/1.1 101 OK\r\nA: b\r\n\r\n".utf8) + [0x81, 0x01, 0x61]
        var reader = HandshakeResponseReader()
        var result: (head: [UInt8], rest: ArraySlice<UInt8>)?
        var after: [UInt8] = []
        for chunk in feeding.split(bytes) {
            if result != nil {
                after += chunk
            } else {
                result = try reader.append(chunk[...])
            }
        }
        let found = try #require(result)
        #expect(String(decoding: found.head, as: UTF8.self) == "HTTP/1.1 101 OK\r\nA: b")
        #expect(Array(found.rest) + after == [0x81, 0x01, 0x61])
    }

    @Test("refuses a response head larger than the limit")
    func limitsHead() throws {
        var reader = HandshakeResponseReader(maxHeadSize: 64)
        #expect(try reader.append(ArraySlice(repeating: 0x61, count: 60)) == nil)
        #expect(throws: WebSocketError(.invalidHandshake)) { try reader.append(ArraySlice(repeating: 0x61, count: 10)) }
    }
}
