// The loopback Action Cable sender behind CableBenchServer and CableBenchmark.

#if os(Linux)
    import CableReactive
    import Dispatch
    import Glibc

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
    package struct CableWorkload: Sendable {
        package var messages: Int
        package var subscriptions: Int
        package var messageSize = 64

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

        /// The text frames (identifiers as escaped JSON string literals, quotes included).
        package static func dataFrame(identifier literal: String, message: String) -> String {
            #"{"identifier":\#(literal),"message":\#(message)}"#
        }

        package static func endFrame(identifier literal: String) -> String {
            #"{"identifier":\#(literal),"message":{"end":true}}"#
        }
    }

    /// Serves the workload to one client per `serve` call, each on its own thread.
    package final class CableSender: Sendable {
        package let listener = LoopbackListener()
        package var port: Int { listener.port }

        package init() {}

        /// On a new thread: accepts one client and runs the workload; calls `done` when the client has gone.
        package func serve(_ workload: CableWorkload, done: (@Sendable () -> Void)? = nil) {
            let started = IOThread.start { [listener] in
                if let (fd, leftover) = listener.acceptUpgrade() {
                    Self.run(workload, fd: fd, input: leftover)
                    close(fd)
                }
                done?()
            }
            precondition(started == 0, "CableSender: no thread (errno \(started))")
        }

        /// Serves forever (one client at a time); for the standalone server.
        package func serveForever(_ workload: CableWorkload) -> Never {
            while true {
                if let (fd, leftover) = listener.acceptUpgrade() {
                    Self.run(workload, fd: fd, input: leftover)
                    close(fd)
                }
            }
        }

        private static func run(_ workload: CableWorkload, fd: Int32, input: [UInt8]) {
            guard sendAll(fd, serverTextFrame(Array(#"{"type":"welcome"}"#.utf8))) else { return }
            var reader = ClientFrameReader(fd: fd, buffered: input)
            var identifiers: [String] = []
            var seen = Set<String>()
            while identifiers.count < workload.subscriptions {
                guard let text = reader.nextText() else { return }
                guard text.contains(#""command":"subscribe""#), let literal = identifierLiteral(in: text) else {
                    continue
                }
                let confirm = #"{"identifier":\#(literal),"type":"confirm_subscription"}"#
                guard sendAll(fd, serverTextFrame(Array(confirm.utf8))) else { return }
                if seen.insert(literal).inserted { identifiers.append(literal) }
            }
            guard sendData(workload, identifiers: identifiers, fd: fd),
                let first = identifiers.first,
                sendAll(fd, serverTextFrame(Array(CableWorkload.endFrame(identifier: first).utf8)))
            else { return }
            while reader.nextText() != nil {}  // until the client closes
        }

        /// Sends `workload.messages` pre-encoded data frames, round-robin over `identifiers`.
        private static func sendData(_ workload: CableWorkload, identifiers: [String], fd: Int32) -> Bool {
            // A block holds whole rounds over the subscriptions: up to ~4,096 frames and ~1 MiB. It is built after
            // the confirmations, inside the client's clock, so it must be cheap: a 4,096-frame block of 4 KiB
            // messages took a quarter of a second to build, which was most of a short 4 KiB run for either client.
            let frameBytes = workload.messageSize + 64
            let rounds = max(1, min(4_096, (1 << 20) / frameBytes) / identifiers.count)
            var block: [UInt8] = []
            block.reserveCapacity(rounds * identifiers.count * (frameBytes + 16))
            var ends: [Int] = []  // ends[i]: the byte offset after frame i of the block
            for seq in 0..<(rounds * identifiers.count) {
                let text = CableWorkload.dataFrame(
                    identifier: identifiers[seq % identifiers.count], message: workload.message(seq: seq))
                block += serverTextFrame(Array(text.utf8))
                ends.append(block.count)
            }
            var remaining = workload.messages
            // A ping every 3 s, as Rails sends them: the Rails JS client reopens a connection that has had no
            // ping for 6 s, however many data messages arrive meanwhile.
            var lastPing = DispatchTime.now()
            return block.withUnsafeBytes { bytes in
                while remaining >= ends.count {
                    guard sendAll(fd, bytes) else { return false }
                    remaining -= ends.count
                    if DispatchTime.now().uptimeNanoseconds - lastPing.uptimeNanoseconds >= 3_000_000_000 {
                        lastPing = .now()
                        let ping = #"{"type":"ping","message":\#(Int(Date().timeIntervalSince1970))}"#
                        guard sendAll(fd, serverTextFrame(Array(ping.utf8))) else { return false }
                    }
                }
                guard remaining > 0 else { return true }
                return sendAll(fd, UnsafeRawBufferPointer(rebasing: bytes[0..<ends[remaining - 1]]))
            }
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
