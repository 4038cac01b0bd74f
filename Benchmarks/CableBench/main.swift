// A command-line Action Cable client for side-by-side throughput comparisons with other clients.
//
//     swift run -c release CableBench URL N SUBS
//     e.g. swift run -c release CableBench ws://127.0.0.1:PORT/cable 100000 10
//
// Subscribes SUBS identifiers {"channel":"BenchChannel","sub":i} (i in 0..<SUBS) on one connection, through
// the public API only. The clock starts once every subscription is confirmed. Each subscription's loop counts
// the data messages it gets from `messages` until a message whose payload has `"end": true`; the server sends
// one such end marker on every subscription after its N data messages (round-robin over the subscriptions,
// see CableBenchServer), so the total is the sum over the loops. Prints exactly one line
// `received <count> in <seconds> s` and exits 0 when count == N and nothing was dropped, 1 otherwise.

import CableReactive
import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 3, let url = URL(string: arguments[0]), let expected = Int(arguments[1]),
    let subscriptionCount = Int(arguments[2]), expected >= 0, subscriptionCount > 0
else {
    FileHandle.standardError.write(Data("usage: CableBench URL N SUBS\n".utf8))
    exit(2)
}

/// Runs the bench; returns (count, seconds, dropped).
func run() async throws -> (count: Int, seconds: Double, dropped: Int) {
    var options = CableOptions()
    // A subscription may receive its whole share before its loop starts: buffer all of it (+ the end
    // marker), so a consumer that keeps up never drops. The ring buffer grows on demand.
    options.messageBufferSize = expected / subscriptionCount + 2
    options.staleTimeout = 60
    let client = try ActionCableClient(url: url, options: options)
    let subscriptions = try (0..<subscriptionCount).map { index in
        try client.subscribe(["channel": "BenchChannel", "sub": .int(index)])
    }
    client.connect()
    for subscription in subscriptions {
        _ = await subscription.state.first { state in
            if case .subscribed = state { return true }
            return false
        }
    }
    let start = DispatchTime.now()
    let count = await withTaskGroup(of: Int.self) { group in
        for subscription in subscriptions {
            group.addTask {
                var count = 0
                for await message in subscription.messages {
                    if message["end"]?.boolValue == true { break }
                    count += 1
                }
                return count
            }
        }
        return await group.reduce(0, +)
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    let dropped = subscriptions.reduce(0) { $0 + $1.messages.droppedCount }
    client.close()
    return (count, seconds, dropped)
}

let outcome = Task {
    do {
        return try await run()
    } catch {
        FileHandle.standardError.write(Data("CableBench: \(error)\n".utf8))
        return (count: 0, seconds: 0.0, dropped: 0)
    }
}
let result = await outcome.value
print("received \(result.count) in \(String(format: "%.3f", result.seconds)) s")
if result.dropped > 0 { FileHandle.standardError.write(Data("CableBench: dropped \(result.dropped)\n".utf8)) }
exit(result.count == expected && result.dropped == 0 ? 0 : 1)
