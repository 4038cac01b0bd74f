// Compiled on every platform: the rule that picks the subprotocol a URLSessionWebSocketTask opened with takes
// plain values, so it runs and is tested on Linux. URLSessionTransport (Apple only) gathers the values.

/// The subprotocol a `URLSessionWebSocketTask` opened with.
///
/// ``URLSessionTransport`` offers its subprotocols in a `Sec-WebSocket-Protocol` request header, and Apple
/// documents `didOpenWithProtocol`'s argument as nil "if the client did not advertise protocols when creating the
/// task" (with `webSocketTask(with:protocols:)`). Should it be nil for an offer made by header, the server's choice
/// is still in the upgrade response, so that header is read instead: without it, AnyCable's extended protocol and
/// Rails' `actioncable-unsupported` answer would go unnoticed.
///
/// Either source counts only for a protocol we offered (a server may choose no other, RFC 6455 §4.1), compared
/// exactly, as `SocketTransport`'s handshake check compares it, and never for an `anycable-token.<token>`
/// (``CableRequest/anyCableToken``), offered as a credential, not as a protocol to speak. Anything else (a protocol
/// we did not offer, the token, a list, an empty value, header fields that disagree) is ignored, and the connection
/// is taken as plain Action Cable, as when the server names none.
package enum URLSessionSubprotocol {
    /// The response header that carries the server's choice; header names are matched in any case.
    package static let headerName = "Sec-WebSocket-Protocol"

    /// - Parameters:
    ///   - reported: what `didOpenWithProtocol` reported.
    ///   - responseHeaders: the upgrade response's header fields (`HTTPURLResponse.allHeaderFields`).
    ///   - offered: the subprotocols the request offered.
    /// - Returns: the protocol the connection speaks, or nil for none.
    package static func chosen(reported: String?, responseHeaders: [String: String], offered: [String]) -> String? {
        if let reported = accepted(reported, offered: offered) { return reported }
        let name = headerName.lowercased()
        let values = Set(responseHeaders.filter { $0.key.lowercased() == name }.map { $0.value.trimmingWhitespace() })
        guard values.count == 1, let value = values.first else { return nil }
        return accepted(value, offered: offered)
    }

    private static func accepted(_ value: String?, offered: [String]) -> String? {
        guard let value = value?.trimmingWhitespace(), !value.isEmpty, offered.contains(value),
            !CableRequest.isCredentialSubprotocol(value)
        else { return nil }
        return value
    }
}
