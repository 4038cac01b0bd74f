import CableTesting
import Foundation
import Signals
import Testing

@testable import CableReactive

@Suite("CableRequest")
struct CableRequestTests {
    static func request(_ url: String) throws -> CableRequest {
        CableRequest(url: try #require(URL(string: url)))
    }

    /// Values that break naive query building: every reserved character, escapes, spaces, non-ASCII,
    /// controls and the empty string.
    static let hostileValues = [
        "a+b/c=", "a&b", "a=b", "100%", "%2B", "%zz", "two words", "tab\tand\nline", "#frag", "?q", "/", ":@",
        "[::1]", "semi;colon", "comma,", "quote\"'", "é", "日本", "😀", "a\u{0}b", "", " ", "~-._",
    ]

    @Test("setQueryItem round-trips every hostile value, through our decoder and URLComponents'")
    func queryItemRoundTrip() throws {
        for value in Self.hostileValues {
            var request = try Self.request("wss://example.com/cable?user=alice#top")
            request.setQueryItem("token", value)
            #expect(request.queryItem("token") == value, "value \(value.debugDescription)")
            #expect(request.queryItem("user") == "alice")
            let components = try #require(URLComponents(url: request.url, resolvingAgainstBaseURL: false))
            #expect(components.queryItems?.first { $0.name == "token" }?.value == value)
            #expect(components.fragment == "top")
            let query = try #require(components.percentEncodedQuery)
            // Only unreserved characters, escapes and the item separators: a form decoder (Rack) reads the
            // same value, since there is no `+` left to read as a space.
            let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%=&".utf8)
            #expect(query.utf8.allSatisfy(allowed.contains), "query \(query)")
            #expect(query.hasPrefix("user=alice&token="))
        }
    }

    @Test("a base64 token is written with %2B, %2F and %3D, as Rack needs")
    func base64Token() throws {
        var request = try Self.request("ws://h/cable")
        request.setQueryItem("token", "ab+c/d==")
        #expect(request.url.absoluteString == "ws://h/cable?token=ab%2Bc%2Fd%3D%3D")
    }

    @Test("setQueryItem replaces every item of the name in place and keeps the others byte for byte")
    func replaces() throws {
        var request = try Self.request("ws://h/cable?token=old&a=%7e&flag&token=older&b=x+y")
        request.setQueryItem("token", "new")
        #expect(request.url.absoluteString == "ws://h/cable?token=new&a=%7e&flag&b=x+y")
        #expect(request.queryItem("b") == "x y")
        #expect(request.queryItem("flag") == nil)
        request.setQueryItem("a b&c", "1")
        #expect(request.url.absoluteString.hasSuffix("&a%20b%26c=1"))
        #expect(request.queryItem("a b&c") == "1")
    }

    @Test("an item spelled with escapes is matched by its decoded name")
    func matchesDecodedNames() throws {
        var request = try Self.request("ws://h/cable?to%6Ben=old")
        request.setQueryItem("token", "new")
        #expect(request.url.absoluteString == "ws://h/cable?token=new")
    }

    @Test("removeQueryItem drops a query left empty, with its ?")
    func removes() throws {
        var request = try Self.request("ws://h/cable?token=a&x=1")
        request.removeQueryItem("token")
        #expect(request.url.absoluteString == "ws://h/cable?x=1")
        request.removeQueryItem("x")
        #expect(request.url.absoluteString == "ws://h/cable")
        request.setQueryItem("empty", "")
        #expect(request.url.absoluteString == "ws://h/cable?empty=")
        #expect(request.queryItem("empty") == "")
    }

    @Test("IPv6 hosts, ports, user info and paths are kept, and the endpoint still parses")
    func keepsTheRestOfTheURL() throws {
        var request = try Self.request("ws://user:pw@[::1]:3000/a%20b/cable?x=1")
        request.setQueryItem("token", "t+1")
        #expect(request.url.absoluteString == "ws://user:pw@[::1]:3000/a%20b/cable?x=1&token=t%2B1")
        let endpoint = try WebSocketEndpoint(url: request.url)
        #expect(endpoint.host == "::1" && endpoint.port == 3000 && endpoint.isIPLiteral)
        #expect(endpoint.target == "/a%20b/cable?x=1&token=t%2B1")
        #expect(endpoint.hostHeader == "[::1]:3000")
    }

    @Test("malformed escapes in an existing query decode as they are")
    func malformedEscapes() {
        #expect(PercentEncoding.decodeFormComponent("100%") == "100%")
        #expect(PercentEncoding.decodeFormComponent("%4") == "%4")
        #expect(PercentEncoding.decodeFormComponent("%zz%41") == "%zzA")
        #expect(PercentEncoding.decodeFormComponent("%C3%A9+x") == "é x")
    }

    @Test("setHeader replaces every line of the name in any case; addHeader adds lines; removeHeader removes all")
    func headers() throws {
        var request = try Self.request("ws://h/cable")
        request.addHeader("X-Trace", "1")
        request.addHeader("Accept", "a")
        request.addHeader("x-trace", "2")
        #expect(request.values(forHeader: "X-TRACE") == ["1", "2"])
        request.setHeader("X-Trace", "3")
        #expect(request.headers == [.init("X-Trace", "3"), .init("Accept", "a")])
        #expect(request.value(forHeader: "x-trace") == "3")
        request.setHeader("Authorization", "Bearer t")
        #expect(request.headers.last == .init("Authorization", "Bearer t"))
        request.removeHeader("X-TRACE")
        #expect(request.headers == [.init("Accept", "a"), .init("Authorization", "Bearer t")])
        #expect(request.value(forHeader: "X-Trace") == nil)
        #expect(!CableRequest.sameName("X-Trace", "X-Tracf") && !CableRequest.sameName("a", "ab"))
        #expect(!CableRequest.sameName("[", "{"))  // only letters fold: 0x5B and 0x7B differ
    }

    @Test("origin reads and writes the Origin header; nil removes it")
    func origin() throws {
        var request = try Self.request("ws://h/cable")
        #expect(request.origin == nil)
        request.origin = "https://a.example"
        request.origin = "https://b.example"
        #expect(request.headers == [.init("Origin", "https://b.example")])
        request.origin = nil
        #expect(request.headers.isEmpty)
    }

    @Test("addCookie keeps other cookies, replaces its own name, and encodes only what a cookie cannot hold")
    func cookies() throws {
        var request = try Self.request("ws://h/cable")
        request.addHeader("Cookie", "theme=dark;  lang=en")
        request.addCookie("_session", "abc%3D%3D--f00")  // a Rails session cookie, sent back unchanged
        #expect(request.values(forHeader: "Cookie") == ["theme=dark; lang=en; _session=abc%3D%3D--f00"])
        request.addCookie("theme", "light")
        #expect(request.value(forHeader: "cookie") == "lang=en; _session=abc%3D%3D--f00; theme=light")
        request.addCookie("odd=name", "a b;c,\"d\\é")
        #expect(request.value(forHeader: "Cookie")?.hasSuffix("; odd%3Dname=a%20b%3Bc%2C%22d%5C%C3%A9") == true)
        request.addCookie("empty", "")
        #expect(request.value(forHeader: "Cookie")?.hasSuffix("; empty=") == true)
        #expect(request.values(forHeader: "Cookie").count == 1)
    }

    @Test("invalidHeaderNames lists names that are not tokens and values with line breaks or controls")
    func invalidHeaders() throws {
        var request = try Self.request("ws://h/cable")
        request.addHeader("X-Ok", "tab\tis fine, and so is é")
        request.addHeader("X-Split", "a\r\nInjected: yes")
        request.addHeader("Bad Name", "x")
        request.addHeader("", "x")
        request.addHeader("X-Nul", "a\u{0}b")
        request.addHeader("X-Del", "a\u{7F}")
        request.addHeader("X:Colon", "x")
        #expect(request.invalidHeaderNames == ["X-Split", "Bad Name", "", "X-Nul", "X-Del", "X:Colon"])
    }

    @Test("the transport receives onRequest's lines in order, repeated names included")
    func reachesTheTransport() async throws {
        let h = try ClientHarness(onRequest: { request in
            request.addHeader("X-Many", "1")
            request.addHeader("X-Many", "2")
            request.setQueryItem("token", "a+b")
        })
        h.client.connect()
        #expect(await h.eventually { h.fake.last != nil })
        let request = try #require(h.fake.last?.request)
        #expect(request.headers == [.init("X-Many", "1"), .init("X-Many", "2")])
        #expect(request.url.absoluteString == "ws://cable.test:3000/cable?token=a%2Bb")
        h.client.close()
    }

    @Test("a header that cannot be sent fails the attempt (request_failed) and logs neither name nor value")
    func invalidHeaderFailsTheAttempt() async throws {
        let lines = Locked<[String]>([])
        let logger = CableLogger(minimumLevel: .debug) { _, line in lines.withLock { $0.append(line) } }
        let fake = FakeTransport()
        let scheduler = ManualScheduler()
        let client = try ActionCableClient(
            url: ClientHarness.url, transport: fake, scheduler: scheduler, logger: logger,
            onRequest: { request in request.setHeader("X-Secret-Name", "s3cret\r\nInjected: 1") })
        client.connect()
        var failed = false
        for _ in 0..<10_000 where !failed {
            scheduler.flush()
            failed = client.lastDisconnect.value?.kind == .requestFailed
            await Task.yield()
        }
        #expect(failed)
        #expect(fake.connections.isEmpty)
        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.contains("request_invalid_headers") && $0.contains("count=1") })
        #expect(!logged.contains { $0.contains("s3cret") || $0.contains("X-Secret-Name") })
        client.close()
    }

    // MARK: AnyCable's token subprotocol

    @Test("anyCableToken is offered as anycable-token.<token> before the wire protocol's subprotocols, in order")
    func anyCableTokenOrder() throws {
        var request = try Self.request("wss://cable.test/cable")
        let offer = CableWireProtocol.actionCable.offer
        #expect(request.offeredSubprotocols(offer) == offer)
        request.anyCableToken = "eyJhbGciOiJIUzI1NiJ9.eyJleHQiOiJ7fSJ9.c2ln-_"
        #expect(
            request.offeredSubprotocols(offer)
                == ["anycable-token.eyJhbGciOiJIUzI1NiJ9.eyJleHQiOiJ7fSJ9.c2ln-_"] + offer)
        #expect(
            request.offeredSubprotocols(CableWireProtocol.anyCableExtended.offer)
                == ["anycable-token.eyJhbGciOiJIUzI1NiJ9.eyJleHQiOiJ7fSJ9.c2ln-_"]
                + CableWireProtocol.anyCableExtended.offer)
        #expect(request.offeredSubprotocols([]) == ["anycable-token.eyJhbGciOiJIUzI1NiJ9.eyJleHQiOiJ7fSJ9.c2ln-_"])
        request.anyCableToken = nil
        #expect(request.offeredSubprotocols(offer) == offer)
        #expect(CableRequest.isCredentialSubprotocol("anycable-token.x"))
        #expect(!CableRequest.isCredentialSubprotocol("actioncable-v1-json"))
        #expect(!CableRequest.isCredentialSubprotocol("anycable-tokenx"))
    }

    @Test(
        "a token that is not an HTTP token makes Sec-WebSocket-Protocol unsendable; a JWT or any tchar is fine",
        arguments: [
            ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", true),
            ("!#$%&'*+-.^_`|~09AZaz", true),
            ("", false), ("padded==", false), ("a/b", false), ("two words", false), ("a,b", false),
            ("line\r\nInjected: 1", false), ("quote\"", false), ("é", false), ("a;b", false), ("a\tb", false),
        ])
    func anyCableTokenValidation(token: String, valid: Bool) throws {
        var request = try Self.request("wss://cable.test/cable")
        request.addHeader("X-Ok", "1")
        request.anyCableToken = token
        #expect(request.invalidHeaderNames == (valid ? [] : ["Sec-WebSocket-Protocol"]))
    }

    @Test("a request prints its URL without user info or query, header names and no values, and no token")
    func redactedDescription() throws {
        var request = try Self.request("wss://alice:pw-S3CR3T@cable.test:8443/cable?token=q-S3CR3T#frag-S3CR3T")
        request.setHeader("Authorization", "Bearer h-S3CR3T")
        request.addCookie("_session", "c-S3CR3T")
        request.anyCableToken = "t-S3CR3T"
        let expected =
            "CableRequest(url: wss://cable.test:8443/cable?…, headers: [Authorization, Cookie], anyCableToken: <redacted>)"
        #expect(request.description == expected)
        #expect("\(request)" == expected)
        #expect(String(describing: request) == expected)
        #expect(String(reflecting: request) == expected)
        var dumped = ""
        dump(request, to: &dumped)
        #expect(dumped.contains("cable.test:8443") && dumped.contains("Authorization"))
        #expect(dumped.contains("hasAnyCableToken: true"))
        for text in [request.description, dumped, "\([request])", "\(Optional(request) as Any)"] {
            #expect(!text.contains("S3CR3T"), "\(text)")
        }
        let plain = try Self.request("ws://cable.test/cable")
        #expect(plain.description == "CableRequest(url: ws://cable.test/cable, headers: [])")
    }

    @Test("the client offers the token first, fails the attempt for one it cannot send, and never logs it")
    func anyCableTokenThroughTheClient() async throws {
        let lines = Locked<[String]>([])
        let logger = CableLogger(minimumLevel: .debug) { level, line in lines.withLock { $0.append("\(level) \(line)") }
        }
        let h = try ClientHarness(logger: logger, onRequest: { request in request.anyCableToken = "tok-S3CR3T" })
        h.client.connect()
        #expect(await h.eventually { h.fake.last != nil })
        let connection = try #require(h.fake.last)
        #expect(connection.protocols == ["anycable-token.tok-S3CR3T"] + CableWireProtocol.actionCable.offer)
        #expect(connection.request.anyCableToken == "tok-S3CR3T")
        connection.open()
        connection.receive(#"{"type":"welcome"}"#)
        #expect(h.state == .connected)
        h.client.close()

        // A token that cannot be sent fails the attempt before any connection is made.
        let invalid = try ClientHarness(
            logger: logger, onRequest: { request in request.anyCableToken = "padded-S3CR3T==" })
        invalid.client.connect()
        #expect(await invalid.eventually { invalid.client.lastDisconnect.value?.kind == .requestFailed })
        #expect(invalid.fake.connections.isEmpty)
        invalid.client.close()

        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.contains("request_invalid_headers") && $0.contains("count=1") })
        #expect(logged.contains { $0.hasPrefix("INFO connected") })
        #expect(!logged.contains { $0.contains("S3CR3T") || $0.contains("anycable-token") })
    }
}
