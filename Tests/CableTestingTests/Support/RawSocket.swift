import CableReactive
import Foundation

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#endif

/// A TCP client for the bytes a real WebSocket client would never send. Reads time out after `timeout` seconds,
/// so a test cannot hang on a silent server.
///
/// Reads block, so they run on a thread of their own while the test awaits them: blocking the few threads of
/// Swift's cooperative pool would starve every other test running in parallel (and the client's tasks).
// @unchecked Sendable: used by one test task at a time; a blocking read runs on its own thread while that task
// awaits it, so the buffers are never touched concurrently.
final class RawSocket: @unchecked Sendable {
    let fd: Int32
    private var parser = FrameParser(maxFrameSize: 1 << 24)
    private var pending: [UInt8] = []

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What the server did after the bytes so far.
    enum Event: Equatable {
        case frame(Frame)
        /// The server closed its side (end of stream or reset).
        case closed
        /// Nothing arrived within the timeout.
        case timeout
    }

    init(port: UInt16, timeout: Double = 5) throws {
        #if canImport(Darwin)
            fd = socket(AF_INET, SOCK_STREAM, 0)
        #else
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #endif
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var seconds = timeval()
        seconds.tv_sec = .init(timeout.rounded(.down))
        seconds.tv_usec = .init((timeout - timeout.rounded(.down)) * 1e6)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &seconds, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "connect: errno \(code)")
        }
    }

    deinit { close(fd) }

    /// Whether a TCP connect to `port` is refused right now.
    static func isRefused(port: UInt16) -> Bool {
        do {
            _ = try RawSocket(port: port, timeout: 1)
            return false
        } catch {
            return true
        }
    }

    /// Writes all of `bytes`; false if the server went away.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        #if canImport(Darwin)
            let flags: Int32 = 0
        #else
            let flags = Int32(MSG_NOSIGNAL)
        #endif
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                posixSend(fd, $0.baseAddress.map { $0 + offset }, bytes.count - offset, flags)
            }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Reads once: the bytes, or `nil` at end of stream, on a reset or after the timeout (then `timedOut`).
    private func readSome() -> (bytes: [UInt8]?, timedOut: Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 { return (Array(buffer[0..<count]), false) }
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return (nil, true) }
        return (nil, false)
    }

    /// Reads an HTTP response head (up to the empty line); bytes after it are kept for `nextEvent`.
    private func readResponseHeadBlocking() -> String? {
        while true {
            if let end = (0..<max(0, pending.count - 3)).first(where: { pending[$0..<($0 + 4)] == [13, 10, 13, 10] }) {
                let head = String(decoding: pending[..<end], as: UTF8.self)
                pending.removeFirst(end + 4)
                return head
            }
            guard let bytes = readSome().bytes else { return nil }
            pending += bytes
        }
    }

    /// The HTTP response head and body until the server closes.
    private func readResponseToEndBlocking() -> String {
        while let bytes = readSome().bytes { pending += bytes }
        defer { pending = [] }
        return String(decoding: pending, as: UTF8.self)
    }

    /// The next server frame, or how the stream ended.
    private func nextEventBlocking() -> Event {
        while true {
            var input = pending[...]
            do {
                if let frame = try parser.parse(&input) {
                    pending = Array(input)
                    return .frame(
                        Frame(fin: frame.fin, rsv1: frame.rsv1, opcode: frame.opcode, payload: Array(frame.payload)))
                }
            } catch {
                return .closed
            }
            pending = Array(input)
            let (bytes, timedOut) = readSome()
            guard let bytes else { return timedOut ? .timeout : .closed }
            pending += bytes
        }
    }

    /// The next text frame's text, skipping pings when `skipPings`; `nil` if something else came.
    private func nextTextBlocking(skipPings: Bool = true) -> String? {
        while case .frame(let frame) = nextEventBlocking() {
            guard frame.opcode == .text else { return nil }
            let text = String(decoding: frame.payload, as: UTF8.self)
            if skipPings && text.contains(#""type":"ping""#) { continue }
            return text
        }
        return nil
    }

    /// Reads until the server closes: the close frame's code if one came first (nil for none), and whether the
    /// stream then ended.
    private func waitForCloseBlocking() -> (code: UInt16?, ended: Bool) {
        var code: UInt16?
        while true {
            switch nextEventBlocking() {
            case .frame(let frame) where frame.opcode == .close:
                let payload = Array(frame.payload)
                code = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : 1005
            case .frame:
                continue
            case .closed:
                return (code, true)
            case .timeout:
                return (code, false)
            }
        }
    }

    /// A valid upgrade request for `path`, with `extra` header lines.
    static func upgradeRequest(
        path: String = "/cable", protocols: String? = "actioncable-v1-json", extra: [String] = []
    )
        -> String
    {
        var lines = [
            "GET \(path) HTTP/1.1", "Host: 127.0.0.1", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
        ]
        if let protocols { lines.append("Sec-WebSocket-Protocol: \(protocols)") }
        return (lines + extra).joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// Upgrades and returns the response head.
    private func upgradeBlocking(
        path: String = "/cable", protocols: String? = "actioncable-v1-json", extra: [String] = []
    ) -> String? {
        send(Self.upgradeRequest(path: path, protocols: protocols, extra: extra))
        return readResponseHeadBlocking()
    }

    /// A masked client frame, as a client must send it.
    static func clientFrame(_ opcode: FrameOpcode, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = []
        FrameEncoder.encode(opcode: opcode, payload: payload, fin: fin, maskingKey: 0x1234_5678, into: &bytes)
        return bytes
    }

    /// Sends `text` as one masked text frame.
    @discardableResult
    func sendText(_ text: String) -> Bool { send(Self.clientFrame(.text, Array(text.utf8))) }
}

/// `send(2)`, which `RawSocket.send(_:)` hides inside the class.
private func posixSend(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    send(fd, bytes, count, flags)
}

extension RawSocket {
    /// Runs a blocking read on a new thread and waits for it without holding a cooperative thread.
    private func offThread<T: Sendable>(_ body: @escaping @Sendable (RawSocket) -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body(self)) }.start()
        }
    }

    /// Reads an HTTP response head (up to the empty line); bytes after it are kept for `nextEvent`.
    func readResponseHead() async -> String? { await offThread { $0.readResponseHeadBlocking() } }

    /// The HTTP response head and body until the server closes.
    func readResponseToEnd() async -> String { await offThread { $0.readResponseToEndBlocking() } }

    /// The next server frame, or how the stream ended.
    func nextEvent() async -> Event { await offThread { $0.nextEventBlocking() } }

    /// The next text frame's text, skipping pings when `skipPings`; `nil` if something else came.
    func nextText(skipPings: Bool = true) async -> String? {
        await offThread { $0.nextTextBlocking(skipPings: skipPings) }
    }

    /// Reads until the server closes: the close frame's code if one came first (nil for none), and whether the
    /// stream then ended.
    func waitForClose() async -> (code: UInt16?, ended: Bool) { await offThread { $0.waitForCloseBlocking() } }

    /// Upgrades and returns the response head.
    func upgrade(path: String = "/cable", protocols: String? = "actioncable-v1-json", extra: [String] = []) async
        -> String?
    {
        await offThread { $0.upgradeBlocking(path: path, protocols: protocols, extra: extra) }
    }
}
