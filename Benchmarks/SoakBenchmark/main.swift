// Hours of uptime, compressed (issue 27): one client with 100 subscriptions against a LocalCableServer in its own
// process (FootprintServer) for SECONDS, through a fault and a burst every INTERVAL seconds, printing this
// process's RSS, threads and descriptors once per cycle of faults. It fails when any of them grew after the first
// minute, or when the client did not come back.
//
//     swift build -c release --product FootprintServer
//     swift run -c release SoakBenchmark [SECONDS] [INTERVAL]    (defaults: 600 11)
//
// The faults, in turn: a drop (TCP closed without a close frame), a server restart (a new server on the same
// port), refused attempts (the listener closes and the connection drops; the server listens again INTERVAL later)
// and Rails' restart (`disconnect` with reconnect). After each fault the client must be connected with every
// subscription confirmed again within 60 s; then the server broadcasts a burst to every subscription (200 or
// 1,000 messages of 64 B, 512 B or 4 KiB, in turn) and the session lives for INTERVAL. The default, 11 s, is
// longer than the 10 s after which a session counts as healthy, so every fault meets a client whose backoff
// has started over; a shorter INTERVAL makes the backoff grow, as against a flapping server. At the end of each
// cycle of the four, connected and a second after the last session's INTERVAL, this process is sampled (always
// at that point of the cycle, so descriptors and threads compare like with like).
//
// The verdict compares the median of the last three samples with the first sample taken after 60 s: RSS may
// exceed it by 2% or 512 KiB (allocator noise), threads by 2 (Dispatch's workers come and go), descriptors by
// none. Exits 0 when nothing grew, 1 when something grew or the client did not recover, 2 for bad arguments.
// Imports no Foundation (only FoundationEssentials), as a Linux service using the library would not. Never part
// of `swift test`.

#if os(Linux)
    import BenchSupport
    import CableReactive
    import Dispatch
    import Glibc
    import Signals

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    func row(_ cells: [String]) { print("| " + cells.joined(separator: " | ") + " |") }

    func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    func pause(_ seconds: Double) async {
        try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
    }

    let arguments = CommandLine.arguments.dropFirst().map { Double($0) }
    let duration = arguments.first.flatMap { $0 } ?? 600
    let interval = arguments.count > 1 ? arguments[1] ?? 0 : 11
    guard arguments.count <= 2, arguments.allSatisfy({ $0 != nil }), duration >= 60, interval > 0 else {
        fail("usage: SoakBenchmark [SECONDS] [INTERVAL]  (SECONDS at least 60; defaults 600 11)", status: 2)
    }
    signal(SIGPIPE, SIG_IGN)  // a write to a server that died is reported, not fatal

    let server: FootprintServerProcess
    switch FootprintServerProcess.start() {
    case .success(let started): server = started
    case .failure(let failure): fail(failure.description)
    }
    guard let url = URL(string: "ws://127.0.0.1:\(server.port)/cable") else { fail("bad port \(server.port)") }

    let client: ActionCableClient
    let subscriptions: [ChannelSubscription]
    do {
        client = try ActionCableClient(url: url)
        subscriptions = try (0..<100).map { index in
            try client.subscribe(["channel": "SoakChannel", "sub": .int(index)])
        }
    } catch {
        fail("\(error)")
    }
    let received = Locked(0)
    let connects = Locked(0)
    let connectWatch = client.state.observe { state in
        if state == .connected { connects.withLock { $0 += 1 } }
    }
    let loops = subscriptions.map { subscription in
        Task {
            for await _ in subscription.messages { received.withLock { $0 += 1 } }
        }
    }
    client.connect()

    /// Whether the client is connected with every subscription confirmed within 60 s.
    func recovered() async -> Bool {
        guard await client.state.first(within: 60, where: { $0 == .connected }) != nil else { return false }
        for subscription in subscriptions {
            let state = await subscription.state.first(within: 60) { state in
                if case .subscribed = state { return true }
                return false
            }
            guard state != nil else { return false }
        }
        return true
    }

    /// Each fault's command lines, and what ends it after INTERVAL (refused attempts: listening again).
    let faults: [(start: [String], end: [String])] = [
        (["drop"], []), (["restart"], []), (["refuse", "drop"], ["accept"]), (["disconnect"], []),
    ]
    let bursts = ["burst 200 64", "burst 200 512", "burst 1000 64", "burst 200 4096"]
    let command = (["swift", "run", "-c", "release", "SoakBenchmark"] + CommandLine.arguments.dropFirst())
        .joined(separator: " ")
    print("`\(command)`: 1 client, 100 subscriptions, a fault and a burst every \(fixed(interval, 1)) s")
    print("")
    row(["t (s)", "RSS MiB", "peak RSS MiB", "threads", "fds", "messages", "connects"])
    row(["---:", "---:", "---:", "---:", "---:", "---:", "---:"])

    let start = DispatchTime.now()
    var samples: [(time: Double, sample: ProcessSample)] = []
    guard await recovered() else { fail("the client did not connect and confirm within 60 s: \(client.state.value)") }
    while seconds(since: start) < duration {
        for (index, fault) in faults.enumerated() {
            for line in fault.start where !server.send(line) { fail("FootprintServer has gone") }
            if !fault.end.isEmpty {
                await pause(interval)
                for line in fault.end where !server.send(line) { fail("FootprintServer has gone") }
            }
            guard await recovered() else {
                fail("after \(fault.start) the client did not recover within 60 s: \(client.state.value)")
            }
            guard server.send(bursts[index % bursts.count]) else { fail("FootprintServer has gone") }
            await pause(interval)
        }
        await pause(1)
        guard let sample = ProcessSample.now() else { fail("cannot read /proc/self") }
        let time = seconds(since: start)
        samples.append((time, sample))
        row([
            fixed(time, 0), mib(sample.rssKiB), mib(sample.peakKiB), String(sample.threads), String(sample.fds),
            String(received.withLock { $0 }), String(connects.withLock { $0 }),
        ])
    }

    guard let reference = samples.first(where: { $0.time >= 60 })?.sample, samples.count >= 3 else {
        fail("too few samples after the first minute; run longer")
    }
    func median(_ values: [Int]) -> Int { values.sorted()[values.count / 2] }
    let last = samples.suffix(3).map(\.sample)
    let rss = median(last.map(\.rssKiB))
    let threads = median(last.map(\.threads))
    let fds = median(last.map(\.fds))
    var grew: [String] = []
    if rss > reference.rssKiB + max(512, reference.rssKiB / 50) {
        grew.append("RSS \(mib(reference.rssKiB)) → \(mib(rss)) MiB")
    }
    if threads > reference.threads + 2 { grew.append("threads \(reference.threads) → \(threads)") }
    if fds > reference.fds { grew.append("descriptors \(reference.fds) → \(fds)") }
    print("")
    print(
        "After the first minute (the sample at \(fixed(samples.first { $0.time >= 60 }?.time ?? 0, 0)) s) against the "
            + "median of the last three: RSS \(mib(reference.rssKiB)) → \(mib(rss)) MiB, threads \(reference.threads) "
            + "→ \(threads), descriptors \(reference.fds) → \(fds); \(received.withLock { $0 }) messages, "
            + "\(connects.withLock { $0 }) connects.")
    print(grew.isEmpty ? "Nothing grew." : "Grew: " + grew.joined(separator: ", ") + ".")

    for loop in loops { loop.cancel() }
    withExtendedLifetime(connectWatch) {}
    client.close()
    server.stop()
    exit(grew.isEmpty ? 0 : 1)
#else
    print("SoakBenchmark reads /proc and runs on Linux only.")
#endif
