#if os(Linux)
    import CableReactive
    import Foundation

    /// A one-connection raw TCP server on 127.0.0.1 for the cases a real WebSocket library will not
    /// produce: it reads the upgrade request, writes whatever `respond` returns for the request's
    /// `Sec-WebSocket-Key`, then records everything the client sends until the client closes.
    final class RawPeer: Sendable {
        let port: Int
        private let condition = NSCondition()
        // Guarded by `condition`.
        nonisolated(unsafe) private var received: [UInt8] = []
        nonisolated(unsafe) private var finished = false
        nonisolated(unsafe) private var requestHead = ""

        /// - Parameters:
        ///   - respond: the bytes to answer the upgrade request with, for its key.
        ///   - script: runs on the peer's thread after the answer is sent and before anything more is read,
        ///     with the blocking socket (to send more, or to not read for a while).
        init(
            respond: @escaping @Sendable (_ key: String) -> [UInt8],
            then script: (@Sendable (_ fd: Int32) -> Void)? = nil
        ) throws {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ok = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    bind(listener, socketAddress, length) == 0 && listen(listener, 1) == 0
                        && getsockname(listener, socketAddress, &length) == 0
                }
            }
            guard ok else {
                close(listener)
                throw PeerError("raw peer: bind failed")
            }
            port = Int(UInt16(bigEndian: address.sin_port))
            Thread { [self] in
                serve(listener: listener, respond: respond, script: script)
            }.start()
        }

        private func serve(
            listener: Int32, respond: @Sendable (String) -> [UInt8], script: (@Sendable (Int32) -> Void)?
        ) {
            let fd = accept(listener, nil, nil)
            close(listener)
            defer {
                close(fd)
                condition.lock()
                finished = true
                condition.broadcast()
                condition.unlock()
            }
            guard fd >= 0 else { return }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var buffer = [UInt8](repeating: 0, count: 65_536)
            var head: [UInt8] = []
            var rest: [UInt8] = []
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return }
                head += buffer[0..<count]
                if let range = head.firstRange(of: [13, 10, 13, 10]) {
                    rest = Array(head[range.upperBound...])
                    head = Array(head[..<range.upperBound])
                    break
                }
            }
            let text = String(decoding: head, as: UTF8.self)
            condition.lock()
            requestHead = text
            condition.broadcast()
            condition.unlock()
            let keyLine = text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
            let key =
                keyLine.map { $0.dropFirst("sec-websocket-key:".count).trimmingCharacters(in: .whitespaces) } ?? ""
            let response = respond(key)
            _ = response.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            script?(fd)
            record(rest)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { return }
                record(Array(buffer[0..<count]))
            }
        }

        private func record(_ bytes: [UInt8]) {
            condition.lock()
            received += bytes
            condition.broadcast()
            condition.unlock()
        }

        /// Waits until the client closed the connection (or `timeout` passed) and returns what it sent
        /// after the upgrade request.
        func waitReceived(timeout: Double = 10) -> [UInt8] {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock()
            defer { condition.unlock() }
            while !finished {
                if !condition.wait(until: deadline) { break }
            }
            return received
        }

        /// Waits until the client has sent `pattern` (after the upgrade request) or `timeout` passes.
        func waitForBytes(_ pattern: [UInt8], timeout: Double = 10) -> Bool {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock()
            defer { condition.unlock() }
            var searched = 0
            while true {
                let start = max(0, searched - pattern.count)
                if received[start...].firstRange(of: pattern) != nil { return true }
                searched = received.count
                if finished || !condition.wait(until: deadline) { return false }
            }
        }

        /// The request head the client sent, as soon as it has arrived (or "" after `timeout`).
        func waitForRequestHead(timeout: Double = 10) -> String {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock()
            defer { condition.unlock() }
            while requestHead.isEmpty && !finished {
                if !condition.wait(until: deadline) { break }
            }
            return requestHead
        }

        /// The upgrade request the client sent, once the connection has ended.
        func waitRequestHead() -> String {
            _ = waitReceived()
            condition.lock()
            defer { condition.unlock() }
            return requestHead
        }

        /// A valid 101 answer for `key`.
        static func switching(key: String, extraHeaders: String = "") -> [UInt8] {
            let accept = AcceptKey.compute(forKey: key)
            return Array(
                ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Accept: \(accept)\r\n\(extraHeaders)\r\n").utf8)
        }
    }
#endif
