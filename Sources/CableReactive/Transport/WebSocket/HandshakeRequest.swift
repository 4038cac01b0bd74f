#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// The HTTP/1.1 upgrade request a client sends (RFC 6455 §4.1).
package struct HandshakeRequest: Sendable {
    /// The base64 `Sec-WebSocket-Key`.
    package let key: String
    /// The request head, ready to write.
    package let bytes: [UInt8]
    /// The subprotocols actually offered: the caller's, minus any that are not HTTP tokens.
    package let offeredProtocols: [String]

    /// Header names the transport sets itself; a caller's values for them are ignored.
    private static let reserved: Set<String> = [
        "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version",
        "sec-websocket-protocol", "sec-websocket-extensions", "content-length", "transfer-encoding",
    ]

    /// - Parameters:
    ///   - endpoint: the target.
    ///   - protocols: subprotocols to offer in order of preference (empty: no header).
    ///   - headers: the caller's extra header lines, in order (for example `Origin`, `Cookie`,
    ///     `Authorization`). Reserved names are ignored, and so are lines that would break the request
    ///     (``CableRequest/invalidHeaderNames``; the client never passes those).
    ///   - offerDeflate: whether to offer permessage-deflate.
    ///   - nonce: the 16 random bytes of the key.
    package init(
        endpoint: WebSocketEndpoint,
        protocols: [String],
        headers: [CableRequest.Header],
        offerDeflate: Bool,
        nonce: [UInt8]
    ) {
        key = Data(nonce).base64EncodedString()
        var head = "GET \(endpoint.target) HTTP/1.1\r\n"
        head += "Host: \(endpoint.hostHeader)\r\n"
        head += "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        head += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        let offered = protocols.filter(CableRequest.isToken)
        offeredProtocols = offered
        if !offered.isEmpty { head += "Sec-WebSocket-Protocol: \(offered.joined(separator: ", "))\r\n" }
        if offerDeflate { head += "Sec-WebSocket-Extensions: \(DeflateParameters.offer)\r\n" }
        for header in headers where CableRequest.isValid(header) && !Self.reserved.contains(header.name.lowercased()) {
            head += "\(header.name): \(header.value)\r\n"
        }
        head += "\r\n"
        bytes = Array(head.utf8)
    }
}
