// What the benchmark drivers that run clients as child processes share (SideBySideBenchmark, LatencyBenchmark):
// the C floor's compilation and reading a child's output line by line. It uses Foundation, so CableBench,
// CableBenchServer and BenchSupport, which must not load it (Scripts/test.d/15-foundation-light), never depend
// on it.

import Foundation

package enum BenchHost {
    /// The package's root directory (this file is Benchmarks/BenchHost/BenchHost.swift).
    package static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Compiles the C floor reader (Benchmarks/floor/cable-floor.c) with `cc -O2`, or /opt/swift/usr/bin/clang,
    /// into a temporary directory and returns the executable's path; nil, with a message on standard output, when
    /// no compiler works. `removeFloor` deletes it again.
    package static func compileFloor() -> String? {
        let source = root.appendingPathComponent("Benchmarks/floor/cable-floor.c").path
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("cable-floor-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let output = directory.appendingPathComponent("cable-floor").path
        for compiler in ["cc", "/opt/swift/usr/bin/clang"] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [compiler, "-O2", "-o", output, source]
            guard (try? process.run()) != nil else { continue }
            process.waitUntilExit()
            if process.terminationStatus == 0 { return output }
        }
        try? FileManager.default.removeItem(at: directory)
        let message = "cannot compile \(source): neither cc nor /opt/swift/usr/bin/clang worked (install gcc or clang)"
        FileHandle.standardOutput.write(Data((message + "\n").utf8))
        return nil
    }

    /// Deletes the temporary directory that `compileFloor` made for `floor`.
    package static func removeFloor(_ floor: String) {
        try? FileManager.default.removeItem(at: URL(fileURLWithPath: floor).deletingLastPathComponent())
    }

    /// Reads `pipe` up to and including the next newline (or its end), without the surrounding white space.
    package static func readLine(_ pipe: Pipe) throws -> String {
        var line: [UInt8] = []
        while line.last != 10, let byte = try pipe.fileHandleForReading.read(upToCount: 1), !byte.isEmpty {
            line.append(contentsOf: byte)
        }
        return String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
