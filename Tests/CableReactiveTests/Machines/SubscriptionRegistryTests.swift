import CableTesting
import Foundation
import Testing

@testable import CableReactive

@Suite("SubscriptionRegistry")
struct SubscriptionRegistryTests {
    typealias Action = SubscriptionAction
    let room = #"{"channel":"ChatChannel","room":"1"}"#
    let other = #"{"channel":"EchoChannel"}"#

    private func sends(_ actions: [Action]) -> [String] {
        actions.compactMap { if case .send(let text) = $0 { text } else { nil } }
    }

    private func retries(_ actions: [Action]) -> [TimeInterval] {
        actions.compactMap { if case .scheduleRetry(_, _, let delay) = $0 { delay } else { nil } }
    }

    private func generation(_ actions: [Action]) -> UInt64? {
        actions.lazy.compactMap { if case .scheduleRetry(_, let generation, _) = $0 { generation } else { nil } }.first
    }

    @Test("subscribing before a session sends nothing; the welcome sends every subscribe in creation order")
    func sentAfterWelcome() {
        var random = SeededRandom(seed: 1)
        var registry = SubscriptionRegistry<Int>(retryDelays: [5, 10, 20, 30])
        #expect(registry.add(room, attachment: 0, random: &random)?.1.isEmpty == true)
        #expect(registry.add(other, attachment: 0, random: &random)?.1.isEmpty == true)
        let actions = registry.sessionStarted(1, random: &random)
        #expect(
            sends(actions) == [
                CableProtocol.subscribe(identifier: room), CableProtocol.subscribe(identifier: other),
            ])
        #expect(retries(actions).count == 2)
    }

    @Test("a subscription added during a live session goes out at once")
    func sentImmediatelyWhenLive() {
        var random = SeededRandom(seed: 1)
        var registry = SubscriptionRegistry<Int>(retryDelays: [5, 10, 20, 30])
        _ = registry.sessionStarted(1, random: &random)
        let actions = registry.add(room, attachment: 0, random: &random)?.1 ?? []
        #expect(sends(actions) == [CableProtocol.subscribe(identifier: room)])
    }

    @Test("the re-send schedule is an option: its steps in order, the last repeating; empty never re-sends")
    func customSchedule() {
        var random = SeededRandom(seed: 3)
        var registry = SubscriptionRegistry<Int>(retryDelays: [1, 2])
        _ = registry.add(room, attachment: 0, random: &random)
        var actions = registry.sessionStarted(1, random: &random)
        var delays = retries(actions)
        for _ in 0..<3 {
            actions = registry.retryFired(room, generation: generation(actions) ?? 0, random: &random)
            delays += retries(actions)
        }
        #expect(delays.count == 4)
        for (delay, step) in zip(delays, [1.0, 2, 2, 2]) { #expect(delay >= step * 0.75 && delay <= step * 1.25) }
        var never = SubscriptionRegistry<Int>(retryDelays: [])
        _ = never.add(room, attachment: 0, random: &random)
        let started = never.sessionStarted(1, random: &random)
        #expect(sends(started).count == 1 && retries(started).isEmpty)
    }

    @Test("each entry carries its owner's attachment through sessions, and loses it only when removed")
    func attachments() {
        var random = SeededRandom(seed: 1)
        var registry = SubscriptionRegistry<Int>(retryDelays: [5, 10, 20, 30])
        _ = registry.add(room, attachment: 10, random: &random)
        _ = registry.sessionStarted(1, random: &random)
        registry.updateAttachment(of: room) { $0 += 1 }
        registry.updateAttachment(of: other) { $0 = 99 }  // not registered: nothing happens
        _ = registry.confirmed(room)
        _ = registry.sessionEnded()
        #expect(registry[room]?.attachment == 11)
        #expect(registry[other] == nil)
        _ = registry.remove(room)
        #expect(registry[room] == nil)
    }

    @Test("one registration per identifier until it is removed")
    func duplicateIdentifier() {
        var random = SeededRandom(seed: 1)
        var registry = SubscriptionRegistry<Int>(retryDelays: [5, 10, 20, 30])
        let first = registry.add(room, attachment: 0, random: &random)?.serial
        #expect(registry.add(room, attachment: 0, random: &random) == nil)
        _ = registry.remove(room)
        let again = registry.add(room, attachment: 0, random: &random)?.serial
        #expect(first != nil && again != nil && first != again)
    }

    @Test("unanswered subscribes are re-sent after 5, 10, 20, 30, 30 s (±25%) until confirmed")
    func retrySchedule() {
        var random = SeededRandom(seed: 7)
        var registry = SubscriptionRegistry<Int>(retryDelays: [5, 10, 20, 30])
        _ = registry.add(room, attachment: 0, random: &random)
        var actions = registry.sessionStarted(1, random: &random)
        var delays = retries(actions)
        for _ in 0..<4 {
            guard let generation = generation(actions) else { return recordFailure("no retry scheduled") }
            actions = registry.retryFired(room, generation: generation, random: &random)
            #expect(sends(actions) == [CableProtocol.subscribe(identifier: room)])
            delays += retries(actions)
        }
        for (delay, base) in zip(delays, [5.0, 10, 20, 30, 30]) {
            #expect((base * 0.75...base * 1.25).contains(delay), "\(delay) for \(base)")
        }
        let confirmed = registry.confirmed(room)
        #expect(confirmed.contains(.cancelRetry(identifier: room)))
        #expect(registry.retryFired(room, generation: generation(actions) ?? 0, random: &random).isEmpty)
    }

    @Test("confirmations count once per connection, even with duplicate confirms")
    func confirmationsPerConnection() {
        var random = SeededRandom(seed: 1)
        var registry = SubscriptionRegistry<Int>(retryDelays: [5, 10, 20, 30])
        #expect(registry.add(room, attachment: 0, random: &random)?.serial == 1)
        _ = registry.sessionStarted(1, random: &random)
        #expect(registry.confirmed(room).contains(.publish(identifier: room, .subscribed(confirmations: 1))))
        #expect(registry.confirmed(room).isEmpty)
        #expect(registry.sessionEnded().contains(.publish(identifier: room, .pending)))
        _ = registry.sessionStarted(2, random: &random)
        #expect(registry.confirmed(room).contains(.publish(identifier: room, .subscribed(confirmations: 2))))
        #expect(registry.canPerform(room))
    }

    @Test("a rejected subscription is not retried on the same connection but is re-sent after the next welcome")
    func rejectedResentNextWelcome() {
        var random = SeededRandom(seed: 1)
        var registry = SubscriptionRegistry<Int>(retryDelays: [5, 10, 20, 30])
        #expect(registry.add(room, attachment: 0, random: &random)?.serial == 1)
        let started = registry.sessionStarted(1, random: &random)
        let rejected = registry.rejected(room)
        #expect(rejected.contains(.publish(identifier: room, .rejected)))
        #expect(registry.retryFired(room, generation: generation(started) ?? 0, random: &random).isEmpty)
        #expect(!registry.canPerform(room))
        _ = registry.sessionEnded()
        let again = registry.sessionStarted(2, random: &random)
        #expect(sends(again) == [CableProtocol.subscribe(identifier: room)])
        #expect(again.contains(.publish(identifier: room, .pending)))
    }

    @Test("a confirmation for an identifier we do not know gets an unsubscribe")
    func orphanConfirm() {
        var random = SeededRandom(seed: 1)
        var registry = SubscriptionRegistry<Int>(retryDelays: [5, 10, 20, 30])
        _ = registry.sessionStarted(1, random: &random)
        #expect(sends(registry.confirmed(room)) == [CableProtocol.unsubscribe(identifier: room)])
    }

    @Test("unsubscribe sends only if the subscribe went out on this connection, and is final")
    func unsubscribeRules() {
        var random = SeededRandom(seed: 1)
        var registry = SubscriptionRegistry<Int>(retryDelays: [5, 10, 20, 30])
        #expect(registry.add(room, attachment: 0, random: &random)?.serial == 1)
        let offline = registry.remove(room)
        #expect(sends(offline).isEmpty)
        #expect(offline.contains(.publish(identifier: room, .unsubscribed)))

        _ = registry.add(other, attachment: 0, random: &random)
        _ = registry.sessionStarted(1, random: &random)
        #expect(sends(registry.remove(other)) == [CableProtocol.unsubscribe(identifier: other)])
        #expect(sends(registry.sessionStarted(2, random: &random)).isEmpty)
        #expect(!registry.canPerform(other))
    }

    @Test("perform is allowed only when confirmed on the live session")
    func performRules() {
        var random = SeededRandom(seed: 1)
        var registry = SubscriptionRegistry<Int>(retryDelays: [5, 10, 20, 30])
        _ = registry.add(room, attachment: 0, random: &random)
        #expect(!registry.canPerform(room))
        _ = registry.sessionStarted(1, random: &random)
        #expect(!registry.canPerform(room))
        _ = registry.confirmed(room)
        #expect(registry.canPerform(room))
        _ = registry.sessionEnded()
        #expect(!registry.canPerform(room))
    }
}
