#if os(Linux)
    import Foundation
    import Glibc

    /// A running `tinyproxy` (Debian's package, installed by Scripts/install-deps): the real HTTP CONNECT
    /// proxy of the proxy tests. It listens on 127.0.0.1 and logs every request, so a test can see that a
    /// connection went through it. It is stopped when this object is released.
    final class TinyProxy: Sendable {
        let port: Int
        private let process: Process
        private let directory: URL

        /// Starts a proxy; `settings` are extra tinyproxy.conf lines (`BasicAuth user password`,
        /// `ConnectPort 443`, …).
        init(settings: [String] = []) throws {
            let binary = "/usr/bin/tinyproxy"
            guard FileManager.default.isExecutableFile(atPath: binary) else {
                throw PeerError("missing \(binary): run Scripts/install-deps")
            }
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("tinyproxy-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var lastError: Error = PeerError("tinyproxy did not start")
            // A free port is found by binding port 0; another process may take it before tinyproxy does,
            // so a proxy that does not come up is started again on another port.
            for _ in 0..<5 {
                let port = try unusedPort()
                let config = directory.appendingPathComponent("tinyproxy.conf")
                let lines =
                    [
                        "Port \(port)", "Listen 127.0.0.1", "Timeout 30", "LogLevel Connect", "MaxClients 50",
                        "DisableViaHeader Yes", "LogFile \"\(directory.path)/tinyproxy.log\"",
                    ] + settings
                try (lines.joined(separator: "\n") + "\n").write(to: config, atomically: true, encoding: .utf8)
                let process = Process()
                process.executableURL = URL(fileURLWithPath: binary)
                process.arguments = ["-d", "-c", config.path]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                if Self.waitListening(port: port, process: process) {
                    self.port = port
                    self.process = process
                    return
                }
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
                lastError = PeerError("tinyproxy did not listen on \(port)")
            }
            throw lastError
        }

        deinit {
            // SIGKILL: tinyproxy lets its open tunnels run out their `Timeout` before it obeys SIGTERM.
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
        }

        /// What tinyproxy logged so far (one line per request, `CONNECT host:port` among them).
        var log: String {
            (try? String(contentsOf: directory.appendingPathComponent("tinyproxy.log"), encoding: .utf8)) ?? ""
        }

        /// Waits (up to 10 s) until the log contains `text`: tinyproxy writes it as it handles the request.
        func waitLog(contains text: String) -> Bool {
            let deadline = Date(timeIntervalSinceNow: 10)
            while Date() < deadline {
                if log.contains(text) { return true }
                usleep(20_000)
            }
            return false
        }

        /// Whether something accepts connections on `port` within 5 s while `process` runs.
        private static func waitListening(port: Int, process: Process) -> Bool {
            let deadline = Date(timeIntervalSinceNow: 5)
            while Date() < deadline && process.isRunning {
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = UInt16(port).bigEndian
                address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
                let connected = withUnsafePointer(to: &address) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                        connect(fd, socketAddress, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                    }
                }
                close(fd)
                if connected { return true }
                usleep(20_000)
            }
            return false
        }
    }
#endif
