// The memory footprint of idle clients (issue 12): RSS, threads and file descriptors of one process holding
// ActionCableClients that are connected to a LocalCableServer with confirmed subscriptions and then left idle.
//
//     swift build -c release --product FootprintServer
//     swift run -c release ClientFootprint [CLIENTS...]    (default: 1 100 1000)
//
// Starts FootprintServer (next to this executable) as a child process, then measures this process, reading
// /proc/self/status (VmRSS, VmHWM, Threads) and counting /proc/self/fd, 1 s after the last confirmation:
// - the baseline, before any client;
// - one client, connected, with one confirmed subscription; then with 10 and with 100 more (KiB per extra
//   subscription, against one subscription); the extra ones are then unsubscribed;
// - N clients for each N in CLIENTS, each connected with one confirmed subscription, created cumulatively (the
//   first is the client above; more are added, 100 at a time, until there are N): total RSS, threads and fds,
//   per client against the baseline, and per added client against the previous row.
// Imports no Foundation (only FoundationEssentials), as an app using the library on Linux would not; the server
// (CableTesting, full Foundation) runs in the other process for that reason. Prints markdown tables and exits 0;
// 1 when something failed, 2 for bad arguments. Linux only. Never part of `swift test`.

#if os(Linux)
    import BenchSupport
    import CableReactive
    import Glibc
    import Signals

    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif

    typealias Sample = ProcessSample

    func sample() -> Sample {
        guard let sample = ProcessSample.now() else { fail("cannot read VmRSS, VmHWM and Threads in /proc/self") }
        return sample
    }

    /// Lets RSS settle after the last confirmation, then samples.
    func settledSample() async -> Sample {
        try? await Task.sleep(nanoseconds: 1_000_000_000)
        return sample()
    }

    /// Whether `subscription` is confirmed within 30 s.
    func confirmed(_ subscription: ChannelSubscription) async -> Bool {
        let state = await subscription.state.first(within: 30) { state in
            if case .subscribed = state { return true }
            return state == .rejected || state == .unsubscribed
        }
        guard case .subscribed = state else { return false }
        return true
    }

    func signed(_ text: String) -> String { text.hasPrefix("-") ? text : "+" + text }

    func row(_ cells: [String]) { print("| " + cells.joined(separator: " | ") + " |") }

    // MARK: Run

    let arguments = CommandLine.arguments.dropFirst()
    let counts = arguments.isEmpty ? [1, 100, 1000] : arguments.compactMap { Int($0) }
    guard counts.count == max(arguments.count, 1), counts.allSatisfy({ $0 > 0 }), counts == counts.sorted() else {
        fail("usage: ClientFootprint [CLIENTS...]  (ascending counts, default 1 100 1000)", status: 2)
    }
    let command = (["swift", "run", "-c", "release", "ClientFootprint"] + arguments).joined(separator: " ")

    var limit = rlimit()
    if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    let server: FootprintServerProcess
    switch FootprintServerProcess.start() {
    case .success(let started): server = started
    case .failure(let failure): fail(failure.description)
    }
    guard let url = URL(string: "ws://127.0.0.1:\(server.port)/cable") else { fail("bad port \(server.port)") }

    let baseline = await settledSample()

    // One client: connect, then subscribe once.
    let first: ActionCableClient
    let firstSubscription: ChannelSubscription
    do {
        first = try ActionCableClient(url: url)
        first.connect()
        guard await first.state.first(within: 30, where: { $0 == .connected }) != nil else {
            fail("the first client did not connect within 30 s: \(first.state.value)")
        }
        firstSubscription = try first.subscribe(["channel": "FootprintChannel"])
    } catch {
        fail("\(error)")
    }
    guard await confirmed(firstSubscription) else { fail("not confirmed: \(firstSubscription.state.value)") }
    let one = await settledSample()

    // The same client with 10, then 100, more subscriptions.
    var extras: [ChannelSubscription] = []
    var withExtras: [(count: Int, sample: Sample)] = []
    for target in [10, 100] {
        do {
            while extras.count < target {
                extras.append(try first.subscribe(["channel": "FootprintChannel", "extra": extras.count]))
            }
        } catch {
            fail("\(error)")
        }
        for subscription in extras where !(await confirmed(subscription)) {
            fail("an extra subscription was not confirmed: \(subscription.state.value)")
        }
        withExtras.append((target, await settledSample()))
    }
    for subscription in extras { subscription.unsubscribe() }
    extras.removeAll()

    // N clients, each with one subscription, added 100 at a time.
    var clients = [first]
    var subscriptions = [firstSubscription]  // kept: releasing a subscription's last handle unsubscribes it
    var perCount: [(clients: Int, sample: Sample)] = []
    for target in counts {
        while clients.count < target {
            var batch: [ChannelSubscription] = []
            do {
                for _ in 0..<min(100, target - clients.count) {
                    let client = try ActionCableClient(url: url)
                    batch.append(try client.subscribe(["channel": "FootprintChannel"]))
                    client.connect()
                    clients.append(client)
                }
            } catch {
                fail("client \(clients.count + 1): \(error)")
            }
            for subscription in batch where !(await confirmed(subscription)) {
                fail("with \(clients.count) clients, one was not confirmed within 30 s: \(subscription.state.value)")
            }
            subscriptions += batch
        }
        // One client is the one measured above, before its extra subscriptions came and went.
        perCount.append((target, target == 1 ? one : await settledSample()))
    }

    print("`\(command)`")
    print("")
    print("One client (1 s after the last confirmation):")
    print("")
    row(["process", "RSS MiB", "peak RSS MiB", "threads", "fds", "Δ RSS"])
    row(["---", "---:", "---:", "---:", "---:", "---:"])
    func cells(_ sample: Sample) -> [String] {
        [mib(sample.rssKiB), mib(sample.peakKiB), String(sample.threads), String(sample.fds)]
    }
    row(["baseline, no client"] + cells(baseline) + [""])
    row(["1 client, 1 subscription"] + cells(one) + [signed(mib(one.rssKiB - baseline.rssKiB)) + " MiB"])
    for (count, sample) in withExtras {
        let perSubscription = Double(sample.rssKiB - one.rssKiB) / Double(count)
        row(["+ \(count) subscriptions"] + cells(sample) + [signed(fixed(perSubscription, 1)) + " KiB/subscription"])
    }
    print("")
    print("N idle clients, 1 subscription each, added cumulatively (/client: against the baseline; /added client:")
    print("against the previous row):")
    print("")
    row([
        "clients", "RSS MiB", "peak RSS MiB", "threads", "fds", "MiB/client", "threads/client", "fds/client",
        "MiB/added client",
    ])
    row(["---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:", "---:"])
    var previous = (clients: 0, sample: baseline)
    for (count, sample) in perCount {
        let n = Double(count)
        let added = Double(sample.rssKiB - previous.sample.rssKiB) / 1024 / Double(count - previous.clients)
        row(
            [String(count)] + cells(sample) + [
                fixed(Double(sample.rssKiB - baseline.rssKiB) / 1024 / n, 3),
                fixed(Double(sample.threads - baseline.threads) / n), fixed(Double(sample.fds - baseline.fds) / n),
                count == previous.clients ? "" : fixed(added, 3),
            ])
        previous = (count, sample)
    }

    for client in clients { client.close() }
    server.stop()
    exit(0)
#else
    print("ClientFootprint reads /proc and runs on Linux only.")
#endif
