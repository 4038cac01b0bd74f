import CableReactive

/// One accepted TCP connection, owned by the server thread: its phase, its bounded input and output buffers
/// and its WebSocket decoder. The Action Cable logic lives in `ServerLoop`; this type moves bytes.
final class ServerConnection {
    enum Phase: Equatable {
        /// Reading the HTTP upgrade request.
        case handshake
        /// Upgraded: reading frames.
        case open
        /// We sent a close frame and still read, waiting for the client's close frame.
        case closing
        /// Writing what is left, then half-closing and discarding input until the client closes or the
        /// deadline passes. Nothing more is sent or handled.
        case finishing
        /// Frozen by a stall fault: not polled, not read, not written, until dropped or the server stops.
        case stalled
        /// The socket is closed; the loop forgets the connection.
        case closed
    }

    let id: LocalCableServer.ConnectionID
    let fd: Int32
    var phase = Phase.handshake
    /// When the current phase gives up: the handshake timeout, or the close timeout once closing.
    var deadline: UInt64?
    /// The upgrade request, once read.
    var request: LocalCableServer.Request?
    /// The upgrade request head read so far.
    var head: [UInt8] = []
    var parser: FrameParser
    var assembler: MessageAssembler
    /// Bytes to write; `outputStart` is how much of it is written.
    private var output: [UInt8] = []
    private var outputStart = 0
    private let maxOutboundBytes: Int
    /// Whether `shutdown(SHUT_WR)` was done (finishing).
    private var halfClosed = false
    /// The read throttle (``LocalCableServer/throttleReading(_:bytesPerSecond:)``): a token bucket of bytes
    /// that refills at `rate` a second and holds at most `burst`, a tenth of a second's worth.
    private var throttle: (rate: Int, burst: Double, tokens: Double, refilledAt: UInt64)?
    /// While throttled and out of tokens: when reading resumes (the loop's poll wakes up then).
    private(set) var readResumesAt: UInt64?

    /// When the welcome is due (a delayed welcome), and whether it was sent.
    var welcomeAt: UInt64?
    var isWelcomed = false
    /// Text messages received before the welcome, to run after it.
    var heldMessages: [LocalCableServer.ReceivedCommand] = []
    /// Confirmed subscriptions in order: the identifier as sent, its decoded params and its stream.
    var subscriptions: [ServerSubscription] = []
    /// Whether the upgrade chose AnyCable's extended protocol (with reliable streams on).
    var isExtended = false
    /// The extended session's id, from its welcome on.
    var sessionID: String?
    /// The identifiers restored from a previous session, for the welcome; `nil` when nothing was restored.
    var restoredIdentifiers: [String]?
    /// `history` answers still being sent, a chunk per loop turn (``LocalCableServer/ReliableStreams/replayChunk``),
    /// oldest first: the frames left, then the answer that ends them.
    var replays: [(frames: ArraySlice<String>, answer: String)] = []

    init(id: LocalCableServer.ConnectionID, fd: Int32, options: LocalCableServer.Options, now: UInt64) {
        self.id = id
        self.fd = fd
        parser = FrameParser(maxFrameSize: options.maxMessageSize, role: .server)
        assembler = MessageAssembler(maxMessageSize: options.maxMessageSize)
        maxOutboundBytes = options.maxOutboundBytes
        deadline = now + nanoseconds(options.handshakeTimeout)
    }

    /// Whether the upgrade happened and the socket is not closed: what ``LocalCableServer/connectionCount``
    /// counts.
    var isUpgraded: Bool { request?.status == 101 && phase != .closed }

    var hasOutput: Bool { outputStart < output.count }

    /// The poll events this connection waits for; `nil` when it must not be polled at all.
    var pollEvents: Int16? {
        switch phase {
        case .stalled, .closed: return nil
        case .handshake, .open, .closing, .finishing:
            var events = readResumesAt == nil ? Socket.pollIn : 0
            if hasOutput { events |= Socket.pollOut }
            return events
        }
    }

    /// Limits reads to `bytesPerSecond` (`nil`: no limit), and shrinks the socket's receive buffer while limited.
    func throttleReading(bytesPerSecond rate: Int?, now: UInt64) {
        guard let rate else {
            throttle = nil
            readResumesAt = nil
            return
        }
        let burst = Double(max(1, rate / 10))
        throttle = (rate, burst, burst, now)
        readResumesAt = nil
        Socket.setReceiveBuffer(fd, bytes: 64 << 10)
    }

    /// How many bytes may be read now, at most `buffer`; 0 (and a ``readResumesAt``) when the throttle's bucket
    /// is empty.
    func readAllowance(now: UInt64, buffer: Int) -> Int {
        guard var throttle else { return buffer }
        let elapsed = Double(now &- throttle.refilledAt) / 1e9
        throttle.tokens = min(throttle.burst, throttle.tokens + elapsed * Double(throttle.rate))
        throttle.refilledAt = now
        self.throttle = throttle
        guard throttle.tokens >= 1 else {
            let wait = (1 - throttle.tokens) / Double(throttle.rate)
            readResumesAt = now + max(1_000_000, UInt64(wait * 1e9))
            return 0
        }
        readResumesAt = nil
        return min(buffer, Int(throttle.tokens))
    }

    /// Polls for input again once ``readResumesAt`` has passed; the next read refills the bucket.
    func resumeReading() {
        readResumesAt = nil
    }

    /// Takes `count` read bytes from the throttle's bucket; once it is empty, ``readAllowance(now:buffer:)``
    /// sets when reading resumes.
    func didRead(_ count: Int) {
        throttle?.tokens -= Double(count)
    }

    /// Queues `bytes`. Returns `false`, queueing nothing, when that would pass ``Options/maxOutboundBytes``:
    /// the client does not read, and the caller drops it.
    @discardableResult
    func enqueue(_ bytes: [UInt8]) -> Bool {
        guard phase != .stalled, phase != .closed, phase != .finishing || !halfClosed else { return true }
        guard output.count - outputStart + bytes.count <= maxOutboundBytes else { return false }
        if outputStart > 0 && outputStart >= output.count / 2 {
            output.removeFirst(outputStart)
            outputStart = 0
        }
        output.append(contentsOf: bytes)
        return true
    }

    /// Queues one unmasked server frame.
    @discardableResult
    func enqueueFrame(_ opcode: FrameOpcode, _ payload: [UInt8]) -> Bool {
        enqueue(ServerFrame.encode(opcode: opcode, payload: payload))
    }

    /// Queues a text frame holding `text`.
    @discardableResult
    func enqueueText(_ text: String) -> Bool {
        enqueueFrame(.text, Array(text.utf8))
    }

    /// Writes what the socket takes now. Returns `false` when the socket failed (the caller closes it).
    func flush() -> Bool {
        while hasOutput {
            let result = output.withUnsafeBytes { buffer in
                Socket.write(fd, UnsafeRawBufferPointer(rebasing: buffer[outputStart...]))
            }
            switch result {
            case .done(let count): outputStart += count
            case .wouldBlock: return true
            case .endOfStream, .failed: return false
            }
        }
        output.removeAll(keepingCapacity: output.count <= 65_536)
        outputStart = 0
        if phase == .finishing && !halfClosed {
            halfClosed = true
            Socket.shutdownWrite(fd)
        }
        return true
    }

    /// Moves to ``Phase/finishing``: send what is queued, half-close, wait for the client to close.
    func finish(deadline: UInt64) {
        guard phase != .closed, phase != .finishing else { return }
        phase = .finishing
        self.deadline = deadline
    }

    /// Closes the socket; idempotent.
    func close() {
        guard phase != .closed else { return }
        phase = .closed
        Socket.close(fd)
    }
}

/// Seconds as nanoseconds for deadlines, clamped to what a deadline can hold.
func nanoseconds(_ seconds: Double) -> UInt64 {
    guard seconds.isFinite, seconds > 0 else { return 0 }
    return seconds >= 1e9 ? UInt64(1e18) : UInt64(seconds * 1e9)
}

/// Writes server frames (RFC 6455 §5.2): final, unmasked, with 7-, 16- or 64-bit lengths.
enum ServerFrame {
    static func encode(opcode: FrameOpcode, payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode.rawValue]
        frame.reserveCapacity(payload.count + 10)
        let count = payload.count
        if count <= 125 {
            frame.append(UInt8(count))
        } else if count <= 0xFFFF {
            frame += [126, UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count)]
        } else {
            frame.append(127)
            for shift in stride(from: 56, through: 0, by: -8) {
                frame.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift)))
            }
        }
        frame += payload
        return frame
    }
}
