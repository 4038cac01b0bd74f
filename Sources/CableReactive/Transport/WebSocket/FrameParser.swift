/// An incremental, bounded decoder for WebSocket frames (RFC 6455 §5.2): by default the frames a server
/// sends to a client; with ``Role/server``, the masked frames a client sends to a server.
///
/// Feed it bytes as they arrive with ``parse(_:)``; it returns a frame once one is complete and `nil`
/// when it needs more input. It never buffers more than `maxFrameSize` payload bytes, and it checks
/// every header rule before it buffers any payload:
/// reserved bits, unknown opcodes, fragmented or oversized control frames, masking (a server must not
/// mask, a client must), 64-bit lengths with the top bit set, and the size limit.
///
/// After an error the parser stays failed and throws the same error again.
///
/// ```swift
/// var parser = FrameParser(maxFrameSize: 1 << 16)
/// var input = ArraySlice<UInt8>([0x81, 0x02, 0x68, 0x69])
/// let frame = try parser.parse(&input)  // Frame(opcode: .text, payload: "hi")
/// ```
package struct FrameParser: Sendable {
    /// Which end of the connection parses: the rule for the MASK bit follows from it (§5.1).
    package enum Role: Sendable {
        /// A client decoding server frames: a masked frame is a protocol error.
        case client
        /// A server decoding client frames: an unmasked frame is a protocol error, and payloads are
        /// unmasked before they are returned.
        case server
    }

    /// The wire position the parser is at.
    private enum State: Sendable {
        /// Waiting for byte 1: FIN, RSV1-3, opcode.
        case firstByte
        /// Waiting for byte 2: MASK and the 7-bit length.
        case secondByte
        /// Reading a 16-bit (width 2) or 64-bit (width 8) extended length, big-endian.
        case extendedLength(width: Int, remaining: Int, value: UInt64)
        /// Reading the 4-byte masking key of a client frame (server role only); the client role rejects
        /// a masked frame at byte 2, before any key arrives.
        case maskingKey(remaining: Int, key: UInt32)
        /// Reading `remaining` more payload bytes.
        case payload(remaining: Int)
        /// A rule was broken; the connection must close.
        case failed(FrameError)
    }

    /// The largest payload one frame may carry.
    package let maxFrameSize: Int
    /// Whether RSV1 may be set on the first frame of a data message (permessage-deflate negotiated).
    package var allowsCompression: Bool
    /// Which end parses; see ``Role``.
    package let role: Role

    private var state: State = .firstByte
    private var fin = false
    private var rsv1 = false
    private var opcode = FrameOpcode.continuation
    /// The payload length announced by the current frame's header.
    private var length = 0
    /// The payload collected so far when a frame spans several inputs.
    private var payload: [UInt8] = []
    /// The current frame's masking key, big-endian (server role only).
    private var maskingKey: UInt32?

    /// - Parameters:
    ///   - maxFrameSize: the largest payload accepted in one frame; larger frames fail with
    ///     ``FrameError/messageTooBig`` before any payload is buffered.
    ///   - allowsCompression: accept RSV1 on data frames (only after negotiating permessage-deflate).
    ///   - role: `.client` (the default) decodes server frames; `.server` decodes masked client frames.
    package init(maxFrameSize: Int, allowsCompression: Bool = false, role: Role = .client) {
        precondition(maxFrameSize >= 125, "API misuse: maxFrameSize must allow a control frame (125 bytes)")
        self.maxFrameSize = maxFrameSize
        self.allowsCompression = allowsCompression
        self.role = role
    }

    /// Whether the parser waits for the first byte of a frame (no partial frame held, not failed).
    package var isAtFrameBoundary: Bool {
        if case .firstByte = state { return true }
        return false
    }

    /// The parser's fast path, for the common case of a client reading a run of small text messages: at a
    /// frame boundary, hands each complete, unfragmented, uncompressed, unmasked text frame at the start of
    /// `buffer` with a payload of at most `limit` bytes (7- or 16-bit length) and valid UTF-8 to `onText`,
    /// and returns how many bytes those frames took.
    ///
    /// It stops at the first frame that is anything else, or incomplete, and leaves it to ``parse(_:)``,
    /// which handles every case and every error; so the two never disagree about what a frame is. Only in
    /// the client role (a server's frames are unmasked) and only at a frame boundary; otherwise it takes
    /// nothing.
    package func takePlainTexts(
        _ buffer: UnsafeBufferPointer<UInt8>,
        limit: Int,
        _ onText: (UnsafeBufferPointer<UInt8>) -> Void
    ) -> Int {
        guard case .client = role, isAtFrameBoundary, let base = buffer.baseAddress else { return 0 }
        let count = buffer.count
        var index = 0
        // 0x81: FIN, no reserved bits, opcode text. A second byte of 126 or less: unmasked, 7-bit length
        // or 126 for a 16-bit one (a set mask bit makes it 128 or more).
        while count - index >= 2 && base[index] == 0x81 && base[index + 1] <= 126 {
            var header = 2
            var length = Int(base[index + 1])
            if length == 126 {
                guard count - index >= 4 else { break }
                length = Int(base[index + 2]) << 8 | Int(base[index + 3])
                header = 4
            }
            guard length <= limit, length <= maxFrameSize, count - index - header >= length else { break }
            let payload = UnsafeBufferPointer(start: base + index + header, count: length)
            guard UTF8Validation.isValid(payload) else { break }
            onText(payload)
            index += header + length
        }
        return index
    }

    /// Consumes bytes from the front of `input` and returns the next complete frame, or `nil` when
    /// `input` ran out first. Bytes after a complete frame stay in `input`.
    ///
    /// - Throws: ``FrameError`` when the peer broke a rule; every later call throws it again.
    package mutating func parse(_ input: inout ArraySlice<UInt8>) throws(FrameError) -> Frame? {
        if case .failed(let error) = state { throw error }
        do {
            return try advance(&input)
        } catch {
            state = .failed(error)  // stay failed: the connection must close
            throw error
        }
    }

    /// One step of the state machine per wire field, until a frame is complete or input runs out.
    ///
    /// Reads by index and trims `input` once on exit: popping byte by byte would re-slice (and so
    /// retain and release the buffer) for every header byte.
    private mutating func advance(_ input: inout ArraySlice<UInt8>) throws(FrameError) -> Frame? {
        var index = input.startIndex
        let end = input.endIndex
        defer { input.removeFirst(index - input.startIndex) }
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .firstByte:
                guard index < end else { return nil }
                try acceptFirstByte(input[index])
                index += 1
                state = .secondByte
            case .secondByte:
                guard index < end else { return nil }
                let byte = input[index]
                index += 1
                try acceptSecondByte(byte)
            case .extendedLength(let width, var remaining, var value):
                while remaining > 0 && index < end {
                    value = value << 8 | UInt64(input[index])
                    index += 1
                    remaining -= 1
                }
                guard remaining == 0 else {
                    state = .extendedLength(width: width, remaining: remaining, value: value)
                    return nil
                }
                try acceptExtendedLength(value, width: width)
            case .maskingKey(var remaining, var key):
                while remaining > 0 && index < end {
                    key = key << 8 | UInt32(input[index])
                    index += 1
                    remaining -= 1
                }
                guard remaining == 0 else {
                    state = .maskingKey(remaining: remaining, key: key)
                    return nil
                }
                maskingKey = key
                state = .payload(remaining: length)
            case .payload(let remaining):
                let available = end - index
                if let key = maskingKey, available >= remaining {
                    // A client frame: the payload must be copied to unmask it.
                    payload.append(contentsOf: input[index..<(index + remaining)])
                    index += remaining
                    Self.unmask(&payload, key: key)
                    maskingKey = nil
                    state = .firstByte
                    let frame = Frame(fin: fin, rsv1: rsv1, opcode: opcode, payload: payload[...])
                    payload = []
                    return frame
                }
                if remaining == length && available >= remaining {
                    // Fast path: the whole payload is in this input; hand out a slice, no copy.
                    let frame = Frame(fin: fin, rsv1: rsv1, opcode: opcode, payload: input[index..<(index + remaining)])
                    index += remaining
                    state = .firstByte
                    return frame
                }
                if payload.isEmpty { payload.reserveCapacity(length) }
                let take = min(remaining, available)
                payload.append(contentsOf: input[index..<(index + take)])
                index += take
                guard take == remaining else {
                    state = .payload(remaining: remaining - take)
                    return nil
                }
                state = .firstByte
                let frame = Frame(fin: fin, rsv1: rsv1, opcode: opcode, payload: payload[...])
                payload = []
                return frame
            }
        }
    }

    private mutating func acceptFirstByte(_ byte: UInt8) throws(FrameError) {
        guard let opcode = FrameOpcode(rawValue: byte & 0x0F) else {
            throw .protocolError(.unknownOpcode(byte & 0x0F))
        }
        let fin = byte & 0x80 != 0
        let rsv1 = byte & 0x40 != 0
        if byte & 0x30 != 0 { throw .protocolError(.reservedBitsSet) }
        if opcode.isControl && !fin { throw .protocolError(.fragmentedControlFrame) }
        if rsv1 {
            // RFC 7692 §6: RSV1 marks the first frame of a compressed data message, nothing else.
            let isFirstDataFrame = opcode == .text || opcode == .binary
            guard allowsCompression && isFirstDataFrame else { throw .protocolError(.reservedBitsSet) }
        }
        self.fin = fin
        self.rsv1 = rsv1
        self.opcode = opcode
    }

    private mutating func acceptSecondByte(_ byte: UInt8) throws(FrameError) {
        let masked = byte & 0x80 != 0
        switch role {
        case .client: if masked { throw .protocolError(.maskedServerFrame) }
        case .server: if !masked { throw .protocolError(.unmaskedClientFrame) }
        }
        let length = byte & 0x7F
        if opcode.isControl && length > 125 { throw .protocolError(.controlFrameTooLong) }
        switch length {
        case 126: state = .extendedLength(width: 2, remaining: 2, value: 0)
        case 127: state = .extendedLength(width: 8, remaining: 8, value: 0)
        default: try beginPayload(Int(length))
        }
    }

    private mutating func acceptExtendedLength(_ value: UInt64, width: Int) throws(FrameError) {
        // RFC 6455 §5.2: the most significant bit of a 64-bit length must be 0.
        if width == 8 && value & (1 << 63) != 0 { throw .protocolError(.lengthOverflow) }
        guard let length = Int(exactly: value) else { throw .protocolError(.lengthOverflow) }
        try beginPayload(length)
    }

    private mutating func beginPayload(_ length: Int) throws(FrameError) {
        guard length <= maxFrameSize else { throw .messageTooBig }
        self.length = length
        switch role {
        case .client: state = .payload(remaining: length)
        case .server: state = .maskingKey(remaining: 4, key: 0)
        }
    }

    /// XORs `bytes` with the 4-byte `key` (its bytes in big-endian order), from the payload's first byte.
    private static func unmask(_ bytes: inout [UInt8], key: UInt32) {
        let mask: [UInt8] = [
            UInt8(truncatingIfNeeded: key >> 24), UInt8(truncatingIfNeeded: key >> 16),
            UInt8(truncatingIfNeeded: key >> 8), UInt8(truncatingIfNeeded: key),
        ]
        for index in bytes.indices { bytes[index] ^= mask[index & 3] }
    }
}
