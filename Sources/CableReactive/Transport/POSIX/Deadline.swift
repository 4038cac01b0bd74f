#if os(Linux) && canImport(CCableReactiveOpenSSL)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// A point on the monotonic clock, for connect and close timeouts.
    package struct Deadline: Comparable, Sendable {
        /// Nanoseconds on `CLOCK_MONOTONIC`.
        package var nanoseconds: UInt64

        package static var now: Deadline {
            var spec = timespec()
            clock_gettime(CLOCK_MONOTONIC, &spec)
            return Deadline(nanoseconds: UInt64(spec.tv_sec) &* 1_000_000_000 &+ UInt64(spec.tv_nsec))
        }

        /// `seconds` from now (negative or non-finite values count as zero; huge ones saturate).
        package static func after(seconds: Double) -> Deadline {
            let nanos = seconds.isFinite && seconds > 0 ? min(seconds * 1e9, 1e18) : 0
            return Deadline(nanoseconds: now.nanoseconds &+ UInt64(nanos))
        }

        /// Milliseconds left, rounded up, as a `poll` timeout (0 once passed).
        package var pollTimeout: Int32 {
            let current = Deadline.now.nanoseconds
            guard nanoseconds > current else { return 0 }
            let millis = (nanoseconds - current + 999_999) / 1_000_000
            return Int32(clamping: millis)
        }

        package var hasPassed: Bool { Deadline.now >= self }

        package static func < (lhs: Deadline, rhs: Deadline) -> Bool { lhs.nanoseconds < rhs.nanoseconds }
    }
#endif
