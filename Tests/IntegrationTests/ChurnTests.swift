import CableReactive
import Foundation
import Signals
import Testing

extension IntegrationTests {
    /// Navigation churn against the real Rails server: a screen releases its handle and subscribes to the same
    /// params again within milliseconds. Rails runs a connection's commands on its worker pool, so a
    /// `subscribe` right behind an `unsubscribe` can overtake it and be dropped without an answer; the
    /// client's linger (``CableOptions/unsubscribeDelay``) sends neither.
    @Suite struct Churn {
        /// 100 release-and-resubscribe cycles with gaps of 0–50 ms and broadcasts in between: every cycle is
        /// subscribed again within 1 s, the server holds exactly one subscription, and every broadcast reaches
        /// one of the handles, in order.
        @Test func releaseAndResubscribe() async throws {
            let user = unique("churn")
            let stream = unique("churn")
            let control = try Env.control()
            var options = CableOptions.test()
            if let delay = ProcessInfo.processInfo.environment["CABLE_CHURN_DELAY"].flatMap(Double.init) {
                options.unsubscribeDelay = delay  // to show the race without the linger (0)
            }
            let client = try makeClient(try Env.railsURL(), query: "token=tok-\(user)", options: options)
            defer { client.close() }
            client.connect()
            let params: JSONValue = ["channel": "EchoChannel", "stream": .string(stream)]
            let received = Locked<[Int]>([])
            /// A screen's loop: reads its handle's messages until the handle ends.
            func read(_ handle: ChannelSubscription) -> Task<Void, Never> {
                Task {
                    for await message in handle.messages {
                        if let n = message["n"]?.intValue { received.withLock { $0.append(n) } }
                    }
                }
            }
            var broadcasts = 0
            func broadcast() async throws {
                broadcasts += 1
                try await HTTP.post(control + "/broadcast?stream=\(stream)", body: #"{"n":\#(broadcasts)}"#)
            }
            var handle = try client.subscribe(params)
            var reader = read(handle)
            try await waitFor(handle.state, 10, "the first confirmation", where: isSubscribed)
            var slowest = 0.0
            for cycle in 0..<100 {
                try await broadcast()
                handle.unsubscribe()
                await reader.value  // the screen's loop read what its handle held, and ended
                try await broadcast()  // while no handle holds the subscription
                try await Task.sleep(nanoseconds: UInt64.random(in: 0...50_000_000))
                handle = try client.subscribe(params)
                reader = read(handle)
                let start = monotonicNow()
                try await waitFor(handle.state, 1, "cycle \(cycle): subscribed again", where: isSubscribed)
                slowest = max(slowest, monotonicNow() - start)
            }
            try await broadcast()
            let expected = Array(1...broadcasts)
            // Waits for all (the expectation below names what is missing if they never come).
            try? await eventually(10, "\(broadcasts) broadcasts") { received.withLock { $0.count } >= expected.count }
            let got = received.withLock { $0 }
            #expect(got == expected, "\(expected.count - Set(got).count) of \(expected.count) broadcasts missing")
            #expect(slowest < 1)
            let detail = try await HTTP.get(control + "/connections?detail=1")
            let mine = detail["connections"]?.arrayValue?.filter { $0["user"]?.stringValue == user } ?? []
            #expect(mine.count == 1)
            #expect(mine.first?["subscriptions"]?.arrayValue?.compactMap(\.stringValue) == [handle.identifier])
            handle.unsubscribe()
            await reader.value
        }
    }
}
