// The loopback Action Cable sender behind CableBenchServer and CableBenchmark.

#if os(Linux)
    import CableReactive
    import Dispatch
    import Glibc
    import Signals

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// The bench workload (the side-by-side contract): after every subscription is confirmed, `messages` data
    /// frames round-robin over the subscriptions (in the order their subscribe commands arrived), then **one**
    /// `{"end":true}` frame, on the first subscription. A client counts data messages over all subscriptions
    /// and stops once it has seen the end marker, whichever subscription's loop is ahead; the count must equal
    /// `messages`.
    ///
    /// Each data frame is `{"identifier":"<id>","message":{"seq":N,"pad":"…"}}` where the `message` object
    /// is exactly `messageSize` bytes of JSON (64 by default). `seq` counts within a pre-encoded block of
    /// frames that is sent over and over, so the sender only copies bytes. Between blocks, a ping every 3 s.
    ///
    /// With a `rate` (the latency contract), message `i` is due at `start + i / rate` seconds on absolute
    /// deadlines, and its `message` is `{"t":<CLOCK_MONOTONIC nanoseconds when it was written>,"pad":"…"}`,
    /// again exactly `messageSize` bytes. Client and sender share the machine, hence the clock: a client
    /// records `now - t`. See `CableSender.sendPaced` for how the deadlines are kept.
    package struct CableWorkload: Sendable {
        package var messages: Int
        package var subscriptions: Int
        package var messageSize = 64
        /// Messages per second over all subscriptions; 0 sends as fast as the socket takes them.
        package var rate = 0

        package init(messages: Int, subscriptions: Int) {
            self.messages = messages
            self.subscriptions = subscriptions
        }

        /// The `message` object of the data frame with sequence number `seq`, padded to `messageSize` bytes.
        package func message(seq: Int) -> String {
            let bare = #"{"seq":\#(seq),"pad":""}"#
            let pad = String(repeating: "x", count: max(0, messageSize - bare.utf8.count))
            return #"{"seq":\#(seq),"pad":"\#(pad)"}"#
        }

        /// The `message` object stamped `t` (paced mode), padded to `messageSize` bytes: `{"t":…,"pad":"…"}`.
        package func stampedMessage(t: UInt64) -> String {
            let bare = #"{"t":\#(t),"pad":""}"#
            let pad = String(repeating: "x", count: max(0, messageSize - bare.utf8.count))
            return #"{"t":\#(t),"pad":"\#(pad)"}"#
        }

        /// The text frames (identifiers as escaped JSON string literals, quotes included).
        package static func dataFrame(identifier literal: String, message: String) -> String {
            #"{"identifier":\#(literal),"message":\#(message)}"#
        }

        package static func endFrame(identifier literal: String) -> String {
            #"{"identifier":\#(literal),"message":{"end":true}}"#
        }
    }

    /// How well a paced run kept its deadlines (see `CableSender.sendPaced`).
    package struct PacingReport: Sendable {
        package var messages = 0
        package var rate = 0
        /// From the first deadline to the last write.
        package var seconds = 0.0
        /// `send` calls for data: fewer than `messages` when late messages went out together.
        package var sends = 0
        /// How late each write started after its first message's deadline, in nanoseconds.
        package var lagTotal: UInt64 = 0
        package var lagMax: UInt64 = 0

        /// One machine-readable line: `paced messages=… rate=… achieved=… sends=… lag_mean_us=… lag_max_us=…`.
        package var line: String {
            let achieved = seconds > 0 ? Int((Double(messages) / seconds).rounded()) : 0
            let mean = sends > 0 ? lagTotal / UInt64(sends) : 0
            return "paced messages=\(messages) rate=\(rate) achieved=\(achieved) sends=\(sends) "
                + "lag_mean_us=\(mean / 1_000) lag_max_us=\(lagMax / 1_000)"
        }
    }

    /// Serves the workload to one client per `serve` call, each on its own thread.
    package final class CableSender: Sendable {
        package let listener = LoopbackListener()
        package var port: Int { listener.port }
        private let lastPacing = Locked<PacingReport?>(nil)

        package init() {}

        /// The pacing of the last paced run that sent all its data; nil before one (and for `rate` 0).
        package var pacing: PacingReport? { lastPacing.withLock { $0 } }

        /// On a new thread: accepts one client and runs the workload; calls `done` when the client has gone.
        package func serve(_ workload: CableWorkload, done: (@Sendable () -> Void)? = nil) {
            let started = IOThread.start { [listener, lastPacing] in
                if let (fd, leftover) = listener.acceptUpgrade() {
                    let report = Self.run(workload, fd: fd, input: leftover)
                    close(fd)
                    if let report { lastPacing.withLock { $0 = report } }
                }
                done?()
            }
            precondition(started == 0, "CableSender: no thread (errno \(started))")
        }

        /// Serves forever (one client at a time); for the standalone server.
        package func serveForever(_ workload: CableWorkload) -> Never {
            while true {
                if let (fd, leftover) = listener.acceptUpgrade() {
                    _ = Self.run(workload, fd: fd, input: leftover)
                    close(fd)
                }
            }
        }

        /// Sets the process's timer slack to 1 ns, so that a paced sender's sleeps end when asked rather than up to
        /// 50 µs (the default slack) later. Call it before `serve`: Linux keeps the slack per thread, the file sets
        /// the main thread's, and a thread starts with its creator's. (Swift does not import the variadic `prctl`.)
        package static func reduceTimerSlack() {
            let fd = open("/proc/self/timerslack_ns", O_WRONLY)
            guard fd >= 0 else { return }
            _ = write(fd, "1", 1)
            close(fd)
        }

        /// Runs the workload on one upgraded connection; returns the pacing report of a paced run.
        private static func run(_ workload: CableWorkload, fd: Int32, input: [UInt8]) -> PacingReport? {
            guard sendAll(fd, serverTextFrame(Array(#"{"type":"welcome"}"#.utf8))) else { return nil }
            var reader = ClientFrameReader(fd: fd, buffered: input)
            var identifiers: [String] = []
            var seen = Set<String>()
            var block: DataBlock?
            while identifiers.count < workload.subscriptions {
                guard let text = reader.nextText() else { return nil }
                guard text.contains(#""command":"subscribe""#), let literal = identifierLiteral(in: text) else {
                    continue
                }
                if seen.insert(literal).inserted { identifiers.append(literal) }
                // The clients start their clocks at the last confirmation, so the block is built before it.
                if identifiers.count == workload.subscriptions && workload.rate == 0 {
                    block = DataBlock(workload, identifiers: identifiers)
                }
                let confirm = #"{"identifier":\#(literal),"type":"confirm_subscription"}"#
                guard sendAll(fd, serverTextFrame(Array(confirm.utf8))) else { return nil }
            }
            var report: PacingReport?
            if let block {
                guard send(block, messages: workload.messages, fd: fd) else { return nil }
            } else {
                report = sendPaced(workload, identifiers: identifiers, fd: fd)
                guard report != nil else { return nil }
            }
            guard let first = identifiers.first,
                sendAll(fd, serverTextFrame(Array(CableWorkload.endFrame(identifier: first).utf8)))
            else { return nil }
            while reader.nextText() != nil {}  // until the client closes
            return report
        }

        /// Pre-encoded data frames, round-robin over the subscriptions: whole rounds, up to ~4,096 frames and
        /// ~1 MiB, sent over and over. Building one takes 25–60 ms, so ``run(_:fd:input:)`` builds it before the
        /// last confirmation, outside the clients' clocks (inside them, it was most of a short run at 4 KiB
        /// for the fastest client).
        private struct DataBlock {
            var bytes: [UInt8] = []
            /// `ends[i]`: the byte offset after frame `i`.
            var ends: [Int] = []

            init(_ workload: CableWorkload, identifiers: [String]) {
                let frameBytes = workload.messageSize + 64
                let rounds = max(1, min(4_096, (1 << 20) / frameBytes) / identifiers.count)
                bytes.reserveCapacity(rounds * identifiers.count * (frameBytes + 16))
                for seq in 0..<(rounds * identifiers.count) {
                    let text = CableWorkload.dataFrame(
                        identifier: identifiers[seq % identifiers.count], message: workload.message(seq: seq))
                    bytes += serverTextFrame(Array(text.utf8))
                    ends.append(bytes.count)
                }
            }
        }

        /// Sends `messages` frames of `block`, from its start over and over.
        private static func send(_ block: DataBlock, messages: Int, fd: Int32) -> Bool {
            var remaining = messages
            var pings = Pings()
            return block.bytes.withUnsafeBytes { bytes in
                while remaining >= block.ends.count {
                    guard sendAll(fd, bytes) else { return false }
                    remaining -= block.ends.count
                    guard pings.sendIfDue(fd) else { return false }
                }
                guard remaining > 0 else { return true }
                return sendAll(fd, UnsafeRawBufferPointer(rebasing: bytes[0..<block.ends[remaining - 1]]))
            }
        }

        /// Sends `workload.messages` stamped frames at `workload.rate` per second, round-robin over
        /// `identifiers`; nil if the client went away.
        ///
        /// Message `i` is due at `start + i × 10⁹ / rate` ns (absolute, so lateness never accumulates into a
        /// slower rate). The thread sleeps with `clock_nanosleep(TIMER_ABSTIME)` until 100 µs before a deadline
        /// and spins on the clock for the rest: even with a 1 ns timer slack (`reduceTimerSlack`), a sleep on this
        /// VM wakes 40 µs (p50) to 80 µs (p99) late, longer than a 10 µs gap at 100,000/s, so at 10,000/s and
        /// more the sender spins its core. Each message goes out in its own `send` at its deadline; only messages already due when a
        /// write starts (the sender was descheduled, or a full socket blocked it) share one `send`, up to 64,
        /// all stamped at that write. `t` is when the write started, so a late sender shows in the report
        /// (`lag`), not in the clients' latencies.
        private static func sendPaced(_ workload: CableWorkload, identifiers: [String], fd: Int32) -> PacingReport? {
            // Without it, Nagle's algorithm holds a small write while an earlier one is unacknowledged, and the
            // client's delayed ACK (40 ms on Linux) then stalls a run of messages: 1% of them took 10–45 ms at
            // 1,000/s, for either client. The throughput mode writes whole blocks and keeps the default.
            var noDelay: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
            let encoder = StampedFrames(workload, identifiers: identifiers)
            let rate = UInt64(workload.rate)
            let total = workload.messages
            var report = PacingReport(messages: total, rate: workload.rate)
            var batch: [UInt8] = []
            batch.reserveCapacity(64 * (workload.messageSize + 128))
            var pings = Pings()
            let start = monotonicNanoseconds()
            func deadline(_ index: Int) -> UInt64 { start + UInt64(index) * 1_000_000_000 / rate }
            var next = 0
            while next < total {
                let due = deadline(next)
                waitUntil(due)
                let now = monotonicNanoseconds()
                var count = 1
                while count < 64, next + count < total, deadline(next + count) <= now { count += 1 }
                batch.removeAll(keepingCapacity: true)
                for index in next..<(next + count) {
                    encoder.append(index % identifiers.count, t: now, to: &batch)
                }
                guard sendAll(fd, batch) else { return nil }
                report.sends += 1
                report.lagTotal += now - due
                report.lagMax = max(report.lagMax, now - due)
                next += count
                guard pings.sendIfDue(fd) else { return nil }
            }
            report.seconds = Double(monotonicNanoseconds() - start) / 1e9
            return report
        }

        /// Sleeps until 100 µs before `deadline` (if it is further away), then spins until it.
        private static func waitUntil(_ deadline: UInt64) {
            let spin: UInt64 = 100_000
            if deadline > monotonicNanoseconds() + spin {
                let wake = deadline - spin
                var time = timespec(tv_sec: Int(wake / 1_000_000_000), tv_nsec: Int(wake % 1_000_000_000))
                while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &time, nil) == EINTR {}
            }
            while monotonicNanoseconds() < deadline {}
        }

        /// The JSON string literal (quotes included, escapes kept) after `"identifier":` in a command.
        private static func identifierLiteral(in text: String) -> String? {
            let bytes = Array(text.utf8)
            let key = Array(#""identifier":""#.utf8)
            guard let range = bytes.firstRange(of: key) else { return nil }
            var index = range.upperBound
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    return String(decoding: bytes[(range.upperBound - 1)...index], as: UTF8.self)
                default: index += 1
                }
            }
            return nil
        }
    }

    /// A ping every 3 s, as Rails sends them: the Rails JS client reopens a connection that has had no ping for
    /// 6 s, however many data messages arrive meanwhile.
    private struct Pings {
        private var last = monotonicNanoseconds()

        /// Sends a ping if the last was 3 s ago or more; false if the client went away.
        mutating func sendIfDue(_ fd: Int32) -> Bool {
            let now = monotonicNanoseconds()
            guard now - last >= 3_000_000_000 else { return true }
            last = now
            let ping = #"{"type":"ping","message":\#(Int(Date().timeIntervalSince1970))}"#
            return sendAll(fd, serverTextFrame(Array(ping.utf8)))
        }
    }

    /// The paced workload's data frames, written into a caller's buffer without allocating: per subscription the
    /// bytes before the stamp, per digit count of the stamp the bytes after it (the padding keeps `message` at
    /// `messageSize` bytes), both cut from `CableWorkload.stampedMessage`, so the format is defined once.
    private struct StampedFrames {
        private let prefixes: [[UInt8]]  // `{"identifier":<id>,"message":{"t":`
        private let suffixes: [[UInt8]]  // suffixes[d]: `,"pad":"…"}}` after a d-digit stamp

        init(_ workload: CableWorkload, identifiers: [String]) {
            let marker: UInt64 = 1_234_567
            let frames = identifiers.map { identifier in
                Array(
                    CableWorkload.dataFrame(identifier: identifier, message: workload.stampedMessage(t: marker))
                        .utf8)
            }
            let stamp = Array(#"{"t":"#.utf8)
            prefixes = frames.map { frame in
                guard let range = frame.firstRange(of: stamp) else { return frame }
                return Array(frame[..<range.upperBound])
            }
            // A UInt64 has at most 20 digits; d digits: 10^(d-1), written out as a string of d digits.
            suffixes = (0...20).map { digits in
                let example = digits == 0 ? "" : "1" + String(repeating: "0", count: digits - 1)
                let message = workload.stampedMessage(t: UInt64(example) ?? 0)
                return Array(message.utf8.dropFirst(stamp.count + max(1, digits))) + Array("}".utf8)
            }
        }

        /// Appends the whole WebSocket frame of a message to subscription `index`, stamped `t`.
        func append(_ index: Int, t: UInt64, to buffer: inout [UInt8]) {
            var digits = 1
            var scale: UInt64 = 10
            while digits < 20, t >= scale {
                digits += 1
                scale &*= 10
            }
            let prefix = prefixes[index]
            let suffix = suffixes[digits]
            let length = prefix.count + digits + suffix.count
            buffer.append(0x81)
            if length <= 125 {
                buffer.append(UInt8(length))
            } else if length <= 65_535 {
                buffer.append(126)
                buffer.append(UInt8(truncatingIfNeeded: length >> 8))
                buffer.append(UInt8(truncatingIfNeeded: length))
            } else {
                buffer.append(127)
                for shift in stride(from: 56, through: 0, by: -8) {
                    buffer.append(UInt8(truncatingIfNeeded: length >> shift))
                }
            }
            buffer.append(contentsOf: prefix)
            let end = buffer.count + digits
            buffer.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
            var rest = t
            var position = end
            while position > end - digits {
                position -= 1
                buffer[position] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            }
            buffer.append(contentsOf: suffix)
        }
    }

    /// Reads the client's masked frames from a blocking socket (no fragmentation: the client never fragments).
    struct ClientFrameReader {
        let fd: Int32
        var buffered: [UInt8]

        /// The next text message; nil on a close frame, EOF or error.
        mutating func nextText() -> String? {
            while true {
                guard let (opcode, payload) = nextFrame() else { return nil }
                switch opcode {
                case 0x1: return String(decoding: payload, as: UTF8.self)
                case 0x8: return nil
                default: continue
                }
            }
        }

        private mutating func nextFrame() -> (opcode: UInt8, payload: [UInt8])? {
            while true {
                if let frame = parse() { return frame }
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return nil }
                buffered += chunk[0..<count]
            }
        }

        private mutating func parse() -> (opcode: UInt8, payload: [UInt8])? {
            guard buffered.count >= 2 else { return nil }
            let opcode = buffered[0] & 0x0F
            let masked = buffered[1] & 0x80 != 0
            var length = Int(buffered[1] & 0x7F)
            var offset = 2
            if length == 126 {
                guard buffered.count >= 4 else { return nil }
                length = Int(buffered[2]) << 8 | Int(buffered[3])
                offset = 4
            } else if length == 127 {
                guard buffered.count >= 10 else { return nil }
                length = buffered[2..<10].reduce(0) { $0 << 8 | Int($1) }
                offset = 10
            }
            let maskOffset = offset
            if masked { offset += 4 }
            guard buffered.count >= offset + length else { return nil }
            var payload = Array(buffered[offset..<(offset + length)])
            if masked {
                for index in payload.indices { payload[index] ^= buffered[maskOffset + index % 4] }
            }
            buffered.removeFirst(offset + length)
            return (opcode, payload)
        }
    }
#endif
