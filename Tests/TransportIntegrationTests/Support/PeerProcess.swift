#if os(Linux)
    import Foundation

    /// A running `ws_peer.py` (Python `websockets`): the independent WebSocket server of these tests.
    ///
    /// It listens on port 0 and reports the port on stdout. It exits when its stdin closes, which happens
    /// when this object is released or the test process ends, so no peer outlives a run.
    final class PeerProcess: Sendable {
        let port: Int
        private let process: Process
        private let stdin: Pipe

        /// The repository root, found from this file's path.
        static let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()

        /// Starts a peer; `arguments` are `ws_peer.py` options (`--host`, `--cert`, `--key`).
        init(arguments: [String] = []) throws {
            let python = Self.root.appendingPathComponent(".venv/bin/python")
            guard FileManager.default.isExecutableFile(atPath: python.path) else {
                throw PeerError("missing \(python.path): run Scripts/install-deps")
            }
            let process = Process()
            process.executableURL = python
            process.arguments = [Self.root.appendingPathComponent("Tests/Fixtures/wspeer/ws_peer.py").path] + arguments
            let stdout = Pipe()
            let stdin = Pipe()
            process.standardOutput = stdout
            process.standardInput = stdin
            try process.run()
            self.process = process
            self.stdin = stdin
            // The first line is "PORT <n>"; a failing peer closes stdout instead.
            let text = try Self.firstLine(of: stdout).trimmingCharacters(in: .whitespacesAndNewlines)
            guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
                process.terminate()
                throw PeerError("peer did not report a port: \(text)")
            }
            self.port = port
        }

        /// The first line a process writes to `pipe` (up to its newline), or what it wrote before closing it.
        static func firstLine(of pipe: Pipe) throws -> String {
            var line: [UInt8] = []
            let handle = pipe.fileHandleForReading
            while line.last != 10 {
                guard let byte = try handle.read(upToCount: 1), !byte.isEmpty else { break }
                line.append(contentsOf: byte)
            }
            return String(decoding: line, as: UTF8.self)
        }

        deinit {
            try? stdin.fileHandleForWriting.close()
            process.terminate()
            process.waitUntilExit()
        }
    }

    struct PeerError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The peers and certificates shared by the suite, started on first use.
    enum Peers {
        /// Plain ws on 127.0.0.1.
        static let plain = Result { try PeerProcess() }
        /// Plain ws on ::1.
        static let ipv6 = Result { try PeerProcess(arguments: ["--host", "::1"]) }
        /// wss with a certificate for localhost, 127.0.0.1 and ::1, signed by ``certificates``' CA.
        static let tls = Result {
            let certificates = try Certificates.shared.get()
            return try PeerProcess(arguments: [
                "--cert", certificates.directory + "/server.pem", "--key", certificates.directory + "/server.key",
            ])
        }
        /// wss on ::1 with the same certificate as ``tls`` (its SAN includes IP ::1).
        static let tlsIPv6 = Result {
            let certificates = try Certificates.shared.get()
            return try PeerProcess(arguments: [
                "--host", "::1", "--cert", certificates.directory + "/server.pem", "--key",
                certificates.directory + "/server.key",
            ])
        }
        /// wss with a certificate for wrong.example only.
        static let wrongHost = Result {
            let certificates = try Certificates.shared.get()
            return try PeerProcess(arguments: [
                "--cert", certificates.directory + "/wronghost.pem", "--key", certificates.directory + "/wronghost.key",
            ])
        }
    }

    /// A fresh test CA and server certificates, made once per run in a temporary directory.
    struct Certificates: Sendable {
        let directory: String
        var caFile: String { directory + "/ca.pem" }

        static let shared = Result { try Certificates() }

        private init() throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("cablereactive-certs-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments = [
                PeerProcess.root.appendingPathComponent("Tests/Fixtures/wspeer/make-certs.sh").path, directory.path,
            ]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw PeerError("make-certs.sh failed") }
            self.directory = directory.path
        }
    }
#endif
