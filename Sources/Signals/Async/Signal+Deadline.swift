#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

extension Signal {
    /// Waits for the first value that satisfies `predicate`, for at most `timeout` seconds: ``first(isolation:where:)``
    /// with a deadline, for UI flows and tests that must not hang. A ``StateValue`` offers its current value first.
    ///
    /// ```swift
    /// let count = MutableStateValue(0)
    /// Task { count.value = 3 }
    /// let three = await count.first(within: 5) { $0 == 3 }   // 3, or nil after 5 s
    /// ```
    ///
    /// - Returns: the value, or `nil` when the time ran out, the signal finished or the task was cancelled.
    public func first(
        within timeout: TimeInterval,
        where predicate: @escaping @Sendable (Element) -> Bool
    ) async -> Element? {
        await withTaskGroup(of: Element?.self) { group in
            group.addTask { await self.first(where: predicate) }
            group.addTask {
                try? await Task.sleep(nanoseconds: Self.nanoseconds(timeout))
                return nil
            }
            let result = await group.next() ?? nil
            group.cancelAll()
            return result
        }
    }

    /// `seconds` as a sleep duration: 0 for a negative or NaN value, capped for huge ones.
    private static func nanoseconds(_ seconds: TimeInterval) -> UInt64 {
        guard seconds.isFinite, seconds > 0 else { return seconds == .infinity ? UInt64.max : 0 }
        return seconds >= 1e9 ? UInt64(1e18) : UInt64(seconds * 1e9)
    }
}
