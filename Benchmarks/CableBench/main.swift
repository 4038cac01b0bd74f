// A command-line Action Cable client for side-by-side throughput comparisons with other clients.
//
//     swift run -c release CableBench URL N SUBS [CONSUMERS [latency]]
//     e.g. swift run -c release CableBench ws://127.0.0.1:PORT/cable 100000 10
//
// Subscribes SUBS identifiers {"channel":"BenchChannel","sub":i} (i in 0..<SUBS) on one connection, through
// the public API only (BenchClient). The clock starts once every subscription is confirmed. Each
// subscription's loop counts the data messages it gets from `messages`; the server sends one message whose
// payload has `"end": true`, on the first subscription, after all N data messages (round-robin over the
// subscriptions, see CableBenchServer). The run ends once that marker has been seen and the N messages before
// it are counted, whichever subscription's loop is ahead. With CONSUMERS (default 1), each subscription has that
// many loops, each counting every message: `received` is then N × CONSUMERS.
// Prints exactly one line `received <count> in <seconds> s` and exits 0 when count == N and nothing was
// dropped, 1 otherwise (2 for bad arguments).
//
// Latency mode (fifth argument `latency`, against `CableBenchServer N SUBS 64 RATE`): every data message is
// `{"t":<CLOCK_MONOTONIC ns at send>,…}`; each loop records `now - t` in one LatencyHistogram as soon as `next()`
// returns the message, and CPU and context switches are read with getrusage(RUSAGE_SELF) from every
// subscription confirmed to the end marker. Prints the `latency …` and `dist …` lines of LatencySummary instead,
// with the same exit status (every message also stamped). LatencyBenchmark runs it next to cable-latency.js.
//
// With CABLE_BENCH_TYPED=1 in the environment, the loops read `messages(as:)` into a Decodable struct (the path
// apps use) instead of `JSONValue`s; SideBySideBenchmark runs both.

import BenchSupport
import CableReactive

#if canImport(Glibc)
    import Glibc
#endif

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let latency = arguments.count == 5 && arguments[4] == "latency"
let consumers = arguments.count >= 4 ? Int(arguments[3]) ?? 0 : 1
guard (3...4).contains(arguments.count) || latency, let url = URL(string: arguments[0]),
    let messages = Int(arguments[1]), let subscriptionCount = Int(arguments[2]), messages >= 0,
    subscriptionCount > 0, consumers > 0
else {
    printError("usage: CableBench URL N SUBS [CONSUMERS [latency]]")
    exit(2)
}
let expected = messages * consumers

// The main thread waits on a semaphore rather than in `dispatch_main` (what a top-level `await` uses on
// Linux): valgrind (callgrind) crashes on dispatch_main's sigsuspend, and this tool is meant to be profiled.
if latency {
    let outcome = LatencyClient.run(
        url: url, messages: messages, subscriptions: subscriptionCount, consumers: consumers)
    guard let outcome else { exit(1) }
    print(outcome.lines)
    exit(outcome.complete ? 0 : 1)
}
let typed = ProcessInfo.processInfo.environment["CABLE_BENCH_TYPED"] == "1"
let outcome = BenchClient.runBlocking(
    url: url, messages: messages, subscriptions: subscriptionCount, consumers: consumers, typed: typed)
guard let outcome else { exit(1) }
print("received \(outcome.count) in \(DecimalText.threePlaces(outcome.seconds)) s")
if outcome.dropped > 0 { printError("CableBench: dropped \(outcome.dropped)") }
exit(outcome.count == expected && outcome.dropped == 0 ? 0 : 1)
