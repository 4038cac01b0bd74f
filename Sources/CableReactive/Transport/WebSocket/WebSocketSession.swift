#if os(Linux) && canImport(CCableReactiveZlib)
    /// The RFC 6455 state of one open connection, without any I/O: bytes in, events and bytes out.
    ///
    /// It decodes frames, reassembles and validates messages, answers pings, runs the close handshake
    /// and fails the connection with the right close code when the peer breaks the protocol. The
    /// socket layer feeds it received bytes and writes whatever it appends to `output`.
    /// Once ``outcome`` is set the session is over: it ignores further input and sends nothing more.
    package struct WebSocketSession {
        private enum Phase {
            case open
            /// We sent a close frame with this payload and wait for the peer's.
            case closeSent(ClosePayload)
        }

        /// How the connection ended, once it has; the socket layer then flushes `output` and closes.
        package private(set) var outcome: WebSocketCloseInfo?

        private var phase = Phase.open
        private var parser: FrameParser
        private var assembler: MessageAssembler
        private let deflater: MessageDeflater?
        private var random: any RandomNumberGenerator
        /// The pong owed for the newest ping while ``holdsPongs`` is set.
        private var heldPong: [UInt8]?

        /// While set, a ping's pong is kept instead of written to `output`, and only the newest one is kept
        /// (RFC 6455 §5.5.3 allows answering just the most recent ping). The socket layer sets it while the
        /// peer is not taking what we send, so a peer that pings but does not read cannot grow our outbound
        /// queue, and reading never has to stop. ``releaseHeldPong(into:)`` writes the kept pong.
        package var holdsPongs = false
        /// A pong arrived since ``takePong()`` was last called.
        private var pongReceived = false

        /// - Parameters:
        ///   - maxFrameSize: the largest frame payload accepted (larger: close 1009).
        ///   - maxMessageSize: the largest message, after inflating (larger: close 1009).
        ///   - deflater: the permessage-deflate codec, when the handshake negotiated it.
        ///   - random: the source of masking keys.
        package init(
            maxFrameSize: Int,
            maxMessageSize: Int,
            deflater: MessageDeflater? = nil,
            random: any RandomNumberGenerator
        ) {
            parser = FrameParser(maxFrameSize: maxFrameSize, allowsCompression: deflater != nil)
            assembler = MessageAssembler(maxMessageSize: maxMessageSize)
            self.deflater = deflater
            self.random = random
        }

        /// Whether messages may be sent: open, and no close frame sent or received.
        package var isOpen: Bool {
            if outcome != nil { return false }
            if case .open = phase { return true }
            return false
        }

        /// Consumes `input`, appending any frames to send (pongs, close) to `output` and passing each
        /// complete text message to `onText`, in order.
        package mutating func receive(
            _ input: inout ArraySlice<UInt8>,
            output: inout [UInt8],
            onText: (String) -> Void
        ) {
            receive(&input, output: &output) { (utf8: UnsafeBufferPointer<UInt8>) in
                onText(String(decoding: utf8, as: UTF8.self))
            }
        }

        /// ``receive(_:output:onText:)`` without creating a `String`: `onText` gets each message's
        /// validated UTF-8, which is valid only during the call.
        package mutating func receive(
            _ input: inout ArraySlice<UInt8>,
            output: inout [UInt8],
            onText: (UnsafeBufferPointer<UInt8>) -> Void
        ) {
            while outcome == nil {
                if !assembler.isAssembling, isOpen {
                    let limit = min(parser.maxFrameSize, assembler.maxMessageSize)
                    let consumed = input.withUnsafeBufferPointer { parser.takePlainTexts($0, limit: limit, onText) }
                    input.removeFirst(consumed)
                }
                do throws(FrameError) {
                    guard let frame = try parser.parse(&input) else { return }
                    if case .text = frame.opcode, frame.fin, !frame.rsv1, !assembler.isAssembling,
                        frame.payload.count <= assembler.maxMessageSize, isOpen
                    {
                        // Common case, one uncompressed frame per message: skip the assembler.
                        guard UTF8Validation.isValid(frame.payload) else { throw .invalidUTF8 }
                        frame.payload.withUnsafeBufferPointer(onText)
                        continue
                    }
                    guard let message = try assembler.push(frame) else { continue }
                    switch message {
                    case .text(let payload, let compressed):
                        guard case .open = phase else { continue }  // we are closing: drop data
                        try decodeText(payload, compressed: compressed).withUnsafeBufferPointer(onText)
                    case .ping(let payload):
                        guard case .open = phase else { continue }
                        if holdsPongs {
                            heldPong = Array(payload)
                        } else {
                            encode(.pong, Array(payload), into: &output)
                        }
                    case .pong:
                        pongReceived = true
                    case .close(let peer):
                        closeReceived(peer, output: &output)
                    }
                } catch {
                    fail(error, output: &output)
                }
            }
        }

        /// Appends a ping frame (no payload) to `output`, to ask the peer for a pong (RFC 6455 §5.5.2: it must
        /// answer). Does nothing unless open.
        package mutating func ping(output: inout [UInt8]) {
            guard isOpen else { return }
            encode(.ping, [], into: &output)
        }

        /// Whether a pong arrived since the last call.
        package mutating func takePong() -> Bool {
            defer { pongReceived = false }
            return pongReceived
        }

        /// Writes the pong kept while ``holdsPongs`` was set, if any, unless a close frame was sent or received.
        package mutating func releaseHeldPong(into output: inout [UInt8]) {
            guard let payload = heldPong else { return }
            heldPong = nil
            guard isOpen else { return }
            encode(.pong, payload, into: &output)
        }

        /// Appends a text message to `output` (compressed when negotiated). Does nothing unless open.
        package mutating func send(text utf8: [UInt8], output: inout [UInt8]) {
            guard isOpen else { return }
            if let deflater {
                encode(.text, deflater.deflate(utf8), rsv1: true, into: &output)
            } else {
                encode(.text, utf8, into: &output)
            }
        }

        /// Starts the close handshake: appends a close frame with `code` and `reason` (cut to 123
        /// bytes) to `output`. Does nothing unless open. Codes that may not be sent (1005, 1006, 1015
        /// and unassigned ones) are replaced by 1000.
        package mutating func close(code: WebSocketCloseCode, reason: String, output: inout [UInt8]) {
            guard isOpen else { return }
            let payload = ClosePayload(sending: code.rawValue, reason: reason)
            encode(.close, payload.encoded, into: &output)
            phase = .closeSent(payload)
        }

        /// The transport ended (EOF, reset, or the close timeout passed) before the handshake finished.
        package mutating func connectionLost(_ error: WebSocketError = WebSocketError(.abnormalClosure)) {
            guard outcome == nil else { return }
            outcome = .failed(error)
        }

        /// The message's validated UTF-8, inflated when compressed.
        private mutating func decodeText(
            _ payload: ArraySlice<UInt8>, compressed: Bool
        ) throws(FrameError) -> ArraySlice<UInt8> {
            var text = payload
            if compressed {
                guard let deflater else { throw .protocolError(.reservedBitsSet) }
                text = try deflater.inflate(Array(payload), limit: assembler.maxMessageSize)[...]
            }
            guard UTF8Validation.isValid(text) else { throw .invalidUTF8 }
            return text
        }

        private mutating func closeReceived(_ peer: ClosePayload, output: inout [UInt8]) {
            switch phase {
            case .open:
                // Echo the peer's code (RFC 6455 §5.5.1); an empty close is answered with an empty one.
                encode(.close, ClosePayload(code: peer.code, reason: "").encoded, into: &output)
                let code = WebSocketCloseCode(rawValue: peer.code ?? WebSocketCloseCode.noStatusReceived.rawValue)
                outcome = .closed(code: code, reason: peer.reason)
            case .closeSent(let ours):
                let code = WebSocketCloseCode(rawValue: ours.code ?? WebSocketCloseCode.noStatusReceived.rawValue)
                outcome = .closed(code: code, reason: ours.reason)
            }
        }

        private mutating func fail(_ error: FrameError, output: inout [UInt8]) {
            if case .open = phase {
                encode(.close, ClosePayload(code: error.closeCode, reason: "").encoded, into: &output)
            }
            let code = WebSocketCloseCode(rawValue: error.closeCode)
            let kind: WebSocketError.Kind =
                error == .messageTooBig
                ? .messageTooBig(limit: min(parser.maxFrameSize, assembler.maxMessageSize))
                : .protocolViolation(closeCode: code)
            outcome = .failed(WebSocketError(kind, detail: "\(error)"))
        }

        private mutating func encode(
            _ opcode: FrameOpcode, _ payload: [UInt8], rsv1: Bool = false, into output: inout [UInt8]
        ) {
            let key = UInt32(truncatingIfNeeded: random.next())
            FrameEncoder.encode(opcode: opcode, payload: payload, rsv1: rsv1, maskingKey: key, into: &output)
        }
    }
#endif
