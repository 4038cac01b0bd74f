/// The permessage-deflate parameters a server accepted (RFC 7692 §7.1).
///
/// We offer `permessage-deflate` with no parameters and always use a 32 KiB window, so the server may
/// answer with `server_no_context_takeover`, `client_no_context_takeover` and `server_max_window_bits`
/// (any window inflates with a 32 KiB one). Anything else fails the handshake.
package struct DeflateParameters: Equatable, Sendable {
    /// The server resets its compressor after every message; we reset our decompressor too.
    package var serverNoContextTakeover = false
    /// We must reset our compressor after every message.
    package var clientNoContextTakeover = false

    package init(serverNoContextTakeover: Bool = false, clientNoContextTakeover: Bool = false) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
    }

    /// The `Sec-WebSocket-Extensions` value we offer.
    package static let offer = "permessage-deflate"

    /// Parses a `Sec-WebSocket-Extensions` response value.
    ///
    /// - Returns: `nil` when the server accepted no extension; the parameters when it accepted
    ///   permessage-deflate.
    /// - Throws: when it names another extension, repeats one, or uses a parameter we did not allow.
    package static func parse(response value: String) throws(WebSocketError) -> DeflateParameters? {
        var result: DeflateParameters?
        for element in value.split(separator: ",") {
            let parts = element.split(separator: ";").map { $0.trimmingWhitespace().lowercased() }
            guard let name = parts.first, !name.isEmpty else { continue }
            guard name == "permessage-deflate", result == nil else {
                throw WebSocketError(.invalidHandshake, detail: "server accepted an extension we did not offer")
            }
            var parameters = DeflateParameters()
            var seen: Set<String> = []
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
                let key = pair.first ?? ""
                guard seen.insert(key).inserted else {
                    throw WebSocketError(.invalidHandshake, detail: "repeated deflate parameter")
                }
                switch key {
                case "server_no_context_takeover" where pair.count == 1:
                    parameters.serverNoContextTakeover = true
                case "client_no_context_takeover" where pair.count == 1:
                    parameters.clientNoContextTakeover = true
                case "server_max_window_bits" where pair.count == 2:
                    let digits = pair[1].trimmingCharacters(of: "\"")
                    guard let bits = Int(digits), (8...15).contains(bits) else {
                        throw WebSocketError(.invalidHandshake, detail: "bad server_max_window_bits")
                    }
                default:
                    throw WebSocketError(.invalidHandshake, detail: "unsupported deflate parameter")
                }
            }
            result = parameters
        }
        return result
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP optional whitespace).
    func trimmingWhitespace() -> String {
        trimmingCharacters(of: " \t")
    }

    /// The text without leading and trailing characters from `set`.
    func trimmingCharacters(of set: String) -> String {
        let characters = Set(set)
        guard let first = firstIndex(where: { !characters.contains($0) }),
            let last = lastIndex(where: { !characters.contains($0) })
        else { return "" }
        return String(self[first...last])
    }
}
