// The client side of the bench, shared by CableBench and CableBenchmark. Public CableReactive API only.

import CableReactive
import Dispatch
import Signals

#if canImport(Glibc)
    import Glibc
#endif
#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

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

    /// Hooks into a run, for measurements beyond the count (CableBench's latency mode). Each is called from the run's own
    /// tasks, so it must be quick and thread-safe.
    package struct Observer: Sendable {
        /// Every message (the end marker too), on its subscription's loop, right as `next()` returns it.
        package var received: @Sendable (JSONValue) -> Void
        /// Once every subscription is confirmed, when the clock starts.
        package var confirmed: @Sendable () -> Void
        /// Once, on the loop that ends the run, as soon as it is over.
        package var finished: @Sendable () -> Void

        package init(
            received: @escaping @Sendable (JSONValue) -> Void, confirmed: @escaping @Sendable () -> Void,
            finished: @escaping @Sendable () -> Void
        ) {
            self.received = received
            self.confirmed = confirmed
            self.finished = finished
        }
    }

    /// Subscribes `subscriptions` identifiers `{"channel":"BenchChannel","sub":i}`, starts `consumers` loops on
    /// each one's messages, waits until all are confirmed, starts the clock, and counts the data messages of
    /// every loop. The server sends one `{"end":true}` after all of them, on the first subscription; whichever
    /// loop is ahead, the run ends once that marker has been seen and every loop has counted every data message
    /// before it (or counted it as dropped).
    /// A data message as an app declares it, for the typed path (`typed`: `messages(as: BenchMessage.self)`).
    struct BenchMessage: Decodable, Sendable {
        let seq: Int?
        let pad: String?
        let end: Bool?
    }

    /// One loop: counts what `messages` gives until the run ends; `isEnd` tells the end marker.
    private static func consume<Message: Sendable>(
        _ messages: CableMessages<Message>, _ attached: AsyncStream<Void>.Continuation, _ tally: Tally,
        _ dropped: @escaping @Sendable () -> Int, isEnd: (Message) -> Bool, received: (@Sendable (Message) -> Void)?
    ) async {
        var iterator = messages.makeAsyncIterator()
        attached.yield()
        while let message = await iterator.next() {
            received?(message)
            if isEnd(message) ? tally.endSeen(dropped: dropped) : tally.counted() { break }
        }
    }

    /// With `typed`, the loops read `messages(as:)` into a `Decodable` struct, the path apps use, instead of
    /// `JSONValue`s.
    package static func run(
        url: URL, messages: Int, subscriptions subscriptionCount: Int, consumers: Int = 1, typed: Bool = false,
        observer: Observer? = nil
    ) async throws -> Outcome {
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
        let tally = Tally(expected: messages * consumers, finished: observer?.finished)
        let dropped: @Sendable () -> Int = { subscriptions.reduce(0) { $0 + $1.messages.droppedCount } }
        var start = DispatchTime.now()
        await withTaskGroup(of: Void.self) { group in
            // Every loop is attached before connecting: messages that arrive while a subscription has no
            // consumer are held for its first one only.
            let (attachments, attached) = AsyncStream<Void>.makeStream()
            for subscription in subscriptions {
                for _ in 0..<consumers {
                    group.addTask {
                        if typed {
                            await consume(
                                subscription.messages(as: BenchMessage.self), attached, tally, dropped,
                                isEnd: { $0.end == true }, received: nil)
                        } else {
                            await consume(
                                subscription.messages, attached, tally, dropped,
                                isEnd: { $0["end"]?.boolValue == true }, received: observer?.received)
                        }
                    }
                }
            }
            var waiting = subscriptionCount * consumers
            for await _ in attachments {
                waiting -= 1
                if waiting == 0 { break }
            }
            client.connect()
            for subscription in subscriptions {
                _ = await subscription.state.first { state in
                    if case .subscribed = state { return true }
                    return false
                }
            }
            observer?.confirmed()
            start = DispatchTime.now()
            await tally.finished()
            group.cancelAll()  // the other loops wait for messages that will not come
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        return Outcome(count: tally.count, seconds: seconds, dropped: dropped())
    }

    /// The count over every loop, and the end of the run: the end marker was seen, and the data messages
    /// counted plus those dropped make up the expected number (every one of them arrived before the marker).
    ///
    private final class Tally: Sendable {
        private struct State {
            var total = 0
            var dropped = 0
            var ended = false
            var isFinished = false
            var waiter: CheckedContinuation<Void, Never>?
        }

        private let state = Locked(State())
        private let expected: Int
        private let onFinish: (@Sendable () -> Void)?

        init(expected: Int, finished: (@Sendable () -> Void)?) {
            self.expected = expected
            onFinish = finished
        }

        var count: Int { state.withLock { $0.total } }

        /// One data message; returns whether the run is over.
        func counted() -> Bool {
            let done = state.withLock { state in
                state.total += 1
                return state.ended && state.total + state.dropped >= expected
            }
            if done { finish() }
            return done
        }

        /// The end marker; `dropped` is read once, now: nothing more can be dropped after the last message.
        func endSeen(dropped: () -> Int) -> Bool {
            let drops = dropped()
            let done = state.withLock { state in
                state.ended = true
                state.dropped = drops
                return state.total + drops >= expected
            }
            if done { finish() }
            return done
        }

        /// Returns once the run is over.
        func finished() async {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state in
                    if !state.isFinished { state.waiter = continuation }
                    return state.isFinished
                }
                if now { continuation.resume() }
            }
        }

        private func finish() {
            let (waiter, first) = state.withLock { state in
                defer {
                    state.isFinished = true
                    state.waiter = nil
                }
                return (state.waiter, !state.isFinished)
            }
            if first { onFinish?() }
            waiter?.resume()
        }
    }

    /// `run` from synchronous code: blocks the calling thread until it is done; nil (logged) if it threw.
    package static func runBlocking(
        url: URL, messages: Int, subscriptions: Int, consumers: Int = 1, typed: Bool = false,
        observer: Observer? = nil
    ) -> Outcome? {
        final class Result: @unchecked Sendable {
            // Written by the task before it signals, read by the caller after the wait.
            var outcome: Outcome?
        }
        let result = Result()
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                result.outcome = try await run(
                    url: url, messages: messages, subscriptions: subscriptions, consumers: consumers,
                    typed: typed, observer: observer)
            } catch {
                printError("bench client: \(error)")
            }
            done.signal()
        }
        done.wait()
        return result.outcome
    }
}

/// Writes `line` and a newline to standard error in one call.
package func printError(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}
