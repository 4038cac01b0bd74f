#if os(Linux) && canImport(Glibc)
    @testable import CableReactive
    import Foundation
    import Testing

    @Suite("HTTP proxy: settings, no_proxy rules and the CONNECT exchange")
    struct HTTPProxyTests {
        private typealias HTTPProxy = SocketTransport.HTTPProxy

        private func endpoint(_ url: String) throws -> WebSocketEndpoint {
            try WebSocketEndpoint(url: #require(URL(string: url)))
        }

        private func route(_ url: String, _ environment: [String: String]) throws -> HTTPProxy? {
            try SocketTransport.Proxy.environment.route(for: endpoint(url), environment: environment)
        }

        // MARK: Proxy URLs

        @Test(
            "proxy URLs as http_proxy holds them: scheme optional, port 1080 by default, credentials percent-decoded",
            arguments: [
                ("http://proxy.corp:3128", "proxy.corp", 3128, nil, nil),
                ("proxy.corp:3128", "proxy.corp", 3128, nil, nil),
                ("HTTP://proxy.corp", "proxy.corp", 1080, nil, nil),
                ("http://proxy.corp:8080/", "proxy.corp", 8080, nil, nil),
                ("http://alice:s3cr%40t@proxy.corp:3128", "proxy.corp", 3128, "alice", "s3cr@t"),
                ("http://al%3Aice@proxy.corp:3128", "proxy.corp", 3128, "al:ice", nil),
                ("http://bob@10.0.0.1:3128", "10.0.0.1", 3128, "bob", nil),
                ("http://u:p:w@[2001:db8::1]:3128", "2001:db8::1", 3128, "u", "p:w"),
                ("[::1]", "::1", 1080, nil, nil),
                ("  http://proxy.corp:3128  ", "proxy.corp", 3128, nil, nil),
                ("http://a@b@proxy.corp:1", "proxy.corp", 1, "a@b", nil),
            ] as [(String, String, Int, String?, String?)])
        func parsesURLs(url: String, host: String, port: Int, username: String?, password: String?) throws {
            if username?.contains(":") == true {
                // A user name with ':' cannot be sent in Basic credentials (RFC 7617 §2).
                #expect(throws: WebSocketError(.invalidProxy)) { try HTTPProxy(url: url) }
                return
            }
            let proxy = try HTTPProxy(url: url)
            #expect(proxy.host == host)
            #expect(Int(proxy.port) == port)
            #expect(proxy.username == username)
            #expect(proxy.password == password)
        }

        @Test(
            "proxy URLs that cannot be used are invalidProxy, and the error never holds the credentials",
            arguments: [
                "https://proxy.corp:443", "socks5://alice:s3cret@proxy.corp:1080", "socks5h://proxy.corp", "http://",
                "http://proxy.corp:0", "http://proxy.corp:70000", "http://proxy.corp:port", "http://[::1",
                "http://[::1]x", "http://alice:s3cret@", "http://prox y.corp:3128",
            ])
        func rejectsURLs(url: String) {
            do {
                _ = try HTTPProxy(url: url)
                Issue.record("accepted \(url)")
            } catch {
                #expect(error.kind == .invalidProxy)
                #expect(!error.description.contains("s3cret") && !error.description.contains("alice"))
            }
        }

        @Test("a proxy's description never shows its credentials")
        func descriptionRedacts() throws {
            let proxy = try HTTPProxy(url: "http://alice:s3cret@proxy.corp:3128")
            #expect(proxy.description == "http://proxy.corp:3128 (credentials)")
            #expect(HTTPProxy(host: "::1", port: 8080).description == "http://[::1]:8080")
            #expect(!"\(SocketTransport.Proxy.http(proxy))".contains("s3cret"))
            var dumped = ""
            dump(SocketTransport.Options(proxy: .http(proxy)), to: &dumped)
            #expect(dumped.contains("proxy.corp") && !dumped.contains("s3cret") && !dumped.contains("alice"))
            #expect(!String(reflecting: proxy).contains("s3cret"))
        }

        // MARK: The environment, as curl reads it

        @Test("ws:// uses http_proxy (lower case only), wss:// https_proxy or HTTPS_PROXY, then all_proxy")
        func environmentNames() throws {
            #expect(try route("ws://example.com/cable", ["http_proxy": "http://a:1"])?.host == "a")
            #expect(try route("ws://example.com/cable", ["HTTP_PROXY": "http://a:1"]) == nil)  // httpoxy
            #expect(try route("ws://example.com/cable", ["https_proxy": "http://a:1"]) == nil)
            #expect(try route("wss://example.com/cable", ["https_proxy": "http://b:1"])?.host == "b")
            #expect(try route("wss://example.com/cable", ["HTTPS_PROXY": "http://c:1"])?.host == "c")
            #expect(try route("wss://example.com/cable", ["https_proxy": "b:1", "HTTPS_PROXY": "c:1"])?.host == "b")
            #expect(try route("wss://example.com/cable", ["http_proxy": "http://a:1"]) == nil)
            #expect(try route("wss://example.com/cable", ["ALL_PROXY": "d:1"])?.host == "d")
            #expect(try route("ws://example.com/cable", ["all_proxy": "e:1", "ALL_PROXY": "d:1"])?.host == "e")
            #expect(try route("wss://example.com/cable", ["https_proxy": "b:1", "all_proxy": "e:1"])?.host == "b")
            #expect(try route("wss://example.com/cable", ["https_proxy": "", "all_proxy": "e:1"])?.host == "e")
            #expect(try route("wss://example.com/cable", [:]) == nil)
        }

        @Test("no_proxy (or NO_PROXY) sends the named hosts directly; a bad proxy URL for them is not an error")
        func environmentBypass() throws {
            let environment = ["https_proxy": "http://proxy:3128", "no_proxy": "internal.corp, localhost"]
            #expect(try route("wss://api.internal.corp/cable", environment) == nil)
            #expect(try route("wss://localhost:3000/cable", environment) == nil)
            #expect(try route("wss://example.com/cable", environment)?.host == "proxy")
            #expect(try route("wss://example.com/cable", ["https_proxy": "p:1", "NO_PROXY": "example.com"]) == nil)
            #expect(
                try route("wss://localhost/cable", ["https_proxy": "socks5://p:1", "no_proxy": "localhost"]) == nil)
            #expect(throws: WebSocketError(.invalidProxy)) {
                try route("wss://example.com/cable", ["https_proxy": "socks5://p:1", "no_proxy": "localhost"])
            }
        }

        @Test("an explicit proxy honours its own bypass list; .direct never proxies")
        func explicitProxy() throws {
            let proxy = HTTPProxy(host: "proxy", port: 3128, bypass: "127.0.0.0/8")
            let configured = SocketTransport.Proxy.http(proxy)
            #expect(try configured.route(for: endpoint("ws://127.0.0.1:3000/cable")) == nil)
            #expect(try configured.route(for: endpoint("ws://example.com/cable")) == proxy)
            #expect(try SocketTransport.Proxy.direct.route(for: endpoint("ws://example.com/cable")) == nil)
            let broken = SocketTransport.Proxy.http(HTTPProxy(host: "proxy\r\nX: y", port: 1))
            #expect(throws: WebSocketError(.invalidProxy)) { try broken.route(for: endpoint("ws://example.com/")) }
        }

        // MARK: no_proxy matching

        @Test(
            "no_proxy names match the host and its subdomains, case-insensitively, with or without dots",
            arguments: [
                ("example.com", "example.com", true),
                ("example.com", "www.example.com", true),
                ("example.com", "notexample.com", false),
                (".example.com", "example.com", true),
                (".example.com", "a.b.example.com", true),
                ("example.com.", "www.example.com", true),
                ("EXAMPLE.com", "Www.Example.COM.", true),
                ("www.example.com", "example.com", false),
                ("foo, bar ,example.com", "example.com", true),
                ("foo bar\texample.com", "x.example.com", true),
                ("*", "anything.at.all", true),
                ("*.example.com", "www.example.com", false),  // curl has no wildcard but a lone *
                ("", "example.com", false),
                (",,", "example.com", false),
                ("example.com/8", "example.com", false),
                ("localhost", "127.0.0.1", false),  // names never match IP literals
            ])
        func matchesNames(list: String, host: String, expected: Bool) {
            #expect(ProxyBypass(list).matches(host: host) == expected)
        }

        @Test(
            "* means every host only as the whole list, as curl reads it; inside a longer list it matches nothing",
            arguments: [
                ("*", "example.com", true),
                ("*", "10.1.2.3", true),
                ("*", "::1", true),
                ("other.test,*", "example.com", false),
                ("other.test,*", "other.test", true),
                ("*,other.test", "example.com", false),
                ("*,other.test", "www.other.test", true),
                ("* other.test", "example.com", false),
                ("*,*", "example.com", false),
                (" *", "example.com", false),  // curl compares the whole value with "*", untrimmed
                ("* ", "example.com", false),
                ("*,", "example.com", false),
                ("127.0.0.1,*", "10.1.2.3", false),
                ("127.0.0.1,*", "127.0.0.1", true),
            ])
        func loneStar(list: String, host: String, expected: Bool) {
            #expect(ProxyBypass(list).matches(host: host) == expected)
        }

        @Test("no_proxy=other.test,* in the environment still sends other hosts through the proxy")
        func environmentStarInList() throws {
            let proxied = ["https_proxy": "http://proxy:3128", "no_proxy": "other.test,*"]
            #expect(try route("wss://example.com/cable", proxied)?.host == "proxy")
            #expect(try route("wss://other.test/cable", proxied) == nil)
            #expect(try route("wss://example.com/cable", ["https_proxy": "http://proxy:3128", "no_proxy": "*"]) == nil)
            #expect(try route("wss://example.com/cable", ["https_proxy": "p:1", "NO_PROXY": "x.test, *"])?.host == "p")
            let explicit = SocketTransport.Proxy.http(HTTPProxy(host: "proxy", port: 3128, bypass: "other.test,*"))
            #expect(try explicit.route(for: endpoint("ws://example.com/cable"))?.host == "proxy")
            let everything = SocketTransport.Proxy.http(HTTPProxy(host: "proxy", port: 3128, bypass: "*"))
            #expect(try everything.route(for: endpoint("ws://example.com/cable")) == nil)
        }

        @Test(
            "no_proxy IP entries match IP-literal hosts, exactly or by CIDR prefix, IPv4 and IPv6",
            arguments: [
                ("127.0.0.1", "127.0.0.1", true),
                ("127.0.0.1", "127.0.0.2", false),
                ("127.0.0.0/8", "127.45.6.7", true),
                ("10.0.0.0/8", "11.0.0.1", false),
                ("192.168.0.0/16", "192.168.200.1", true),
                ("192.168.0.0/17", "192.168.200.1", false),
                ("192.168.0.0/0", "8.8.8.8", true),
                ("10.1.2.3/40", "10.1.2.3", true),  // a prefix past the length means the whole address
                ("::1", "::1", true),
                ("[::1]", "::1", true),
                ("fd00::/8", "fd12:3456::1", true),
                ("fd00::/8", "fe80::1", false),
                ("2001:db8::/33", "2001:db8:7fff::1", true),
                ("2001:db8::/33", "2001:db8:8000::1", false),
                ("127.0.0.0/8", "::1", false),  // families never match each other
                ("127.0.0.1", "localhost", false),
            ])
        func matchesAddresses(list: String, host: String, expected: Bool) {
            #expect(ProxyBypass(list).matches(host: host) == expected)
        }

        // MARK: The CONNECT exchange

        @Test("the CONNECT request names the server's authority, brackets IPv6, and sends Basic credentials")
        func connectRequest() throws {
            let plain = ProxyTunnel.request(
                to: try endpoint("wss://example.com/cable?token=x"), through: HTTPProxy(host: "p", port: 1))
            #expect(
                String(decoding: plain, as: UTF8.self)
                    == "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n")
            let v6 = ProxyTunnel.request(
                to: try endpoint("ws://[::1]:3000/cable"),
                through: HTTPProxy(host: "p", port: 1, username: "alice", password: "s3cret"))
            let basic = Data("alice:s3cret".utf8).base64EncodedString()
            #expect(
                String(decoding: v6, as: UTF8.self)
                    == "CONNECT [::1]:3000 HTTP/1.1\r\nHost: [::1]:3000\r\nProxy-Authorization: Basic \(basic)\r\n\r\n")
            let noPassword = ProxyTunnel.request(
                to: try endpoint("ws://a/"), through: HTTPProxy(host: "p", port: 1, username: "bob"))
            #expect(String(decoding: noPassword, as: UTF8.self).contains(Data("bob:".utf8).base64EncodedString()))
        }

        private func answer(_ text: String, split: Int? = nil) throws(WebSocketError) -> ArraySlice<UInt8>? {
            var reader = ProxyTunnel.ResponseReader()
            let bytes = Array(text.utf8)
            guard let split else { return try reader.append(bytes[...]) }
            if let early = try reader.append(bytes[..<split]) { return early + bytes[split...] }  // as the worker does
            return try reader.append(bytes[split...])
        }

        @Test("a 2xx answer opens the tunnel, HTTP/1.0 or 1.1, and the bytes after it belong to the server")
        func tunnelOpens() throws {
            #expect(try answer("HTTP/1.0 200 Connection established\r\nProxy-agent: tinyproxy\r\n\r\n") == [])
            #expect(try answer("HTTP/1.1 200 OK\r\n\r\nhi").map(Array.init) == Array("hi".utf8))
            #expect(try answer("HTTP/1.1 204 \r\n\r\n") == [])
            #expect(
                try answer("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\nx").map(Array.init) == [
                    UInt8(ascii: "x")
                ])
            for split in 1..<30 {
                #expect(
                    try answer("HTTP/1.1 200 OK\r\nVia: x\r\n\r\nabc", split: split).map(Array.init)
                        == Array("abc".utf8))
            }
            var reader = ProxyTunnel.ResponseReader()
            #expect(try reader.append(Array("HTTP/1.1 200 OK\r\n".utf8)[...]) == nil)
        }

        @Test("any other final status is proxyRejected with that status; the body is never read")
        func tunnelRefused() {
            for status in [407, 403, 502, 503, 504, 500, 301, 404] {
                #expect(throws: WebSocketError(.proxyRejected(status: status))) {
                    try answer("HTTP/1.1 \(status) No\r\nContent-Length: 5\r\n\r\nnope.")
                }
            }
            #expect(throws: WebSocketError(.proxyRejected(status: 407))) {
                try answer("HTTP/1.0 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n")
            }
        }

        @Test("an answer that is not HTTP, or too long, is invalidHandshake")
        func tunnelGarbage() {
            for garbage in [
                "SSH-2.0-OpenSSH\r\n\r\n", "HTTP/2 200\r\n\r\n", "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 OK\r\n\r\n",
                "\r\n\r\n",
            ] {
                #expect(throws: WebSocketError(.invalidHandshake)) { try answer(garbage) }
            }
            #expect(throws: WebSocketError(.invalidHandshake)) {
                try answer("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 20_000))
            }
        }
    }
#endif
