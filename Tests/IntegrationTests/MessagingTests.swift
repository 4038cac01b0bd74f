import CableReactive
import Foundation
import Signals
import Testing

extension IntegrationTests {
    @Suite struct Messaging {
        /// 20 performs from 20 tasks at once: each is sent and answered exactly once.
        @Test func concurrentPerforms() async throws {
            let client = try makeClient(try Env.railsURL(), query: "token=tok-\(unique("perf"))")
            defer { client.close() }
            client.connect()
            let subscription = try await echoSubscription(client)
            let sent = await withTaskGroup(of: Bool.self) { group in
                for index in 0..<20 {
                    group.addTask { subscription.perform("echo", ["n": .int(index)]) }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(sent == 20)
            // then a marker: answers keep coming until the marker, so a duplicate sent before it is counted
            let seen = try await within(10, "20 answers") { () -> [Int: Int] in
                var seen: [Int: Int] = [:]
                var markerSent = false
                for await message in subscription.messages {
                    if message["marker"] != nil { return seen }
                    if let n = message["n"]?.intValue { seen[n, default: 0] += 1 }
                    if seen.count == 20 && !markerSent {
                        markerSent = subscription.perform("echo", ["marker": true])
                    }
                }
                return seen
            }
            #expect(seen.keys.sorted() == Array(0..<20))
            #expect(seen.values.allSatisfy { $0 == 1 })
        }

        /// 20 subscriptions made before connect() all go out after the welcome and are confirmed.
        @Test func subscriptionsBeforeConnect() async throws {
            let user = unique("pre")
            let client = try makeClient(try Env.railsURL(), query: "token=tok-\(user)")
            defer { client.close() }
            let subscriptions = try (0..<20).map { index in
                try client.subscribe(["channel": "EchoChannel", "stream": .string("\(user)-\(index)")])
            }
            #expect(subscriptions.allSatisfy { $0.state.value == .pending })
            client.connect()
            for subscription in subscriptions {
                try await waitFor(subscription.state, 10, "\(subscription.identifier) confirmed") {
                    $0 == .subscribed(confirmations: 1)
                }
            }
            let detail = try await HTTP.get(try Env.control() + "/connections?detail=1")
            let mine = detail["connections"]?.arrayValue?.filter { $0["user"]?.stringValue == user } ?? []
            #expect(mine.count == 1)
            #expect(Set(mine.first?["subscriptions"]?.arrayValue?.compactMap(\.stringValue) ?? []).count == 20)
        }

        /// 20,000 messages into a 128-message buffer nobody reads: the newest 128 stay, the rest are counted as
        /// dropped, the connection stays up. The buffer is read only after the last message (burst_done) has
        /// certainly arrived: that is when the drop count reaches 20,001 − 128.
        @Test func burstKeepsTheNewest() async throws {
            let total = 20_000
            let capacity = 128
            let client = try makeClient(try Env.railsURL(), query: "token=tok-\(unique("burst"))")
            defer { client.close() }
            client.connect()
            let subscription = try await echoSubscription(client)
            let states = Recorder(client.state)
            #expect(subscription.perform("flood", ["count": .int(total)]))
            let expectedDrops = total + 1 - capacity
            try await eventually(60, "drop count \(expectedDrops)") {
                subscription.messages.droppedCount >= expectedDrops
            }
            #expect(subscription.messages.droppedCount == expectedDrops)
            let kept = try await within(5, "the kept messages") { () -> [JSONValue] in
                var kept: [JSONValue] = []
                for await message in subscription.messages {
                    kept.append(message)
                    if message["burst_done"] != nil { break }
                }
                return kept
            }
            #expect(kept.count == capacity)
            #expect(kept.last?["burst_done"]?.intValue == total)
            let seqs = kept.dropLast().compactMap { $0["seq"]?.intValue }
            #expect(seqs == Array((total - capacity + 1)..<total))
            #expect(client.state.value == .connected)
            #expect(states.values == [.connected])
            _ = try await echo(subscription)
        }

        /// Unicode and every control character survive the round trip through Rails' JSON.
        @Test func textRoundTrip() async throws {
            let client = try makeClient(try Env.railsURL(), query: "token=tok-\(unique("text"))")
            defer { client.close() }
            client.connect()
            let subscription = try await echoSubscription(client)
            let controls = String(String.UnicodeScalarView((0..<0x20).compactMap(Unicode.Scalar.init)))
            let samples: [String] = [
                "emoji 😀👍🏽👨‍👩‍👧‍👦🏳️‍🌈",
                "CJK 漢字かなカナ한국어",
                "RTL עברית العربية \u{200F}mixed\u{200E}",
                "combining e\u{301} a\u{308}\u{304} Z\u{335}\u{30C}\u{352}",
                "controls \(controls) end",
                "separators \u{2028} \u{2029} \u{85} \u{7F}",
                "json-ish \" \\ / <script>&amp;</script> \u{FEFF}",
                "astral 𝄞 𐐷 🀄",
            ]
            for sample in samples {
                let answer = try await echo(subscription, ["text": .string(sample)])
                #expect(answer["text"]?.stringValue == sample, "round trip of \(sample.debugDescription)")
            }
        }
    }
}
