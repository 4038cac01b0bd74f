// The latency benchmark's clock and histogram, shared by CableBench's latency mode and LatencyBenchmark. The Rails JS side
// (Benchmarks/js/cable-latency.js) repeats the bucket arithmetic and the output line: change both together.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// CLOCK_MONOTONIC in nanoseconds: the clock that the paced sender stamps `t` with and that node's
/// `process.hrtime.bigint()` reads on Linux, so one process's stamp is another's time.
package func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}

/// Latencies in nanoseconds in 1,024 log-linear buckets (HdrHistogram's layout with 5 sub-bucket bits): exact
/// below 64 ns, then 32 buckets per power of two, each 1/32 to 1/64 of its value wide (at most 3.1%), up to
/// 2^36 ns (68.7 s); longer values count in the last bucket. Fixed memory: recording never allocates.
///
/// Bucket `i` < 64 holds the value `i`; bucket `i` ≥ 64 holds `(32 + i % 32) << (i / 32 - 1)` and the
/// `1 << (i / 32 - 1)` values above it.
package struct LatencyHistogram: Sendable {
    package static let bucketCount = 1_024
    package private(set) var counts: [Int]
    package private(set) var count = 0
    /// The exact largest value recorded (0 when empty).
    package private(set) var max: UInt64 = 0

    package init() { counts = Array(repeating: 0, count: Self.bucketCount) }

    package static func bucket(of value: UInt64) -> Int {
        guard value >= 32 else { return Int(value) }
        guard value < 1 << 36 else { return bucketCount - 1 }
        let exponent = 63 - value.leadingZeroBitCount  // 5...35
        return (exponent - 5) * 32 + Int(value >> UInt64(exponent - 5))
    }

    /// The smallest value in bucket `index`.
    package static func lowerBound(of index: Int) -> UInt64 {
        guard index >= 64 else { return UInt64(index) }
        return UInt64(32 + index % 32) << UInt64(index / 32 - 1)
    }

    /// How many values bucket `index` holds.
    package static func width(of index: Int) -> UInt64 {
        index < 64 ? 1 : 1 << UInt64(index / 32 - 1)
    }

    package mutating func record(_ value: UInt64) {
        counts[Self.bucket(of: value)] += 1
        count += 1
        if value > max { max = value }
    }

    /// The value at quantile `q` (0.99 for p99): the highest value of the first bucket whose running count
    /// reaches `ceil(q × count)`, but never above `max` (what HdrHistogram reports). 0 when empty.
    package func value(atQuantile q: Double) -> UInt64 {
        guard count > 0 else { return 0 }
        let rank = Swift.max(1, Int((q * Double(count)).rounded(.up)))
        var running = 0
        for (index, bucketCount) in counts.enumerated() {
            running += bucketCount
            if running >= rank {
                return Swift.min(Self.lowerBound(of: index) + Self.width(of: index) - 1, max)
            }
        }
        return max
    }

    /// The fraction of values below `threshold` ns; a bucket that straddles it counts in proportion.
    package func fraction(below threshold: UInt64) -> Double {
        guard count > 0 else { return 0 }
        var below = 0.0
        for (index, bucketCount) in counts.enumerated() where bucketCount > 0 {
            let lower = Self.lowerBound(of: index)
            let width = Self.width(of: index)
            if lower + width <= threshold {
                below += Double(bucketCount)
            } else if lower < threshold {
                below += Double(bucketCount) * Double(threshold - lower) / Double(width)
            }
        }
        return below / Double(count)
    }
}

/// The two lines a latency client prints (CableBench's latency mode and cable-latency.js print the same):
///
///     latency count=N p50=… p99=… p999=… max=… cpu=… nvcsw=… nivcsw=…
///     dist <50us:… <100us:… <250us:… <500us:… <1ms:… <10ms:… >=10ms:…
///
/// Latencies in microseconds with one decimal (rounded half up from whole nanoseconds, so both clients print
/// the same text for the same histogram); `cpu` is user + system CPU seconds over the receive phase (getrusage
/// RUSAGE_SELF; node's `process.cpuUsage()`), `nvcsw`/`nivcsw` the voluntary and involuntary context switches
/// over it. `dist` gives cumulative fractions: `<1ms` is the share of messages below 1 ms, `>=10ms` the rest.
package enum LatencySummary {
    /// The `dist` thresholds in nanoseconds, with their labels.
    package static let thresholds: [(label: String, nanoseconds: UInt64)] = [
        ("<50us", 50_000), ("<100us", 100_000), ("<250us", 250_000), ("<500us", 500_000), ("<1ms", 1_000_000),
        ("<10ms", 10_000_000),
    ]

    package static func lines(_ histogram: LatencyHistogram, cpuMicroseconds: Int, voluntary: Int, involuntary: Int)
        -> String
    {
        let quantiles = [("p50", 0.5), ("p99", 0.99), ("p999", 0.999)].map { name, q in
            "\(name)=\(microseconds(histogram.value(atQuantile: q)))"
        }
        let cpu = "\(cpuMicroseconds / 1_000_000).\(sixDigits(cpuMicroseconds % 1_000_000))"
        let summary =
            "latency count=\(histogram.count) " + quantiles.joined(separator: " ")
            + " max=\(microseconds(histogram.max)) cpu=\(cpu) nvcsw=\(voluntary) nivcsw=\(involuntary)"
        let below = thresholds.map { histogram.fraction(below: $0.nanoseconds) }
        let shares = zip(thresholds, below).map { "\($0.label):\(fraction($1))" }
        let rest = histogram.count > 0 ? 1 - (below.last ?? 0) : 0
        return summary + "\ndist " + shares.joined(separator: " ") + " >=10ms:\(fraction(rest))"
    }

    /// `nanoseconds` as microseconds with one decimal, rounded half up.
    package static func microseconds(_ nanoseconds: UInt64) -> String {
        let tenths = (nanoseconds + 50) / 100
        return "\(tenths / 10).\(tenths % 10)"
    }

    /// A fraction in 0...1 with four decimals (`0.9731`), rounded half up, as JS's `toFixed(4)` mostly does.
    private static func fraction(_ value: Double) -> String {
        let tenThousandths = Int((Swift.min(1, Swift.max(0, value)) * 10_000).rounded())
        let digits = String(tenThousandths % 10_000)
        return "\(tenThousandths / 10_000)." + String(repeating: "0", count: 4 - digits.count) + digits
    }

    private static func sixDigits(_ value: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: Swift.max(0, 6 - digits.count)) + digits
    }
}
