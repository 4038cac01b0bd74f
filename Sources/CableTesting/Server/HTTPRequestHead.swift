import CableReactive
import Foundation

/// An HTTP/1.1 request head (RFC 9112 §2-5), parsed strictly enough for a WebSocket upgrade: a request line,
/// then `name: value` fields. No obsolete line folding, no bytes outside of visible ASCII in names.
struct HTTPRequestHead {
    var method: String
    var target: String
    var headers: [LocalCableServer.Request.Header]

    /// The range of the first `CRLF CRLF` (the empty line that ends a head) in `bytes` at or after `start`.
    static func findTerminator(in bytes: [UInt8], from start: Int) -> Range<Int>? {
        var index = start
        while index + 4 <= bytes.count {
            if bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
                return index..<(index + 4)
            }
            index += 1
        }
        return nil
    }

    /// Parses the head, without its final empty line; `nil` when it is malformed.
    static func parse(_ bytes: ArraySlice<UInt8>) -> HTTPRequestHead? {
        let text = String(decoding: bytes, as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
        guard requestLine.count == 3, requestLine[2] == "HTTP/1.1",
            !requestLine[0].isEmpty, requestLine[0].utf8.allSatisfy({ (0x41...0x5A).contains($0) }),
            requestLine[1].hasPrefix("/"), requestLine[1].utf8.allSatisfy({ (0x21...0x7E).contains($0) })
        else { return nil }
        var headers: [LocalCableServer.Request.Header] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon]
            guard CableRequest.isToken(String(name)) else { return nil }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            headers.append(LocalCableServer.Request.Header(name: String(name), value: value))
        }
        return HTTPRequestHead(method: String(requestLine[0]), target: String(requestLine[1]), headers: headers)
    }

    /// The value of `name` (case-insensitive), several fields joined with `", "`.
    func header(_ name: String) -> String? {
        let values = headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// The comma-separated elements of `name`'s values, trimmed, empty ones dropped.
    func list(_ name: String) -> [String] {
        (header(name) ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// Whether this is a WebSocket upgrade (RFC 6455 §4.2.1: GET, `Upgrade: websocket`, `Connection: upgrade`),
    /// the test Rails' websocket-driver applies before anything else.
    var isWebSocketUpgrade: Bool {
        method == "GET" && list("Upgrade").contains { $0.lowercased() == "websocket" }
            && list("Connection").contains { $0.lowercased() == "upgrade" }
    }

    /// The `Sec-WebSocket-Key` when it is present and decodes to 16 bytes, with `Sec-WebSocket-Version: 13`.
    var validKey: String? {
        guard header("Sec-WebSocket-Version") == "13", let key = header("Sec-WebSocket-Key"),
            Data(base64Encoded: key)?.count == 16
        else { return nil }
        return key
    }
}

/// The server's HTTP answers.
enum HTTPResponse {
    /// `101 Switching Protocols` with the accept value and the chosen subprotocol, if any.
    static func switching(key: String, subprotocol: String?) -> [UInt8] {
        var text =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: \(AcceptKey.compute(forKey: key))\r\n"
        if let subprotocol { text += "Sec-WebSocket-Protocol: \(subprotocol)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// An error answer with a short text body (`Page not found` for 404, as Rails), then the connection closes.
    static func error(status: Int) -> [UInt8] {
        let reason = reasons[status] ?? "Error"
        let body = status == 404 ? "Page not found" : reason
        let text =
            "HTTP/1.1 \(status) \(reason)\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        return Array(text.utf8)
    }

    private static let reasons: [Int: String] = [
        400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 426: "Upgrade Required",
        429: "Too Many Requests", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
        502: "Bad Gateway", 503: "Service Unavailable",
    ]
}
