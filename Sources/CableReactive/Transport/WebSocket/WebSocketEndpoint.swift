#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// Where a `ws`/`wss` URL points: the pieces the socket layer and the upgrade request need.
package struct WebSocketEndpoint: Equatable, Sendable {
    /// `wss`: TLS on top of TCP.
    package var isSecure: Bool
    /// The host name or IP literal, without IPv6 brackets.
    package var host: String
    package var port: UInt16
    /// Whether `host` is an IPv4 or IPv6 literal (no SNI is sent for those, RFC 6066 §3).
    package var isIPLiteral: Bool
    /// The request target: percent-encoded path (at least `/`) and query.
    package var target: String
    /// The `Host` header: the host (bracketed for IPv6) and the port when it is not the default.
    package var hostHeader: String

    /// Splits a `ws` or `wss` URL (`http`/`https` are accepted as aliases).
    ///
    /// - Throws: `WebSocketError(.invalidURL)` for another scheme, a missing host or a bad port.
    package init(url: URL) throws(WebSocketError) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased()
        else { throw WebSocketError(.invalidURL, detail: "not a URL") }
        switch scheme {
        case "ws", "http": isSecure = false
        case "wss", "https": isSecure = true
        default: throw WebSocketError(.invalidURL, detail: "scheme must be ws or wss")
        }
        guard var host = components.percentEncodedHost, !host.isEmpty else {
            throw WebSocketError(.invalidURL, detail: "missing host")
        }
        let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
        if bracketed { host = String(host.dropFirst().dropLast()) }
        guard !host.contains(where: { $0 == "\r" || $0 == "\n" || $0 == " " || $0 == "\0" }) else {
            throw WebSocketError(.invalidURL, detail: "bad host")
        }
        let defaultPort: UInt16 = isSecure ? 443 : 80
        if let explicit = components.port {
            guard let port = UInt16(exactly: explicit), port > 0 else {
                throw WebSocketError(.invalidURL, detail: "port out of range")
            }
            self.port = port
        } else {
            port = defaultPort
        }
        self.host = host
        isIPLiteral = bracketed || Self.isIPv4Literal(host) || host.contains(":")
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        target = components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
        let hostPart = host.contains(":") ? "[\(host)]" : host
        hostHeader = port == defaultPort ? hostPart : "\(hostPart):\(port)"
    }

    private static func isIPv4Literal(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }
}
