// Inbound messages per second from the WebSocket frame to the app's `for await` loop, against the raw transport.
//
//     swift run -c release CableBenchmark [N]               (default N = 500000 messages per run)
//     swift run -c release CableBenchmark --client-only N SUBS
//
// For 1 and for 1,000 subscriptions, an in-process CableSender (BenchSupport) streams the same pre-encoded
// workload (64-byte `message` objects, round-robin, see CableWorkload) three times per repetition:
// - transport bytes: SocketTransport handing each message's UTF-8 bytes to a callback that only counts them
//   (TextReceiver, the path the client itself uses). No per-message work: the floor of the I/O thread.
// - transport loop: SocketTransport's `.text(String)` events yielded into an AsyncStream and counted in one
//   `for await` loop. What an app gets from the raw transport, frame to loop, without Action Cable.
// - client: ActionCableClient through the public API (BenchClient), counted in the app's `for await` loops
//   (one per subscription): JSON parsed, routed to the subscription, buffered, delivered.
// Each sends the subscribe commands on the welcome and starts its clock at the last confirm. Best of 3 each;
// the ratios are client time / transport time (the issue's target: <= 2 against the transport loop).
// `--client-only` runs one client measurement alone and prints the process's peak RSS (VmHWM); the default
// mode runs it as a child process for SUBS = 1 and 1000. For one-core figures, pin the whole run:
// `taskset -c 0 .build/release/CableBenchmark`.

#if os(Linux)
    import BenchSupport
    import CableReactive
    import Foundation

    /// The subscribe commands of the workload's identifiers, as the client sends them.
    func subscribeCommands(_ workload: CableWorkload) -> [String] {
        (0..<workload.subscriptions).map { index in
            #"{"command":"subscribe","identifier":"{\"channel\":\"BenchChannel\",\"sub\":\#(index)}"}"#
        }
    }

    /// Seconds for SocketTransport to deliver the workload's data messages (after welcome and confirms).
    func measureTransport(_ workload: CableWorkload) -> Double {
        let sender = CableSender()
        sender.serve(workload)
        final class Counter: @unchecked Sendable {
            // Touched only by the connection's I/O thread (events are serial).
            var count = 0
            var start = DispatchTime.now()
            var end = DispatchTime.now()
        }
        let counter = Counter()
        let done = DispatchSemaphore(value: 0)
        let ready = 1 + workload.subscriptions  // welcome + confirms
        let total = ready + workload.messages
        let request = CableRequest(url: URL(string: "ws://127.0.0.1:\(sender.port)/cable") ?? URL(fileURLWithPath: "/"))
        let commands = subscribeCommands(workload)
        let box = ConnectionBox()
        // The client's own path through the transport: each message's UTF-8 bytes, no String.
        let receiver = TextReceiver(
            text: { _ in
                counter.count += 1
                if counter.count == 1, let connection = box.connection {
                    for command in commands { connection.send(text: command) }
                }
                if counter.count == ready { counter.start = .now() }
                if counter.count == total {
                    counter.end = .now()
                    done.signal()
                }
            },
            batchEnded: {}
        )
        let connection = SocketTransport().connect(
            request: request, protocols: ["actioncable-v1-json"], receiver: receiver
        ) { event in
            if case .closed = event, counter.count < total { done.signal() }
        }
        box.connection = connection
        done.wait()
        connection.close(code: .normalClosure, reason: "")
        precondition(counter.count >= total, "transport delivered \(counter.count) of \(total)")
        return Double(counter.end.uptimeNanoseconds - counter.start.uptimeNanoseconds) / 1e9
    }

    /// Seconds for SocketTransport's `.text` events to reach one `for await` loop (after welcome and confirms).
    func measureTransportLoop(_ workload: CableWorkload) async -> Double {
        let sender = CableSender()
        sender.serve(workload)
        let (frames, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        let request = CableRequest(url: URL(string: "ws://127.0.0.1:\(sender.port)/cable") ?? URL(fileURLWithPath: "/"))
        let connection = SocketTransport().connect(request: request, protocols: ["actioncable-v1-json"]) { event in
            switch event {
            case .opened: break
            case .text(let text): continuation.yield(text)
            case .closed: continuation.finish()
            }
        }
        let ready = 1 + workload.subscriptions  // welcome + confirms
        let total = ready + workload.messages
        var count = 0
        var start = DispatchTime.now()
        for await _ in frames {
            count += 1
            if count == 1 {
                for command in subscribeCommands(workload) { connection.send(text: command) }
            }
            if count == ready { start = .now() }
            if count == total { break }
        }
        let end = DispatchTime.now()
        connection.close(code: .normalClosure, reason: "")
        precondition(count >= total, "transport loop got \(count) of \(total)")
        return Double(end.uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    /// Hands the connection to its own handler (set right after `connect`, read on the I/O thread after the
    /// welcome arrived, which needs a round trip).
    final class ConnectionBox: @unchecked Sendable {
        var connection: (any WebSocketConnection)?
    }

    /// Seconds for the client to deliver the workload into the app's loops.
    func measureClient(_ workload: CableWorkload) async -> Double {
        let sender = CableSender()
        sender.serve(workload)
        guard let url = URL(string: "ws://127.0.0.1:\(sender.port)/cable"),
            let outcome = try? await BenchClient.run(
                url: url, messages: workload.messages, subscriptions: workload.subscriptions)
        else { preconditionFailure("client run failed") }
        precondition(
            outcome.count == workload.messages && outcome.dropped == 0,
            "client delivered \(outcome.count) of \(workload.messages), dropped \(outcome.dropped)")
        return outcome.seconds
    }

    /// The process's peak resident set (VmHWM) in KiB. Not getrusage's ru_maxrss, which Linux carries over
    /// across execve: a child spawned by this (large) benchmark process would report the parent's peak.
    func peakRSSKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return -1 }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? -1
    }

    /// Runs `--client-only N SUBS` as a child process and returns its peak RSS in KiB.
    func childRSS(messages: Int, subscriptions: Int) -> Int? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--client-only", String(messages), String(subscriptions)]
        let pipe = Pipe()
        process.standardOutput = pipe
        guard (try? process.run()) != nil else { return nil }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return output.split(separator: " ").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    let arguments = Array(CommandLine.arguments.dropFirst())
    if arguments.first == "--client-only", arguments.count == 3, let messages = Int(arguments[1]),
        let subscriptions = Int(arguments[2])
    {
        let seconds = await measureClient(CableWorkload(messages: messages, subscriptions: subscriptions))
        print(String(format: "client %.0f msgs/s, peak RSS KiB %d", Double(messages) / seconds, peakRSSKiB()))
    } else {
        let messages = arguments.first.flatMap { Int($0) } ?? 500_000
        print("messages per second into the app (best of 3), client time / transport time, client-only peak RSS")
        print(
            "subs   transport bytes   transport loop     client   /bytes   /loop   peak RSS   (1 message: the floor)"
        )
        for subscriptions in [1, 1_000] {
            let workload = CableWorkload(messages: messages, subscriptions: subscriptions)
            var best = (bytes: Double.infinity, loop: Double.infinity, client: Double.infinity)
            for _ in 0..<3 {
                best.bytes = min(best.bytes, measureTransport(workload))
                best.loop = min(best.loop, await measureTransportLoop(workload))
                best.client = min(best.client, await measureClient(workload))
            }
            let rss = childRSS(messages: messages, subscriptions: subscriptions)
            let floor = childRSS(messages: subscriptions, subscriptions: subscriptions)
            let line = [
                String(subscriptions).padding(toLength: 5, withPad: " ", startingAt: 0),
                String(format: "%17.0f", Double(messages) / best.bytes),
                String(format: "%17.0f", Double(messages) / best.loop),
                String(format: "%11.0f", Double(messages) / best.client),
                String(format: "%8.1f", best.client / best.bytes),
                String(format: "%8.2f", best.client / best.loop),
                rss.map { String(format: "%7.1f MiB", Double($0) / 1024) } ?? "      ?",
                floor.map { String(format: "%13.1f MiB", Double($0) / 1024) } ?? "      ?",
            ]
            print(line.joined())
        }
    }
#else
    print("CableBenchmark uses SocketTransport and the loopback sender, which exist on Linux only.")
#endif
