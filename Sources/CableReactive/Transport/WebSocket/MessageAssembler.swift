/// Joins data frames into messages and separates out control frames (RFC 6455 §5.4, §5.5).
///
/// Control frames may arrive between the fragments of a message; they are handed back at once.
/// The assembled payload is bounded by `maxMessageSize`. Text payloads are returned as bytes: when
/// the message is compressed they must be inflated first, so UTF-8 is checked by the caller
/// (``UTF8Validation``).
package struct MessageAssembler: Sendable {
    /// What one frame amounts to.
    package enum Output: Equatable, Sendable {
        /// A complete text message; `compressed` when its first frame had RSV1 set.
        case text(ArraySlice<UInt8>, compressed: Bool)
        /// The peer pinged us; answer with a pong carrying the same payload.
        case ping(ArraySlice<UInt8>)
        /// The peer answered a ping (we send none, so it is only tolerated).
        case pong
        /// The peer started or answered the close handshake.
        case close(ClosePayload)
    }

    /// The largest message (sum of fragment payloads) accepted.
    package let maxMessageSize: Int

    private var inProgress = false
    private var compressed = false
    private var buffer: [UInt8] = []

    /// Whether a fragmented message is in progress (a continuation frame is due next).
    package var isAssembling: Bool { inProgress }

    package init(maxMessageSize: Int) {
        self.maxMessageSize = maxMessageSize
    }

    /// Takes the next frame in wire order and returns what it completes, or `nil` for a fragment
    /// that does not finish a message.
    ///
    /// - Throws: ``FrameError`` for a continuation without a message, a new message inside another,
    ///   a binary message (unsupported), a bad close payload or a message above `maxMessageSize`.
    package mutating func push(_ frame: consuming Frame) throws(FrameError) -> Output? {
        switch frame.opcode {
        case .ping:
            return .ping(frame.payload)
        case .pong:
            return .pong
        case .close:
            return .close(try ClosePayload.decode(frame.payload))
        case .binary:
            guard !inProgress else { throw .protocolError(.expectedContinuation) }
            throw .unsupportedData
        case .text:
            guard !inProgress else { throw .protocolError(.expectedContinuation) }
            guard frame.payload.count <= maxMessageSize else { throw .messageTooBig }
            if frame.fin { return .text(frame.payload, compressed: frame.rsv1) }
            inProgress = true
            compressed = frame.rsv1
            buffer = Array(frame.payload)
            return nil
        case .continuation:
            guard inProgress else { throw .protocolError(.unexpectedContinuation) }
            guard frame.payload.count <= maxMessageSize - buffer.count else { throw .messageTooBig }
            buffer.append(contentsOf: frame.payload)
            guard frame.fin else { return nil }
            inProgress = false
            let message = buffer
            buffer = []
            return .text(message[...], compressed: compressed)
        }
    }
}
