// The client side of the bench, shared by CableBench and CableBenchmark. Public CableReactive API only.

import CableReactive
import Foundation

/// One bench run of `ActionCableClient` against a server that follows `CableWorkload`.
package enum BenchClient {
    package struct Outcome: Sendable {
        package var count: Int
        package var seconds: Double
        package var dropped: Int

        package init(count: Int, seconds: Double, dropped: Int) {
            self.count = count
            self.seconds = seconds
            self.dropped = dropped
        }
    }

    /// Subscribes `subscriptions` identifiers `{"channel":"BenchChannel","sub":i}`, waits until all are
    /// confirmed, starts the clock, and counts each subscription's data messages until its `{"end":true}`.
    package static func run(url: URL, messages: Int, subscriptions subscriptionCount: Int) async throws -> Outcome {
        var options = CableOptions()
        // A subscription may receive its whole share before its loop starts: room for all of it (and the end
        // marker) means a consumer that keeps up never drops. The ring buffer grows only as needed.
        options.messageBufferSize = messages / subscriptionCount + 2
        options.staleTimeout = 60
        let client = try ActionCableClient(url: url, options: options)
        defer { client.close() }
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
        return Outcome(count: count, seconds: seconds, dropped: dropped)
    }

    /// `run` from synchronous code: blocks the calling thread until it is done; nil (logged) if it threw.
    package static func runBlocking(url: URL, messages: Int, subscriptions: Int) -> Outcome? {
        final class Result: @unchecked Sendable {
            // Written by the task before it signals, read by the caller after the wait.
            var outcome: Outcome?
        }
        let result = Result()
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                result.outcome = try await run(url: url, messages: messages, subscriptions: subscriptions)
            } catch {
                FileHandle.standardError.write(Data("bench client: \(error)\n".utf8))
            }
            done.signal()
        }
        done.wait()
        return result.outcome
    }
}
