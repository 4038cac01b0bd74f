/// Collects the server's response head, at most `maxHeadSize` bytes, up to the blank line.
///
/// Whatever follows the blank line is already WebSocket frames (a server may send its first message
/// in the same packet) and is handed back untouched.
package struct HandshakeResponseReader: Sendable {
    /// The largest response head accepted (status line and headers).
    package let maxHeadSize: Int
    private var buffer: [UInt8] = []

    package init(maxHeadSize: Int = 16 * 1024) {
        self.maxHeadSize = maxHeadSize
    }

    /// Appends `input`; returns the head (without the blank line) and the bytes after it once the
    /// blank line has arrived, or `nil` while it has not.
    ///
    /// - Throws: `WebSocketError(.invalidHandshake)` when the head grows past `maxHeadSize`.
    package mutating func append(_ input: ArraySlice<UInt8>) throws(WebSocketError) -> (
        head: [UInt8], rest: ArraySlice<UInt8>
    )? {
        let searchFrom = max(0, buffer.count - 3)
        buffer.append(contentsOf: input)
        var index = searchFrom
        while index + 3 < buffer.count {
            if buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
                guard index <= maxHeadSize else { break }
                return (Array(buffer[..<index]), buffer[(index + 4)...])
            }
            index += 1
        }
        guard buffer.count <= maxHeadSize + 3 else {
            throw WebSocketError(.invalidHandshake, detail: "response head larger than \(maxHeadSize) bytes")
        }
        return nil
    }
}

/// What a valid upgrade response agreed on.
package struct HandshakeResult: Equatable, Sendable {
    /// The subprotocol the server chose, if any.
    package var subprotocol: String?
    /// The permessage-deflate parameters, when the server accepted our offer.
    package var deflate: DeflateParameters?

    package init(subprotocol: String? = nil, deflate: DeflateParameters? = nil) {
        self.subprotocol = subprotocol
        self.deflate = deflate
    }
}

/// Checks a server's response head against our request (RFC 6455 §4.1, client requirements 1-6).
package enum HandshakeValidator {
    /// - Parameters:
    ///   - head: the response head without the blank line.
    ///   - expectedAccept: `Sec-WebSocket-Accept` computed from our key.
    ///   - offeredProtocols: the subprotocols we offered. The server may choose one of them, except an
    ///     `anycable-token.<token>` (``CableRequest/anyCableToken``): a credential, not a protocol.
    ///   - offeredDeflate: whether we offered permessage-deflate.
    /// - Throws: `.upgradeRejected(status:)` for any status other than 101 (headers and body are
    ///   never included); `.invalidHandshake` for a malformed head or mismatched headers.
    package static func validate(
        head: [UInt8],
        expectedAccept: String,
        offeredProtocols: [String],
        offeredDeflate: Bool
    ) throws(WebSocketError) -> HandshakeResult {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false)[...]
        guard let statusLine = lines.popFirst() else { throw invalid("empty response") }
        let status = try HTTPStatusLine.status(of: statusLine, versions: ["HTTP/1.1"])
        guard status == 101 else { throw WebSocketError(.upgradeRejected(status: status)) }

        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":"), line.first != " ", line.first != "\t" else {
                throw invalid("malformed header line")
            }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingWhitespace()
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        guard headers["upgrade"]?.lowercased() == "websocket" else { throw invalid("missing Upgrade: websocket") }
        let connection = headers["connection"]?.split(separator: ",").map { $0.trimmingWhitespace().lowercased() }
        guard connection?.contains("upgrade") == true else { throw invalid("missing Connection: upgrade") }
        guard headers["sec-websocket-accept"] == expectedAccept else { throw invalid("wrong Sec-WebSocket-Accept") }

        var result = HandshakeResult()
        if let chosen = headers["sec-websocket-protocol"] {
            guard offeredProtocols.contains(chosen) else {
                throw invalid("server chose a subprotocol we did not offer")
            }
            // A token offered as a subprotocol carries a credential, it names no protocol we could speak.
            guard !CableRequest.isCredentialSubprotocol(chosen) else {
                throw invalid("server chose the anycable-token subprotocol, which is a credential, not a protocol")
            }
            result.subprotocol = chosen
        }
        if let extensions = headers["sec-websocket-extensions"] {
            guard offeredDeflate else { throw invalid("server accepted an extension we did not offer") }
            result.deflate = try DeflateParameters.parse(response: extensions)
        }
        return result
    }

    private static func invalid(_ detail: String) -> WebSocketError {
        WebSocketError(.invalidHandshake, detail: detail)
    }
}

/// The status line of an HTTP/1 response: `VERSION CODE [REASON]`.
package enum HTTPStatusLine {
    /// The three-digit status of `line` when its version is one of `versions`.
    ///
    /// - Throws: `.invalidHandshake` ("malformed status line") otherwise.
    package static func status(of line: Substring, versions: Set<Substring>) throws(WebSocketError) -> Int {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, versions.contains(parts[0]), parts[1].count == 3,
            let status = Int(parts[1]), (100...999).contains(status)
        else { throw WebSocketError(.invalidHandshake, detail: "malformed status line") }
        return status
    }

    /// The status of a response head's first line; as the other overload reads it.
    package static func status(of head: [UInt8], versions: Set<Substring>) throws(WebSocketError) -> Int {
        let text = String(decoding: head, as: UTF8.self)
        let line = text.split(separator: "\r\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return try status(of: line, versions: versions)
    }
}
