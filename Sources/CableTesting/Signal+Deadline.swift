import Foundation
import Signals

extension Signal {
    /// Waits for the first value that satisfies `predicate`, for at most `timeout` seconds: a deadline for
    /// tests that must not hang. A ``StateValue`` offers its current value first.
    ///
    /// ```swift
    /// let state = await client.state.first(within: 5) { $0 == .connected }
    /// #expect(state == .connected)
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
                try? await Task.sleep(nanoseconds: nanoseconds(timeout))
                return nil
            }
            let result = await group.next() ?? nil
            group.cancelAll()
            return result
        }
    }
}
