// Per-message latency and CPU per message: CableBench's latency mode next to the official Rails JS client
// (@rails/actioncable under node, Benchmarks/js/cable-latency.js) and the C floor, in the same run, against the
// same paced loopback sender (`CableBenchServer N SUBS 64 RATE`), client pinned to CPU 0 and sender to CPU 1.
//
// The third client is the physical floor: Benchmarks/floor/cable-floor.c in its latency mode, the libc-only C
// reader of SideBySideBenchmark (parse the WebSocket frame, find the identifier and message byte ranges, look the
// identifier up; its header lists what it leaves out) that also finds each message's `t` and records now - t in
// the same histogram. Blocking in recv, it is woken once per message and does nothing else, so its latency is
// about what the loopback, the scheduler and a wakeup on this VM cost, and its CPU and context switches per
// message the least that reading one message at a time does. It is compiled at start with `cc -O2` (or
// /opt/swift/usr/bin/clang) into a temporary directory, as SideBySideBenchmark does (BenchHost).
//
//     swift build -c release --product CableBench && swift build -c release --product CableBenchServer
//     swift build -c release --product LatencyBenchmark
//     .build/release/LatencyBenchmark [SECONDS_PER_CELL] [RUNS]     (defaults: 5 1)
//
// Every data message carries `t`, CLOCK_MONOTONIC nanoseconds when the sender wrote it; each client records
// `now - t` when its subscription's loop (ours: `for await message in subscription.messages`; theirs:
// `received`) gets the message. Latency: for 1,000, 10,000 and 100,000 msg/s over 1 and 1,000 subscriptions,
// each client's p50/p99/p99.9 in µs and ours ÷ theirs of the p99s, then each client's distribution (cumulative
// shares below 50 µs … 10 ms), the floor's too. CPU: user + system CPU seconds per 100,000 messages over the
// receive phase at 100 and 1,000 msg/s with one subscription, and our and the floor's context switches per
// message. Each cell sends RATE × SECONDS messages; with RUNS > 1, the run with the median p99 (CPU: the median
// CPU) of each client counts. The sender spins its core near each deadline (see `CableSender.sendPaced`); a
// sender that fell behind is reported on standard error. Needs node, node-ws and ruby-actioncable, as
// SideBySideBenchmark. Never part of `swift test`.

#if os(Linux)
    import BenchHost
    import Foundation

    /// Writes a line at once (unbuffered, also into a pipe), so a long run shows each row as it is measured.
    func say(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

    let arguments = CommandLine.arguments.dropFirst()
    let seconds = arguments.first.flatMap { Double($0) } ?? 5
    let runs = arguments.dropFirst().first.flatMap { Int($0) } ?? 1
    guard seconds > 0, runs > 0, arguments.count <= 2 else {
        FileHandle.standardError.write(Data("usage: LatencyBenchmark [SECONDS_PER_CELL] [RUNS]\n".utf8))
        exit(2)
    }
    let bin = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let script = BenchHost.root.appendingPathComponent("Benchmarks/js/cable-latency.js").path
    let needed = [
        bin.appendingPathComponent("CableBench").path, bin.appendingPathComponent("CableBenchServer").path, script,
        "/usr/share/nodejs/ws/package.json",
        "/usr/share/nodejs/@rails/actioncable/app/assets/javascripts/action_cable.js",
    ]
    for path in needed where !FileManager.default.fileExists(atPath: path) {
        say("missing \(path)")
        say("build: swift build -c release --product CableBench && swift build -c release --product CableBenchServer")
        say("install: apt-get install nodejs node-ws ruby-actioncable")
        exit(1)
    }
    guard let floorPath = BenchHost.compileFloor() else { exit(1) }

    /// A client's command: what comes before and after its URL N SUBS arguments.
    struct Client {
        var name: String
        var command: [String]
        var trailing: [String]
    }
    let ours = Client(
        name: "CableBench", command: [bin.appendingPathComponent("CableBench").path], trailing: ["1", "latency"])
    let theirs = Client(name: "Rails JS", command: ["node", script], trailing: [])
    let floor = Client(name: "C floor", command: [floorPath], trailing: ["latency"])

    /// One client run's two lines: the `latency` fields and the `dist` text.
    struct Sample {
        var fields: [String: String]
        var dist: String

        func number(_ key: String) -> Double { fields[key].flatMap { Double($0) } ?? .nan }
        var count: Double { number("count") }
        var cpu: Double { number("cpu") }
        var switches: Double { number("nvcsw") + number("nivcsw") }
    }

    func printError(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

    /// One run of `client` against a paced sender on CPU 1, the client on CPU 0; nil (logged) when either failed.
    func measure(client: Client, rate: Int, subscriptions: Int) throws -> Sample? {
        let messages = max(subscriptions, Int((Double(rate) * seconds).rounded()))
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        server.arguments = [
            "taskset", "-c", "1", bin.appendingPathComponent("CableBenchServer").path, "\(messages)",
            "\(subscriptions)", "64", "\(rate)",
        ]
        let serverOutput = Pipe()
        server.standardOutput = serverOutput
        try server.run()
        defer {
            if server.isRunning { server.terminate() }
            server.waitUntilExit()
        }
        let listening = try BenchHost.readLine(serverOutput)
        guard listening.hasPrefix("listening "), let port = Int(listening.dropFirst("listening ".count)) else {
            printError("sender failed: \(listening)")
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["timeout", "\(Int(seconds * 4) + 60)", "taskset", "-c", "0"] + client.command
            + ["ws://127.0.0.1:\(port)/cable", "\(messages)", "\(subscriptions)"] + client.trailing
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = text.split(separator: "\n")
        let words = lines.first { $0.hasPrefix("latency ") }?.split(separator: " ").dropFirst() ?? []
        var fields: [String: String] = [:]
        for word in words {
            guard let equals = word.firstIndex(of: "=") else { continue }
            fields[String(word[..<equals])] = String(word[word.index(after: equals)...])
        }
        let dist = lines.first { $0.hasPrefix("dist ") }.map { String($0.dropFirst("dist ".count)) }
        guard process.terminationStatus == 0, let dist, fields["count"] == "\(messages)" else {
            printError("client \(client.name) failed (\(process.terminationStatus)): \(text)")
            return nil
        }
        // The sender prints its pacing once the client has gone.
        let pacing = try BenchHost.readLine(serverOutput)
        let achieved = pacing.split(separator: " ").first { $0.hasPrefix("achieved=") }
            .flatMap { Double($0.dropFirst("achieved=".count)) }
        if let achieved, achieved < 0.95 * Double(rate) {
            printError("sender fell behind at \(rate)/s, \(subscriptions) subscriptions: \(pacing)")
        }
        return Sample(fields: fields, dist: dist)
    }

    /// `runs` runs of `client`; the one with the median `key`, or nil if one failed.
    func median(client: Client, rate: Int, subscriptions: Int, by key: (Sample) -> Double) throws -> Sample? {
        var samples: [Sample] = []
        for _ in 0..<runs {
            guard let sample = try measure(client: client, rate: rate, subscriptions: subscriptions) else {
                return nil
            }
            samples.append(sample)
        }
        samples.sort { key($0) < key($1) }
        return samples[samples.count / 2]
    }

    func quantiles(_ sample: Sample?) -> String {
        guard let sample else { return "failed" }
        return ["p50", "p99", "p999"].map { sample.fields[$0] ?? "?" }.joined(separator: " / ")
    }

    func ratio(_ ours: Double?, _ theirs: Double?) -> String {
        guard let ours, let theirs, theirs > 0, ours.isFinite, theirs.isFinite else { return "-" }
        return String(format: "%.2f×", ours / theirs)
    }

    var failed = false
    var distributions: [String] = []
    say("latency in µs, p50 / p99 / p99.9 (median-p99 run of \(runs), \(seconds) s per cell, 64 B messages);")
    say("client on CPU 0, CableBenchServer (paced, stamped) on CPU 1")
    say("| msg/s | subscriptions | CableBench | Rails JS (node) | C floor | p99 ours ÷ theirs |")
    say("|---|---|---|---|---|---|")
    for rate in [1_000, 10_000, 100_000] {
        for subscriptions in [1, 1_000] {
            let p99: (Sample) -> Double = { $0.number("p99") }
            let mine = try median(client: ours, rate: rate, subscriptions: subscriptions, by: p99)
            let other = try median(client: theirs, rate: rate, subscriptions: subscriptions, by: p99)
            let bottom = try median(client: floor, rate: rate, subscriptions: subscriptions, by: p99)
            failed = failed || mine == nil || other == nil || bottom == nil
            say(
                "| \(rate) | \(subscriptions) | \(quantiles(mine)) | \(quantiles(other)) | \(quantiles(bottom)) | "
                    + "\(ratio(mine?.number("p99"), other?.number("p99"))) |")
            for (name, sample) in [("CableBench", mine), ("Rails JS", other), ("C floor", bottom)] {
                let text = sample?.dist.split(separator: " ").map { String($0.split(separator: ":").last ?? "") }
                distributions.append(
                    "| \(rate) | \(subscriptions) | \(name) | "
                        + (text?.joined(separator: " | ") ?? "failed | | | | | |") + " |")
            }
        }
    }
    say("")
    say("latency distribution (share of messages, cumulative; >=10ms the rest)")
    say("| msg/s | subscriptions | client | <50µs | <100µs | <250µs | <500µs | <1ms | <10ms | >=10ms |")
    say("|---|---|---|---|---|---|---|---|---|---|")
    for line in distributions { say(line) }

    say("")
    say("CPU (user + system) seconds per 100,000 messages over the receive phase, 1 subscription (median of \(runs))")
    say(
        "| msg/s | CableBench | Rails JS (node) | C floor | ours ÷ theirs | context switches / message, ours "
            + "| context switches / message, floor |")
    say("|---|---|---|---|---|---|---|")
    for rate in [100, 1_000] {
        let cpu: (Sample) -> Double = { $0.cpu / $0.count }
        let mine = try median(client: ours, rate: rate, subscriptions: 1, by: cpu)
        let other = try median(client: theirs, rate: rate, subscriptions: 1, by: cpu)
        let bottom = try median(client: floor, rate: rate, subscriptions: 1, by: cpu)
        failed = failed || mine == nil || other == nil || bottom == nil
        let perMessage = { (sample: Sample?) in sample.map { cpu($0) * 100_000 } }
        let text = { (value: Double?) in value.map { String(format: "%.3f", $0) } ?? "failed" }
        let switches = { (sample: Sample?) in sample.map { String(format: "%.2f", $0.switches / $0.count) } ?? "-" }
        say(
            "| \(rate) | \(text(perMessage(mine))) | \(text(perMessage(other))) | \(text(perMessage(bottom))) | "
                + "\(ratio(perMessage(mine), perMessage(other))) | \(switches(mine)) | \(switches(bottom)) |")
    }
    BenchHost.removeFloor(floorPath)
    exit(failed ? 1 : 0)
#else
    print("LatencyBenchmark pins processes with taskset and runs on Linux only.")
#endif
