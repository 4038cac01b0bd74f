import Testing

@testable import BenchSupport

/// LatencyHistogram's layout and LatencySummary's text, which Benchmarks/js/cable-latency.js and
/// Benchmarks/floor/cable-floor.c repeat: a change here that these tests catch must be made there too.
@Suite("LatencyHistogram")
struct LatencyHistogramTests {
    private func histogram(_ values: [UInt64]) -> LatencyHistogram {
        var histogram = LatencyHistogram()
        for value in values { histogram.record(value) }
        return histogram
    }

    @Test("bucket(of:) at the boundaries: exact below 64, 32 buckets per power of two, the last one open")
    func bucketBoundaries() {
        let cases: [(value: UInt64, bucket: Int)] = [
            (0, 0), (31, 31), (32, 32), (63, 63), (64, 64), (65, 64), (66, 65), (127, 95), (128, 96),
            (1_000_000, 509), ((1 << 36) - 1, 1_023), (1 << 36, 1_023), (UInt64.max, 1_023),
        ]
        for (value, bucket) in cases {
            #expect(LatencyHistogram.bucket(of: value) == bucket, "value \(value)")
        }
        #expect(LatencyHistogram.lowerBound(of: 509) == 999_424)
        #expect(LatencyHistogram.width(of: 509) == 16_384)
        #expect(LatencyHistogram.lowerBound(of: 1_023) + LatencyHistogram.width(of: 1_023) == 1 << 36)
    }

    @Test("every bucket's lowest and highest value map back to it, and the buckets tile 0 ..< 2^36")
    func roundTrips() {
        var next: UInt64 = 0
        for index in 0..<LatencyHistogram.bucketCount {
            let lower = LatencyHistogram.lowerBound(of: index)
            let width = LatencyHistogram.width(of: index)
            #expect(lower == next, "bucket \(index)")
            #expect(LatencyHistogram.bucket(of: lower) == index)
            #expect(LatencyHistogram.bucket(of: lower + width - 1) == index)
            #expect(index < 64 ? width == 1 : width * 32 <= lower, "bucket \(index) is at most 1/32 of its value")
            next = lower + width
        }
        #expect(next == 1 << 36)
    }

    @Test("value(atQuantile:) is the top of the bucket that reaches ceil(q × count), capped at the maximum")
    func quantiles() {
        #expect(LatencyHistogram().value(atQuantile: 0.99) == 0)
        let hundred = histogram(Array(1...100))
        #expect(hundred.value(atQuantile: 0.5) == 50)  // rank 50, an exact bucket
        #expect(hundred.value(atQuantile: 0.99) == 99)  // rank 99 in [98, 99]
        #expect(hundred.value(atQuantile: 0.999) == 100)  // rank 100 in [100, 101], capped at the maximum
        #expect(hundred.value(atQuantile: 0) == 1)  // rank at least 1
        let two = histogram([1_000_000, 2_000_000])
        #expect(two.value(atQuantile: 0.5) == 1_015_807)  // the top of [999424, 1015808)
        #expect(two.value(atQuantile: 0.51) == 2_000_000)
        #expect(two.max == 2_000_000)
        #expect(two.count == 2)
    }

    @Test("fraction(below:) counts a straddling bucket in proportion")
    func fractionBelow() {
        #expect(LatencyHistogram().fraction(below: 1_000) == 0)
        let values = histogram([10, 1_000_000])  // 10 exact; 1,000,000 in [999424, 1015808), 16,384 wide
        #expect(values.fraction(below: 10) == 0)
        #expect(values.fraction(below: 11) == 0.5)
        #expect(values.fraction(below: 999_424) == 0.5)
        #expect(values.fraction(below: 999_424 + 4_096) == 0.625)
        #expect(values.fraction(below: 1_015_808) == 1)
        #expect(values.fraction(below: 1 << 40) == 1)
    }

    @Test("LatencySummary.lines: microseconds rounded half up, six-decimal CPU, four-decimal fractions")
    func summaryLines() {
        #expect(
            LatencySummary.lines(LatencyHistogram(), cpuMicroseconds: 0, voluntary: 0, involuntary: 0)
                == "latency count=0 p50=0.0 p99=0.0 p999=0.0 max=0.0 cpu=0.000000 nvcsw=0 nivcsw=0\n"
                + "dist <50us:0.0000 <100us:0.0000 <250us:0.0000 <500us:0.0000 <1ms:0.0000 <10ms:0.0000 >=10ms:0.0000")
        #expect(
            LatencySummary.lines(histogram([12_345]), cpuMicroseconds: 1_000_005, voluntary: 3, involuntary: 4)
                == "latency count=1 p50=12.3 p99=12.3 p999=12.3 max=12.3 cpu=1.000005 nvcsw=3 nivcsw=4\n"
                + "dist <50us:1.0000 <100us:1.0000 <250us:1.0000 <500us:1.0000 <1ms:1.0000 <10ms:1.0000 >=10ms:0.0000")
        // <1ms: (1 + 576 / 16384) / 2 = 0.51758 of the two; p50 is the bucket of 10 ns.
        #expect(
            LatencySummary.lines(histogram([10, 1_000_000]), cpuMicroseconds: 2_500_000, voluntary: 1, involuntary: 0)
                == "latency count=2 p50=0.0 p99=1000.0 p999=1000.0 max=1000.0 cpu=2.500000 nvcsw=1 nivcsw=0\n"
                + "dist <50us:0.5000 <100us:0.5000 <250us:0.5000 <500us:0.5000 <1ms:0.5176 <10ms:1.0000 >=10ms:0.0000")
        let slow = histogram([20_000_000, 1, 1, 1])  // one in four at or above 10 ms
        #expect(
            LatencySummary.lines(slow, cpuMicroseconds: 0, voluntary: 0, involuntary: 0).hasSuffix(" >=10ms:0.2500"))
        #expect(LatencySummary.microseconds(0) == "0.0")
        #expect(LatencySummary.microseconds(49) == "0.0")
        #expect(LatencySummary.microseconds(50) == "0.1")
        #expect(LatencySummary.microseconds(12_349) == "12.3")
        #expect(LatencySummary.microseconds(12_350) == "12.4")
    }
}
