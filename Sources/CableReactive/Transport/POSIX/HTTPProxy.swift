#if os(Linux) && canImport(CCableReactiveOpenSSL)
    #if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
        import FoundationEssentials
    #else
        import Foundation
    #endif
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    extension SocketTransport {
        /// How connections reach the server: directly, through an HTTP proxy, or as the environment says.
        ///
        /// Through a proxy, the transport asks it for a tunnel with `CONNECT host:port` (RFC 9110 §9.3.6), then
        /// speaks TLS (for `wss://`) and the WebSocket upgrade to the server through that tunnel, exactly as it
        /// would directly: the certificate is checked against the server's name, and the proxy sees only
        /// ciphertext. The proxy's name is resolved, the server's is left to the proxy. The whole of it falls
        /// within ``Options-swift.struct/connectTimeout``.
        ///
        /// A proxy that refuses the tunnel ends the attempt with `.proxyRejected(status:)`: 407 (credentials
        /// missing or wrong; some proxies answer wrong ones with 401) and 403 (the proxy forbids this destination) stop the client, since no retry
        /// can fix them; 502, 503, 504 and the rest are retried. A proxy URL the transport cannot use
        /// (`https://` or `socks5://` proxies, a bad port) is `.invalidProxy` and stops the client too:
        /// connecting directly instead could send traffic around a proxy the network requires.
        ///
        /// ```swift
        /// // A corporate proxy, with credentials, except for hosts inside the company.
        /// let proxy = try SocketTransport.HTTPProxy(url: "http://alice:s3cret@proxy.corp:3128", bypass: ".corp")
        /// let transport = SocketTransport(options: .init(proxy: .http(proxy)))
        ///
        /// // Or what `https_proxy` / `http_proxy` / `no_proxy` say, as curl reads them.
        /// let fromEnvironment = SocketTransport(options: .init(proxy: .environment))
        /// ```
        public enum Proxy: Sendable, Hashable, CustomStringConvertible {
            /// Connect to the server itself. The default.
            case direct
            /// Tunnel through this proxy, unless its ``HTTPProxy/bypass`` list names the server.
            case http(HTTPProxy)
            /// Read the proxy from the environment at every attempt, with curl's rules: `http_proxy` for
            /// `ws://` (lower case only: the upper-case name can be set by a CGI request's `Proxy:` header),
            /// `https_proxy` or `HTTPS_PROXY` for `wss://`, then `all_proxy` or `ALL_PROXY`; `no_proxy` or
            /// `NO_PROXY` lists the hosts reached directly, in ``HTTPProxy/bypass`` syntax (`no_proxy=*` sends
            /// every host directly; a `*` inside a longer list matches none). Nothing set means direct.
            case environment

            /// `direct`, `environment`, or `http(…)` with the proxy's ``HTTPProxy/description`` (never its
            /// credentials) and its bypass list, e.g. `http(http://proxy.corp:3128 (credentials), bypass: ".corp")`.
            public var description: String {
                switch self {
                case .direct: "direct"
                case .environment: "environment"
                case .http(let proxy):
                    proxy.bypass.isEmpty
                        ? "http(\(proxy))" : "http(\(proxy), bypass: \(String(reflecting: proxy.bypass)))"
                }
            }

            /// The proxy to use for `endpoint`, or `nil` for a direct connection. `environment` (default: the
            /// process's) is read only by `.environment`.
            ///
            /// - Throws: `.invalidProxy` when the proxy named cannot be used.
            package func route(
                for endpoint: WebSocketEndpoint,
                environment: [String: String]? = nil
            ) throws(WebSocketError) -> HTTPProxy? {
                try decision(for: endpoint, environment: environment).proxy
            }

            /// How a connection to `endpoint` goes, and why: what ``route(for:environment:)`` returns, with a
            /// bypassed host told apart from one no proxy applies to, for the connection's log line.
            ///
            /// - Throws: `.invalidProxy` when the proxy named cannot be used.
            package func decision(
                for endpoint: WebSocketEndpoint,
                environment: [String: String]? = nil
            ) throws(WebSocketError) -> ProxyDecision {
                switch self {
                case .direct:
                    return .direct
                case .http(let proxy):
                    if ProxyBypass(proxy.bypass).matches(host: endpoint.host) { return .bypassed }
                    try proxy.validate()
                    return .proxy(proxy)
                case .environment:
                    // Read here, not as the parameter's default: a direct connection never copies the environment.
                    let environment = environment ?? ProcessInfo.processInfo.environment
                    func value(_ names: String...) -> String? {
                        names.lazy.compactMap { environment[$0] }.first { !$0.isEmpty }
                    }
                    let names = endpoint.isSecure ? ["https_proxy", "HTTPS_PROXY"] : ["http_proxy"]
                    guard let url = names.lazy.compactMap({ value($0) }).first ?? value("all_proxy", "ALL_PROXY")
                    else { return .direct }
                    // The bypass list is checked before the URL is parsed: a bypassed host never fails on it.
                    let bypass = value("no_proxy", "NO_PROXY") ?? ""
                    if ProxyBypass(bypass).matches(host: endpoint.host) { return .bypassed }
                    return .proxy(try HTTPProxy(url: url, bypass: bypass))  // validated by init
                }
            }
        }

        /// An HTTP proxy that tunnels with `CONNECT`, with optional Basic credentials.
        ///
        /// Its ``description``, `debugDescription` and mirror (what `dump` and the debugger show) never
        /// contain the credentials, so a proxy, or options holding one, may be logged.
        ///
        /// ```swift
        /// let proxy = SocketTransport.HTTPProxy(host: "proxy.corp", port: 3128, bypass: "localhost, 10.0.0.0/8")
        /// let options = SocketTransport.Options(proxy: .http(proxy))
        /// ```
        public struct HTTPProxy: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
            CustomReflectable
        {
            /// The proxy's host name or IP literal (IPv6 without brackets).
            public var host: String
            /// The proxy's port.
            public var port: UInt16
            /// The user name for `Proxy-Authorization: Basic`, or `nil` for none. It may not contain `:`.
            public var username: String?
            /// The password that goes with ``username``.
            public var password: String?
            /// The hosts reached without the proxy, in `no_proxy` syntax as curl reads it: names separated by
            /// commas or spaces, each matching itself and its subdomains (`example.com` and `.example.com`
            /// both match `example.com` and `www.example.com`, not `notexample.com`), and IP addresses with an
            /// optional CIDR prefix length (`10.0.0.0/8`, `::1`, `fd00::/8`), matched against IP-literal hosts
            /// only. Case does not matter. Default empty.
            ///
            /// `*` matches every host only when it is the whole list, exactly `*` with nothing around it (curl's
            /// `proxy_check_noproxy`: `strcmp("*", no_proxy)`). A `*` inside a longer list, or with spaces
            /// around it, matches no host and is ignored (curl compares it as a host name, which no host has):
            /// `other.test,*` bypasses only `other.test`, so a stray `*` never sends every connection around the
            /// proxy. There is no other wildcard: `*.example.com` matches nothing either.
            public var bypass: String

            /// A proxy at `host` and `port`.
            public init(
                host: String,
                port: UInt16,
                username: String? = nil,
                password: String? = nil,
                bypass: String = ""
            ) {
                self.host = host
                self.port = port
                self.username = username
                self.password = password
                self.bypass = bypass
            }

            /// A proxy from a URL as `http_proxy` holds it: `[http://][user[:password]@]host[:port][/]`, with
            /// percent-encoded credentials and port 1080 when none is given (curl's rules).
            ///
            /// - Throws: `.invalidProxy` for another scheme (`https://` and `socks5://` proxies are not
            ///   supported), a missing host or a bad port. The error never contains the credentials.
            public init(url: String, bypass: String = "") throws(WebSocketError) {
                var rest = Substring(url.trimmingWhitespace())
                if let separator = rest.firstRange(of: "://") {
                    let scheme = rest[..<separator.lowerBound].lowercased()
                    guard scheme == "http" else {
                        throw WebSocketError(.invalidProxy, detail: "\(scheme):// proxies are not supported")
                    }
                    rest = rest[separator.upperBound...]
                }
                if let slash = rest.firstIndex(of: "/") { rest = rest[..<slash] }
                var username: String?
                var password: String?
                if let at = rest.lastIndex(of: "@") {
                    let userinfo = rest[..<at]
                    rest = rest[rest.index(after: at)...]
                    if let colon = userinfo.firstIndex(of: ":") {
                        username = Self.percentDecoded(userinfo[..<colon])
                        password = Self.percentDecoded(userinfo[userinfo.index(after: colon)...])
                    } else {
                        username = Self.percentDecoded(userinfo)
                    }
                }
                var host: Substring
                var portText: Substring?
                if rest.hasPrefix("[") {
                    guard let close = rest.firstIndex(of: "]") else {
                        throw WebSocketError(.invalidProxy, detail: "unclosed IPv6 literal")
                    }
                    host = rest[rest.index(after: rest.startIndex)..<close]
                    let after = rest[rest.index(after: close)...]
                    if !after.isEmpty {
                        guard after.hasPrefix(":") else { throw WebSocketError(.invalidProxy, detail: "bad port") }
                        portText = after.dropFirst()
                    }
                } else if let colon = rest.lastIndex(of: ":") {
                    host = rest[..<colon]
                    portText = rest[rest.index(after: colon)...]
                } else {
                    host = rest
                }
                var port: UInt16 = 1080
                if let portText {
                    guard let parsed = UInt16(portText), parsed > 0 else {
                        throw WebSocketError(.invalidProxy, detail: "bad port")
                    }
                    port = parsed
                }
                self.init(
                    host: String(host), port: port, username: username, password: password, bypass: bypass)
                try validate()
            }

            /// `http://host:port`, with `(credentials)` when there are some; never the credentials themselves.
            public var description: String {
                let hostPart = host.contains(":") ? "[\(host)]" : host
                return "http://\(hostPart):\(port)" + (username == nil ? "" : " (credentials)")
            }

            /// The same as ``description``: no credentials.
            public var debugDescription: String { description }

            /// Host, port, bypass list and whether there are credentials; never the credentials themselves.
            public var customMirror: Mirror {
                Mirror(
                    self,
                    children: ["host": host, "port": port, "hasCredentials": username != nil, "bypass": bypass],
                    displayStyle: .struct)
            }

            /// Throws `.invalidProxy` for what cannot go into a request: an empty host, a host or user name that
            /// would break the request line, or a user name with `:` (RFC 7617 §2).
            package func validate() throws(WebSocketError) {
                func breaksRequest(_ text: String) -> Bool {
                    text.utf8.contains { $0 < 0x21 || $0 == 0x7F }
                }
                guard !host.isEmpty, !breaksRequest(host), port > 0 else {
                    throw WebSocketError(.invalidProxy, detail: "bad host or port")
                }
                if let username, username.contains(":") {
                    throw WebSocketError(.invalidProxy, detail: "a user name may not contain ':'")
                }
            }

            /// `%XX` sequences decoded; a malformed one is kept as it is.
            private static func percentDecoded(_ text: Substring) -> String {
                var bytes: [UInt8] = []
                var utf8 = Array(text.utf8)[...]
                while let byte = utf8.popFirst() {
                    if byte == UInt8(ascii: "%"), utf8.count >= 2,
                        let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
                    {
                        bytes.append(value)
                        utf8 = utf8.dropFirst(2)
                    } else {
                        bytes.append(byte)
                    }
                }
                return String(decoding: bytes, as: UTF8.self)
            }
        }
    }

    /// How one connection reaches its server: ``SocketTransport/Proxy-swift.enum/decision(for:environment:)``.
    package enum ProxyDecision: Sendable, Hashable {
        /// No proxy applies: ``SocketTransport/Proxy-swift.enum/direct``, or no proxy variable is set.
        case direct
        /// A proxy applies, but its bypass list (or `no_proxy`) names the server: connect directly.
        case bypassed
        /// Through this proxy.
        case proxy(SocketTransport.HTTPProxy)

        /// The proxy to tunnel through, if any.
        package var proxy: SocketTransport.HTTPProxy? {
            if case .proxy(let proxy) = self { return proxy }
            return nil
        }

        /// What the client logs of it: the proxy's host and port, never its credentials.
        package var route: ConnectionRoute {
            switch self {
            case .direct: .direct
            case .bypassed: .bypassed
            case .proxy(let proxy): .proxy(host: proxy.host, port: proxy.port)
            }
        }
    }

    /// A `no_proxy` list, parsed: see ``SocketTransport/HTTPProxy/bypass``.
    package struct ProxyBypass: Sendable {
        private var names: [String] = []
        private var networks: [(address: [UInt8], prefix: Int)] = []
        private var everything = false

        package init(_ list: String) {
            // Only a list that is exactly "*" means every host, as in curl. A "*" entry of a longer list is
            // skipped: curl compares it as a name, which no host has.
            if list == "*" {
                everything = true
                return
            }
            let separators: Set<Character> = [",", " ", "\t", "\n", "\r"]
            for token in list.split(whereSeparator: { separators.contains($0) }) where token != "*" {
                var text = Substring(token)
                var prefix: Int?
                if let slash = text.lastIndex(of: "/") {
                    prefix = Int(text[text.index(after: slash)...])
                    text = text[..<slash]
                }
                if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
                if let address = Self.ipAddress(String(text)) {
                    let bits = address.count * 8
                    networks.append((address, min(max(prefix ?? bits, 0), bits)))
                    continue
                }
                guard prefix == nil else { continue }  // a prefix on a name means nothing
                while text.hasPrefix(".") { text = text.dropFirst() }
                while text.hasSuffix(".") { text = text.dropLast() }
                if !text.isEmpty { names.append(text.lowercased()) }
            }
        }

        /// Whether `host` (a name, or an IP literal without brackets) is reached directly.
        package func matches(host: String) -> Bool {
            if everything { return true }
            if let address = Self.ipAddress(host) {
                return networks.contains { network in
                    network.address.count == address.count
                        && Self.samePrefix(network.address, address, bits: network.prefix)
                }
            }
            var name = Substring(host.lowercased())
            while name.hasSuffix(".") { name = name.dropLast() }
            return names.contains { name == $0 || name.hasSuffix("." + $0) }
        }

        private static func samePrefix(_ a: [UInt8], _ b: [UInt8], bits: Int) -> Bool {
            let whole = bits / 8
            guard a[..<whole] == b[..<whole] else { return false }
            let rest = bits % 8
            guard rest > 0 else { return true }
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - rest))
            return a[whole] & mask == b[whole] & mask
        }

        /// The 4 or 16 bytes of an IPv4 or IPv6 literal, or `nil` for a name.
        private static func ipAddress(_ text: String) -> [UInt8]? {
            var v4 = in_addr()
            if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
            var v6 = in6_addr()
            if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
            return nil
        }
    }

    /// The `CONNECT` exchange with an HTTP proxy (RFC 9110 §9.3.6), without I/O.
    package enum ProxyTunnel {
        /// The request for a tunnel to `endpoint`.
        package static func request(to endpoint: WebSocketEndpoint, through proxy: SocketTransport.HTTPProxy) -> [UInt8]
        {
            let authority =
                endpoint.host.contains(":")
                ? "[\(endpoint.host)]:\(endpoint.port)" : "\(endpoint.host):\(endpoint.port)"
            var head = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
            if let username = proxy.username {
                let token = Data("\(username):\(proxy.password ?? "")".utf8).base64EncodedString()
                head += "Proxy-Authorization: Basic \(token)\r\n"
            }
            head += "\r\n"
            return Array(head.utf8)
        }

        /// Reads the proxy's answer: skips interim (1xx) responses, and returns the bytes after the head of a
        /// 2xx, which already belong to the tunnel.
        package struct ResponseReader: Sendable {
            private var head = HandshakeResponseReader()

            package init() {}

            /// Appends `input`; returns the tunnel's first bytes once a 2xx head has arrived, `nil` before.
            ///
            /// - Throws: `.proxyRejected(status:)` for any other final status (the body is never read);
            ///   `.invalidHandshake` for a malformed or oversized head.
            package mutating func append(_ input: ArraySlice<UInt8>) throws(WebSocketError) -> ArraySlice<UInt8>? {
                var input = input
                while let (lines, rest) = try head.append(input) {
                    let status = try HTTPStatusLine.status(of: lines, versions: ["HTTP/1.0", "HTTP/1.1"])
                    switch status {
                    case 200..<300: return rest
                    case 100..<200:
                        head = HandshakeResponseReader()
                        input = rest
                    default: throw WebSocketError(.proxyRejected(status: status), detail: "proxy refused CONNECT")
                    }
                }
                return nil
            }
        }
    }
#endif
