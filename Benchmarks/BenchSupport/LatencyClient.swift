// CableBench's latency mode: BenchClient's run with an observer that times every stamped message.

import CableReactive
import Signals

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// One latency run of `ActionCableClient` against a paced sender (`CableWorkload.rate`).
package enum LatencyClient {
    package struct Outcome: Sendable {
        /// The `latency` and `dist` lines (`LatencySummary`).
        package var lines: String
        /// Every data message arrived, stamped, and none was dropped.
        package var complete: Bool
    }

    /// What the observer collects. The histogram takes one lock per message: loops of different subscriptions
    /// may run on two pool threads at once (the cooperative pool is as wide as the machine, whatever the
    /// affinity), and 1,000 histograms of 8 KiB each would not stay in the cache.
    private struct Phase {
        var histogram = LatencyHistogram()
        var unstamped = 0
        var start: rusage?
        var end: rusage?
    }

    /// Runs BenchClient with every data message's `now - message["t"]` recorded, and the process's CPU time
    /// and context switches from when every subscription is confirmed (the sender starts only then) to the
    /// end marker.
    package static func run(url: URL, messages: Int, subscriptions: Int, consumers: Int = 1) -> Outcome? {
        let phase = Locked(Phase())
        let observer = BenchClient.Observer(
            received: { message in
                let now = monotonicNanoseconds()
                guard let stamp = message["t"] else {
                    if message["end"] == nil { phase.withLock { $0.unstamped += 1 } }
                    return
                }
                guard let t = stamp.intValue, t >= 0 else {
                    phase.withLock { $0.unstamped += 1 }
                    return
                }
                let latency = now >= UInt64(t) ? now - UInt64(t) : 0
                phase.withLock { $0.histogram.record(latency) }
            },
            confirmed: {
                let usage = resourceUsage()
                phase.withLock { $0.start = usage }
            },
            finished: {
                let usage = resourceUsage()
                phase.withLock { $0.end = usage }
            })
        guard
            let outcome = BenchClient.runBlocking(
                url: url, messages: messages, subscriptions: subscriptions, consumers: consumers, observer: observer)
        else { return nil }
        return phase.withLock { phase in
            guard let start = phase.start, let end = phase.end else { return nil }
            let lines = LatencySummary.lines(
                phase.histogram, cpuMicroseconds: cpuMicroseconds(end) - cpuMicroseconds(start),
                voluntary: end.ru_nvcsw - start.ru_nvcsw, involuntary: end.ru_nivcsw - start.ru_nivcsw)
            let complete =
                outcome.count == messages * consumers && outcome.dropped == 0 && phase.unstamped == 0
                && phase.histogram.count == messages * consumers
            return Outcome(lines: lines, complete: complete)
        }
    }

    /// getrusage(RUSAGE_SELF): every thread of the process.
    private static func resourceUsage() -> rusage {
        var usage = rusage()
        #if canImport(Glibc)
            _ = getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
            _ = getrusage(RUSAGE_SELF, &usage)
        #endif
        return usage
    }

    private static func cpuMicroseconds(_ usage: rusage) -> Int {
        (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1_000_000 + Int(usage.ru_utime.tv_usec)
            + Int(usage.ru_stime.tv_usec)
    }
}
