#if os(Linux)
    import Foundation
    import Testing

    extension TransportIntegrationTests {
        /// The `exit-during-connect` fixture (Tests/Fixtures/exit-during-connect), built next to this test bundle.
        static let exitProbe = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("exit-during-connect")

        /// Every mode and delay, 10 runs each: before OpenSSL was initialized without its at-exit cleanup,
        /// about 40% of these runs died with SIGSEGV or SIGBUS.
        @Test(
            "a process that exits while wss connections are being set up exits with status 0, every time",
            arguments: ["transport", "client"], [0, 1_000, 3_000, 10_000])
        func exitDuringConnect(mode: String, delayMicroseconds: Int) async throws {
            let peer = try Peers.tls.get()
            let caFile = try Certificates.shared.get().caFile
            let probe = Self.exitProbe
            try #require(
                FileManager.default.isExecutableFile(atPath: probe.path), "build the package first: \(probe.path)")
            let arguments = [mode, "wss://localhost:\(peer.port)/echo", caFile, "\(delayMicroseconds)"]
            let statuses = try await offPool {
                try (0..<10).map { _ in
                    let process = Process()
                    process.executableURL = probe
                    process.arguments = arguments
                    process.standardOutput = FileHandle.nullDevice
                    process.standardError = FileHandle.nullDevice
                    try process.run()
                    process.waitUntilExit()
                    let reason = process.terminationReason == .exit ? "exit" : "signal"
                    return "\(reason) \(process.terminationStatus)"
                }
            }
            #expect(statuses.count == 10)
            #expect(statuses.filter { $0 != "exit 0" } == [])
        }
    }
#endif
