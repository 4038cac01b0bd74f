// CableBench next to the official Rails JS client (@rails/actioncable under node, Benchmarks/js/cable-bench.js),
// in the same run, against the same loopback sender (CableBenchServer), client pinned to CPU 0 and sender to
// CPU 1: messages per second for 64 B, 512 B and 4 KiB payloads with 1 and 1,000 subscriptions, and ours ÷
// theirs, with each client's peak RSS (`/usr/bin/time`). Best of RUNS runs per cell; each row is written as
// soon as its cell is measured.
//
// The third client is the physical floor: Benchmarks/floor/cable-floor.c, a libc-only C reader with the same
// contract that does only what any Action Cable reader must per frame (parse the WebSocket frame, find the
// identifier's and the message's byte ranges, look the identifier up among the subscriptions, count, spot the
// end marker; its header lists what it leaves out). Its rate is about the most this sender, loopback and core
// allow; ours ÷ floor is the share of it that we reach. It is compiled at start with `cc -O2` (or
// /opt/swift/usr/bin/clang) into a temporary directory.
//
//     swift build -c release --product CableBench && swift build -c release --product CableBenchServer
//     swift run -c release SideBySideBenchmark [N] [RUNS]    (defaults: 1000000 3; N is for 64 B, scaled down
//                                                              for bigger payloads to keep the bytes per run,
//                                                              but never below N ÷ 8 messages)
//
// The floor: bigger payloads are read faster in bytes, so with the bytes kept a 4 KiB cell was 15,625
// messages at N = 1,000,000, a tenth of a second for the fastest client, short enough for start-up jitter to
// move its rate by a fifth. N ÷ 8 messages make every cell last at least a few tenths of a second.
//
// Before and after: with CABLE_BENCH_BASE=/path/to/an/older/CableBench, that binary runs too, interleaved with ours
// run by run (old, new, old, new, ...) so that both see the same minute of a noisy machine, and two columns are
// added: its rate and peak RSS, and ours ÷ base.
//
// Needs node and Debian's node-ws and ruby-actioncable (`apt-get install nodejs node-ws ruby-actioncable`).
// Never part of `swift test`.

#if os(Linux)
    import BenchHost
    import Foundation

    let arguments = CommandLine.arguments.dropFirst().compactMap { Int($0) }
    let messages64 = arguments.first ?? 1_000_000
    let runs = arguments.count > 1 ? arguments[1] : 3
    let bin = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let script = BenchHost.root.appendingPathComponent("Benchmarks/js/cable-bench.js").path
    let needed = [
        bin.appendingPathComponent("CableBench").path, bin.appendingPathComponent("CableBenchServer").path,
        "/usr/share/nodejs/ws/package.json",
        "/usr/share/nodejs/@rails/actioncable/app/assets/javascripts/action_cable.js",
    ]
    for path in needed where !FileManager.default.fileExists(atPath: path) {
        print("missing \(path)")
        print("build: swift build -c release --product CableBench && swift build -c release --product CableBenchServer")
        print("install: apt-get install nodejs node-ws ruby-actioncable")
        exit(1)
    }

    /// Runs `command` to its end under `/usr/bin/time`; returns its standard output and its peak RSS in KiB.
    func run(_ command: [String]) throws -> (output: String, status: Int32, peakKiB: Int?) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-f", "peak-rss-kib %M", "/usr/bin/env"] + command
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let report = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let peak = report.split(separator: "\n").last { $0.hasPrefix("peak-rss-kib ") }
            .flatMap { Int($0.dropFirst("peak-rss-kib ".count)) }
        return (String(decoding: data, as: UTF8.self), process.terminationStatus, peak)
    }

    /// One client's best rate over the runs, and its highest peak RSS.
    struct Result {
        var rate: Double
        var peakKiB: Int?
    }

    /// One run of `client` (a command before its URL N SUBS arguments): the sender on CPU 1, the client on
    /// CPU 0. Returns messages per second and the client's peak RSS, or nil when the client failed.
    func measure(client: [String], messages: Int, subscriptions: Int, size: Int) throws -> Result? {
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = [
            "taskset", "-c", "1", bin.appendingPathComponent("CableBenchServer").path, "\(messages)",
            "\(subscriptions)", "\(size)",
        ]
        let pipe = Pipe()
        server.standardOutput = pipe
        try server.run()
        defer {
            if server.isRunning { server.terminate() }
            server.waitUntilExit()
        }
        let text = try BenchHost.readLine(pipe)
        guard text.hasPrefix("listening "), let port = Int(text.dropFirst("listening ".count)) else { return nil }
        let (output, status, peak) = try run(
            ["timeout", "300", "taskset", "-c", "0"] + client
                + ["ws://127.0.0.1:\(port)/cable", "\(messages)", "\(subscriptions)"])
        let words = output.split(separator: " ")
        guard status == 0, words.count >= 4, words[0] == "received", Int(words[1]) == messages,
            let seconds = Double(words[3]), seconds > 0
        else {
            FileHandle.standardError.write(Data("client failed (\(status)): \(output)\n".utf8))
            return nil
        }
        return Result(rate: Double(messages) / seconds, peakKiB: peak)
    }

    func best(client: [String], messages: Int, subscriptions: Int, size: Int) throws -> Result? {
        try interleaved([client], messages: messages, subscriptions: subscriptions, size: size)[0]
    }

    /// Each client's best of RUNS runs, the clients taking turns run by run; nil for a client that failed.
    func interleaved(_ clients: [[String]], messages: Int, subscriptions: Int, size: Int) throws -> [Result?] {
        var results = Array(repeating: [Result](), count: clients.count)
        var failed = Array(repeating: false, count: clients.count)
        for _ in 0..<runs {
            for (index, client) in clients.enumerated() where !failed[index] {
                let result = try measure(client: client, messages: messages, subscriptions: subscriptions, size: size)
                if let result { results[index].append(result) } else { failed[index] = true }
            }
        }
        return results.indices.map { index in
            guard !failed[index], let rate = results[index].map(\.rate).max() else { return nil }
            return Result(rate: rate, peakKiB: results[index].compactMap(\.peakKiB).max())
        }
    }

    func format(_ result: Result?) -> String {
        guard let result else { return "failed" }
        let rate = result.rate
        let text = rate >= 1e6 ? String(format: "%.2f M", rate / 1e6) : String(format: "%.0f k", rate / 1e3)
        return text + (result.peakKiB.map { String(format: ", %.1f MiB", Double($0) / 1024) } ?? "")
    }

    /// Writes `text` and a newline to standard output at once, so rows appear as they are measured when piped.
    func emit(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    guard let floor = BenchHost.compileFloor() else { exit(1) }
    let base = ProcessInfo.processInfo.environment["CABLE_BENCH_BASE"]
    if let base, !FileManager.default.isExecutableFile(atPath: base) {
        print("CABLE_BENCH_BASE: no executable at \(base)")
        exit(1)
    }

    emit("messages/s (best of \(runs)) and peak RSS (highest); client on CPU 0, CableBenchServer on CPU 1")
    emit(
        "| payload | subscriptions | messages | CableBench | Rails JS (node) | C floor | ours ÷ theirs "
            + "| ours ÷ floor | typed (messages(as:)) | typed ÷ theirs |"
            + (base == nil ? "" : " base CableBench | ours ÷ base |"))
    emit("|---|---|---|---|---|---|---|---|---|---|" + (base == nil ? "" : "---|---|"))
    var failed = false
    for size in [64, 512, 4096] {
        for subscriptions in [1, 1000] {
            let messages = max(subscriptions * 20, messages64 / 8, messages64 * 64 / max(64, size))
            let cableBench = bin.appendingPathComponent("CableBench").path
            let results = try interleaved(
                [[cableBench], ["env", "CABLE_BENCH_TYPED=1", cableBench]] + (base.map { [[$0]] } ?? []),
                messages: messages, subscriptions: subscriptions, size: size)
            let ours = results[0]
            let typed = results[1]
            let before = results.count > 2 ? results[2] : nil
            let theirs = try best(
                client: ["node", script], messages: messages, subscriptions: subscriptions, size: size)
            let bottom = try best(client: [floor], messages: messages, subscriptions: subscriptions, size: size)
            let ratio = ours.flatMap { ours in theirs.map { String(format: "%.2f×", ours.rate / $0.rate) } } ?? "-"
            let share = ours.flatMap { ours in bottom.map { String(format: "%.2f×", ours.rate / $0.rate) } } ?? "-"
            let typedRatio =
                typed.flatMap { typed in theirs.map { String(format: "%.2f×", typed.rate / $0.rate) } } ?? "-"
            let change = ours.flatMap { ours in before.map { String(format: "%.2f×", ours.rate / $0.rate) } } ?? "-"
            failed =
                failed || ours == nil || typed == nil || theirs == nil || bottom == nil
                || (base != nil && before == nil)
            let label = size >= 1024 ? "\(size / 1024) KiB" : "\(size) B"
            emit(
                "| \(label) | \(subscriptions) | \(messages) | \(format(ours)) | \(format(theirs)) | \(format(bottom)) "
                    + "| \(ratio) | \(share) | \(format(typed)) | \(typedRatio) |"
                    + (base == nil ? "" : " \(format(before)) | \(change) |"))
        }
    }
    BenchHost.removeFloor(floor)
    exit(failed ? 1 : 0)
#else
    print("SideBySideBenchmark pins processes with taskset and runs on Linux only.")
#endif
