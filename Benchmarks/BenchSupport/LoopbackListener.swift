// Shared by the benchmarks: a loopback TCP listener that answers WebSocket upgrades, and blocking I/O helpers.

#if os(Linux)
    import CableReactive
    import Dispatch
    import Glibc

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// A listener on 127.0.0.1 with a kernel-chosen port; each `acceptUpgrade` serves one client.
    package final class LoopbackListener: @unchecked Sendable {
        // Only one thread at a time calls `acceptUpgrade`; the descriptor is not mutated after init.
        package let descriptor: Int32
        package let port: Int

        package init() {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            descriptor = listener
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    bind(listener, socketAddress, length) == 0 && listen(listener, 16) == 0
                        && getsockname(listener, socketAddress, &length) == 0
                }
            }
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        /// Accepts one client and answers its HTTP upgrade with 101 (echoing the first offered subprotocol).
        /// Returns the socket and any bytes the client sent after its request head, or nil if it went away.
        package func acceptUpgrade() -> (fd: Int32, leftover: [UInt8])? {
            let fd = accept(descriptor, nil, nil)
            guard fd >= 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: 16_384)
            var head: [UInt8] = []
            var end: Range<Int>?
            while end == nil {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else {
                    close(fd)
                    return nil
                }
                head += buffer[0..<count]
                end = head.firstRange(of: [13, 10, 13, 10])
            }
            let headEnd = end?.upperBound ?? head.count
            let lines = String(decoding: head[0..<headEnd], as: UTF8.self).split(separator: "\r\n")
            func header(_ name: String) -> String? {
                lines.first { $0.lowercased().hasPrefix(name + ":") }
                    .map { trimmed($0.dropFirst(name.count + 1)) }
            }
            var answer =
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(AcceptKey.compute(forKey: header("sec-websocket-key") ?? ""))\r\n"
            if let offered = header("sec-websocket-protocol"), let first = offered.split(separator: ",").first {
                answer += "Sec-WebSocket-Protocol: \(trimmed(first))\r\n"
            }
            answer += "\r\n"
            guard sendAll(fd, Array(answer.utf8)) else {
                close(fd)
                return nil
            }
            return (fd, Array(head[headEnd...]))
        }
    }

    /// Writes all of `bytes` to `fd`, blocking; false if the peer went away.
    package func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = send(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset, Int32(MSG_NOSIGNAL))
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Writes all of `bytes` to `fd`, blocking; false if the peer went away.
    package func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { sendAll(fd, $0) }
    }

    /// Encodes one unmasked server text frame.
    package func serverTextFrame(_ payload: some Collection<UInt8>) -> [UInt8] {
        var frame: [UInt8] = [0x81]
        if payload.count <= 125 {
            frame.append(UInt8(payload.count))
        } else if payload.count <= 65_535 {
            frame += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(127)
            frame += (0..<8).reversed().map { UInt8(truncatingIfNeeded: payload.count >> ($0 * 8)) }
        }
        frame += payload
        return frame
    }
    /// `text` without leading and trailing spaces and tabs.
    func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
#endif
