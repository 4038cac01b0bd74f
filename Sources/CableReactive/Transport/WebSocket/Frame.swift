/// A frame opcode this client understands (RFC 6455 §5.2). Other values are a protocol error.
package enum FrameOpcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Control frames (close, ping, pong) have the high bit of the opcode set.
    package var isControl: Bool { rawValue & 0x8 != 0 }
}

/// One decoded WebSocket frame, already unmasked (server frames are never masked).
package struct Frame: Equatable, Sendable {
    package var fin: Bool
    /// RSV1: "this message is compressed" when permessage-deflate is negotiated.
    package var rsv1: Bool
    package var opcode: FrameOpcode
    /// The payload. When a frame arrived whole in one read it is a slice of the read buffer (no
    /// copy); do not keep it beyond handling the frame, or the next read has to copy the buffer.
    package var payload: ArraySlice<UInt8>

    package init(fin: Bool = true, rsv1: Bool = false, opcode: FrameOpcode, payload: ArraySlice<UInt8>) {
        self.fin = fin
        self.rsv1 = rsv1
        self.opcode = opcode
        self.payload = payload
    }

    package init(fin: Bool = true, rsv1: Bool = false, opcode: FrameOpcode, payload: [UInt8]) {
        self.init(fin: fin, rsv1: rsv1, opcode: opcode, payload: payload[...])
    }
}
