// Inbound throughput of SocketTransport against the limit of the machine's loopback.
//
//     swift run -c release TransportBenchmark [payload sizes...]
//
// For each payload size, an in-process sender thread answers the upgrade and then streams
// pre-encoded, unmasked text frames over loopback TCP as fast as `send` allows. The same byte stream
// is read three times: by SocketTransport delivering a `.text(String)` event per message, by
// SocketTransport handing each message's UTF-8 bytes to a `TextReceiver` (the path ActionCableClient
// uses; frames parsed and UTF-8 checked the same way), and by a minimal blocking `recv` loop that only
// counts bytes, which is the ceiling. The ratio is SocketTransport time / ceiling time (1.0 = as fast
// as the bare loop; the target is 2 or less). Each figure is the best of 5, and each run waits for the
// previous connection to close, so runs do not overlap. On a small VM a ratio below 1 is possible: the
// transport's non-blocking reads after poll() can beat the bare loop's blocking recv.

#if os(Linux)
    import BenchSupport
    import CableReactive
    import Foundation

    /// `count` unmasked server text frames of `payload` bytes each.
    func frames(payload: Int, count: Int) -> [UInt8] {
        let frame = serverTextFrame((0..<payload).map { UInt8(0x61 + $0 % 26) })
        return Array([[UInt8]](repeating: frame, count: count).joined())
    }

    /// Serves one connection per `serve` call on the shared loopback listener.
    final class Sender: Sendable {
        let listener = LoopbackListener()
        var port: Int { listener.port }

        /// On a new thread: accepts one client, answers its upgrade, sends `block` `repeats` times, then
        /// reads until the client closes.
        func serve(block: [UInt8], repeats: Int) {
            Thread { [listener] in
                guard let (fd, _) = listener.acceptUpgrade() else { return }
                defer { close(fd) }
                for _ in 0..<repeats {
                    guard sendAll(fd, block) else { return }
                }
                var buffer = [UInt8](repeating: 0, count: 16_384)
                while buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }) > 0 {}
            }.start()
        }
    }

    /// Seconds for SocketTransport to deliver `messages` text messages: as `.text(String)` events, or (`bytes`)
    /// as UTF-8 bytes to a `TextReceiver`, the path ActionCableClient uses.
    func measureTransport(sender: Sender, block: [UInt8], repeats: Int, messages: Int, bytes: Bool) -> Double {
        sender.serve(block: block, repeats: repeats)
        let done = DispatchSemaphore(value: 0)
        let closed = DispatchSemaphore(value: 0)
        final class Counter: @unchecked Sendable {
            // Touched only by the connection's I/O thread (events are serial).
            var count = 0
            var start = DispatchTime.now()
            var end = DispatchTime.now()
        }
        let counter = Counter()
        var options = SocketTransport.Options()
        options.maxFrameSize = 1 << 16
        options.closeTimeout = 0.2  // the sender never answers a close frame; do not wait 5 s for it
        let request = CableRequest(url: URL(string: "ws://127.0.0.1:\(sender.port)/") ?? URL(fileURLWithPath: "/"))
        let count: @Sendable () -> Void = {
            counter.count += 1
            if counter.count == messages {
                counter.end = .now()
                done.signal()
            }
        }
        let handler: @Sendable (WebSocketEvent) -> Void = { event in
            switch event {
            case .opened: counter.start = .now()
            case .text: count()
            case .closed:
                if counter.count < messages { done.signal() }
                closed.signal()
            }
        }
        let transport = SocketTransport(options: options)
        let connection =
            bytes
            ? transport.connect(
                request: request, protocols: [], receiver: TextReceiver(text: { _ in count() }, batchEnded: {}),
                handler: handler)
            : transport.connect(request: request, protocols: [], handler: handler)
        done.wait()
        connection.close(code: .normalClosure, reason: "")
        _ = closed.wait(timeout: .now() + 10)  // let this connection's threads finish before the next run
        precondition(counter.count == messages, "transport delivered \(counter.count) of \(messages)")
        return Double(counter.end.uptimeNanoseconds - counter.start.uptimeNanoseconds) / 1e9
    }

    /// Seconds for a bare blocking `recv` loop to read the same stream (after the 101 answer).
    func measureBaseline(sender: Sender, block: [UInt8], repeats: Int) -> Double {
        sender.serve(block: block, repeats: repeats)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        address.sin_port = UInt16(sender.port).bigEndian
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        let request = "GET / HTTP/1.1\r\nHost: x\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let total = block.count * repeats
        var received = 0
        var start: DispatchTime?
        var headSkipped = false
        while received < total {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            if !headSkipped, let range = buffer[0..<count].firstRange(of: [13, 10, 13, 10]) {
                headSkipped = true
                start = .now()
                received += count - range.upperBound
            } else {
                received += count
            }
        }
        let end = DispatchTime.now()
        return Double(end.uptimeNanoseconds - (start ?? end).uptimeNanoseconds) / 1e9
    }

    /// Seconds for WebSocketSession alone (no sockets, no threads) to turn `block` into messages
    /// `repeats` times: the cost of parsing, UTF-8 checking and String creation per message.
    func measureSessionOnly(block: [UInt8], repeats: Int, strings: Bool) -> (seconds: Double, messages: Int) {
        var session = WebSocketSession(
            maxFrameSize: 1 << 16, maxMessageSize: 1 << 20, random: SystemRandomNumberGenerator())
        var output: [UInt8] = []
        var messages = 0
        var bytes = 0
        let start = DispatchTime.now()
        for _ in 0..<repeats {
            var input = block[...]
            if strings {
                session.receive(&input, output: &output) { (text: String) in messages += 1 }
            } else {
                session.receive(&input, output: &output) { (utf8: UnsafeBufferPointer<UInt8>) in
                    messages += 1
                    bytes &+= utf8.count
                }
            }
        }
        precondition(strings || bytes > 0)
        let end = DispatchTime.now()
        return (Double(end.uptimeNanoseconds - start.uptimeNanoseconds) / 1e9, messages)
    }

    let sender = Sender()
    let volume = 256 << 20  // bytes per measurement
    print("payload   delivery  transport frames/s   transport MB/s   recv-loop MB/s   ratio (limit/transport)")
    // Optional arguments: payload sizes to run instead of the default three.
    let sizes = CommandLine.arguments.dropFirst().compactMap { Int($0) }.filter { $0 > 0 && $0 <= 65_535 }
    for payload in sizes.isEmpty ? [64, 512, 4096] : sizes {
        let frameSize = payload + (payload <= 125 ? 2 : 4)
        let framesPerBlock = max(1, (1 << 20) / frameSize)
        let block = frames(payload: payload, count: framesPerBlock)
        let repeats = volume / block.count
        let messages = framesPerBlock * repeats
        var best = (strings: Double.infinity, bytes: Double.infinity, baseline: Double.infinity)
        for _ in 0..<5 {
            best.strings = min(
                best.strings,
                measureTransport(sender: sender, block: block, repeats: repeats, messages: messages, bytes: false))
            best.bytes = min(
                best.bytes,
                measureTransport(sender: sender, block: block, repeats: repeats, messages: messages, bytes: true))
            best.baseline = min(best.baseline, measureBaseline(sender: sender, block: block, repeats: repeats))
        }
        let volumeBytes = Double(block.count * repeats)
        for (label, seconds) in [("String", best.strings), ("bytes", best.bytes)] {
            let line = [
                String(payload).padding(toLength: 10, withPad: " ", startingAt: 0),
                label.padding(toLength: 8, withPad: " ", startingAt: 0),
                String(format: "%20.0f", Double(messages) / seconds),
                String(format: "%17.0f", volumeBytes / seconds / 1e6),
                String(format: "%17.0f", volumeBytes / best.baseline / 1e6),
                String(format: "%12.2f", seconds / best.baseline),
            ]
            print(line.joined())
        }
        for strings in [true, false] {
            let sessionOnly = measureSessionOnly(block: block, repeats: repeats, strings: strings)
            print(
                "          (WebSocketSession alone, no I/O, \(strings ? "a String" : "UTF-8 bytes") per message: "
                    + String(
                        format: "%.0f frames/s, %.0f ns/frame)", Double(sessionOnly.messages) / sessionOnly.seconds,
                        sessionOnly.seconds * 1e9 / Double(sessionOnly.messages)))
        }
    }
#else
    print("TransportBenchmark measures SocketTransport, which exists on Linux only.")
#endif
