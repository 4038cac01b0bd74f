// A command-line Action Cable client for side-by-side throughput comparisons with other clients.
//
//     swift run -c release CableBench URL N SUBS [CONSUMERS]
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
let consumers = arguments.count == 4 ? Int(arguments[3]) ?? 0 : 1
guard arguments.count == 3 || arguments.count == 4, let url = URL(string: arguments[0]),
    let messages = Int(arguments[1]), let subscriptionCount = Int(arguments[2]), messages >= 0,
    subscriptionCount > 0, consumers > 0
else {
    printError("usage: CableBench URL N SUBS [CONSUMERS]")
    exit(2)
}
let expected = messages * consumers

// The main thread waits on a semaphore rather than in `dispatch_main` (what a top-level `await` uses on
// Linux): valgrind (callgrind) crashes on dispatch_main's sigsuspend, and this tool is meant to be profiled.
let outcome = BenchClient.runBlocking(
    url: url, messages: messages, subscriptions: subscriptionCount, consumers: consumers)
guard let outcome else { exit(1) }
print("received \(outcome.count) in \(DecimalText.threePlaces(outcome.seconds)) s")
if outcome.dropped > 0 { printError("CableBench: dropped \(outcome.dropped)") }
exit(outcome.count == expected && outcome.dropped == 0 ? 0 : 1)
