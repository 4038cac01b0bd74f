/// The body of a close frame (RFC 6455 §5.5.1): an optional 2-byte code and a UTF-8 reason.
package struct ClosePayload: Equatable, Sendable {
    /// The status code, or `nil` when the frame had an empty body (reported as 1005).
    package var code: UInt16?
    package var reason: String

    package init(code: UInt16?, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The payload of a close we send: `code` if it may appear in a close frame (``isSendable(_:)``), else 1000,
    /// since 1005, 1006 and 1015 are local-only and unassigned codes are invalid on the wire. Both transports use
    /// it: URLSession's `CloseCode(rawValue:)` accepts any number on Apple platforms, so it would send them as is. (A
    /// raw code, not a `WebSocketCloseCode`: the frame sources build on their own, for the fuzzer.)
    package init(sending code: UInt16, reason: String) {
        self.init(code: Self.isSendable(code) ? code : 1000, reason: reason)
    }

    /// Decodes a close frame's payload sent by the peer.
    ///
    /// - Throws: ``FrameError/protocolError(_:)`` for a 1-byte body or a code that may not appear on
    ///   the wire (below 1000, 1004-1006, 1015, 1016-2999, 5000 and above); ``FrameError/invalidUTF8``
    ///   for a reason that is not UTF-8.
    package static func decode(_ payload: ArraySlice<UInt8>) throws(FrameError) -> ClosePayload {
        if payload.isEmpty { return ClosePayload(code: nil, reason: "") }
        guard payload.count >= 2 else { throw .protocolError(.invalidClosePayload) }
        let start = payload.startIndex
        let code = UInt16(payload[start]) << 8 | UInt16(payload[start + 1])
        guard isSendable(code) else { throw .protocolError(.invalidCloseCode(code)) }
        let reason = try UTF8Validation.decode(payload[(start + 2)...])
        return ClosePayload(code: code, reason: reason)
    }

    /// Decodes a close payload held in an array.
    package static func decode(_ payload: [UInt8]) throws(FrameError) -> ClosePayload {
        try decode(payload[...])
    }

    /// Whether `code` may appear in a close frame: 1000-1003, 1007-1014 (defined or IANA-registered),
    /// and 3000-4999 (libraries and applications). 1004 is reserved; 1005, 1006 and 1015 are
    /// local-only; 1016-2999 are unassigned.
    package static func isSendable(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// The payload bytes: the big-endian code followed by ``encodedReason``; empty without a code.
    package var encoded: [UInt8] {
        guard let code else { return [] }
        return [UInt8(code >> 8), UInt8(code & 0xFF)] + encodedReason
    }

    /// The reason's UTF-8 bytes, cut to 123 on a character boundary so that the frame stays within the 125-byte
    /// control-frame limit.
    package var encodedReason: [UInt8] {
        var bytes: [UInt8] = []
        for character in reason {
            let utf8 = character.utf8
            if bytes.count + utf8.count > 123 { break }
            bytes.append(contentsOf: utf8)
        }
        return bytes
    }
}
