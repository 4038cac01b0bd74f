import CableTesting
import Foundation
import Signals
import Testing

@testable import CableReactive

@Suite("SubscriptionTable")
struct SubscriptionTableTests {
    typealias Action = SubscriptionAction
    let room = #"{"channel":"ChatChannel","room":"1"}"#
    let other = #"{"channel":"EchoChannel"}"#

    static func table(_ delays: [TimeInterval] = [5, 10, 20, 30]) -> SubscriptionTable {
        SubscriptionTable(retryDelays: delays, context: DeliveryBatchTests.context(bufferSize: 4))
    }

    private func sends(_ actions: [Action]) -> [String] {
        actions.compactMap { if case .send(let text) = $0 { text } else { nil } }
    }

    /// The deadlines the re-send timer was armed for (nil: cancelled).
    private func deadlines(_ actions: [Action]) -> [TimeInterval?] {
        actions.compactMap { if case .armRetries(let deadline) = $0 { deadline } else { nil } }
    }

    private func published(_ actions: [Action]) -> [SubscriptionState] {
        actions.compactMap { if case .publish(_, let state) = $0 { state } else { nil } }
    }

    private func ended(_ actions: [Action]) -> Int {
        actions.reduce(0) { count, action in if case .end(let sinks) = action { count + sinks.count } else { count } }
    }

    @discardableResult
    private func add(
        _ identifier: String, to table: inout SubscriptionTable, now: TimeInterval = 0,
        random: inout SeededRandom
    ) -> (route: DeliveryRoute, sink: HandleSink, [Action]) {
        table.addHandle(to: identifier, historySince: nil, bufferSize: 4, now: now, random: &random)
    }

    @Test("a read that loaded the route before the last handle's release hands its messages to the spare")
    func stagedBeforeReleaseGoesToTheSpare() {
        var random = SeededRandom(seed: 1)
        var table = SubscriptionTable(
            retryDelays: [5], unsubscribeDelay: 0.3, context: DeliveryBatchTests.context(bufferSize: 4))
        _ = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        let (loaded, sink, _) = add(room, to: &table, random: &random)
        _ = table.confirmed(room)
        let released = table.releaseHandle(sink.id, of: room, serial: loaded.serial, now: 0)
        #expect(sends(released).isEmpty && table.isLingering(room))
        sink.end()  // the release's effect ran before the read's hand-over
        var wakes = WakeList()
        loaded.deliver(CollectionOfOne(1), positioned: EmptyCollection(), wakes: &wakes)
        wakes.runAll()
        let (_, heir, adopted) = add(room, to: &table, now: 0.1, random: &random)
        #expect(sends(adopted).isEmpty && !table.isLingering(room))
        let held = PullConsumer(heir.messages, buffering: .bufferingNewest(4), keeping: nil)
        #expect(DeliveryBatchTests.drain(held) == [1])
        #expect(sink.messages.droppedCount == 0 && heir.messages.droppedCount == 0)
    }

    @Test("subscribing before a session sends nothing; the welcome sends every subscribe in creation order")
    func sentAfterWelcome() {
        var random = SeededRandom(seed: 1)
        var table = Self.table()
        #expect(add(room, to: &table, random: &random).2.isEmpty)
        #expect(add(other, to: &table, random: &random).2.isEmpty)
        let actions = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        #expect(
            sends(actions) == [CableProtocol.subscribe(identifier: room), CableProtocol.subscribe(identifier: other)])
        #expect(deadlines(actions).count == 1, "one timer, armed for the earliest re-send")
    }

    @Test("a subscription added during a live session goes out at once")
    func sentImmediatelyWhenLive() {
        var random = SeededRandom(seed: 1)
        var table = Self.table()
        _ = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        #expect(sends(add(room, to: &table, random: &random).2) == [CableProtocol.subscribe(identifier: room)])
    }

    @Test("the re-send schedule is an option: its steps in order, the last repeating; empty never re-sends")
    func customSchedule() {
        var random = SeededRandom(seed: 3)
        var table = Self.table([1, 2])
        add(room, to: &table, random: &random)
        var actions = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        var now: TimeInterval = 0
        var delays: [TimeInterval] = []
        for _ in 0..<4 {
            guard let deadline = deadlines(actions).compactMap({ $0 }).last else { break }
            delays.append(deadline - now)
            now = deadline
            actions = table.resendsDue(now: now, random: &random)
        }
        #expect(delays.count == 4)
        for (delay, step) in zip(delays, [1.0, 2, 2, 2]) { #expect(delay >= step * 0.75 && delay <= step * 1.25) }
        var never = Self.table([])
        add(room, to: &never, random: &random)
        let started = never.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        #expect(sends(started).count == 1 && deadlines(started).isEmpty)
    }

    @Test("one server subscription per identifier: a second handle shares it, the last release removes it")
    func sharedHandles() {
        var random = SeededRandom(seed: 1)
        var table = Self.table()
        _ = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        let first = add(room, to: &table, random: &random)
        let second = add(room, to: &table, random: &random)
        #expect(second.2.isEmpty, "no second subscribe")
        #expect(first.route.serial == second.route.serial && first.sink.id != second.sink.id)
        let leaves = table.releaseHandle(first.sink.id, of: room, serial: first.route.serial, now: 0)
        #expect(sends(leaves).isEmpty && ended(leaves) == 1 && table.count == 1)
        let last = table.releaseHandle(second.sink.id, of: room, serial: first.route.serial, now: 0)
        #expect(sends(last) == [CableProtocol.unsubscribe(identifier: room)] && ended(last) == 1)
        #expect(table.count == 0 && table.state(of: room) == nil)
        #expect(add(room, to: &table, random: &random).route.serial != first.route.serial, "a new serial")
    }

    @Test("unanswered subscribes are re-sent after 5, 10, 20, 30, 30 s (±25%) until confirmed; WARN after two")
    func retrySchedule() {
        var random = SeededRandom(seed: 7)
        var table = Self.table()
        add(room, to: &table, random: &random)
        var actions = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        var now: TimeInterval = 0
        var delays: [TimeInterval] = []
        var warnings: [String] = []
        for _ in 0..<5 {
            guard let deadline = deadlines(actions).compactMap({ $0 }).last else {
                Issue.record("no re-send armed")
                return
            }
            delays.append(deadline - now)
            now = deadline
            #expect(
                table.resendsDue(now: now - 0.5, random: &random).allSatisfy {
                    if case .send = $0 { false } else { true }
                })
            actions = table.resendsDue(now: now, random: &random)
            #expect(sends(actions) == [CableProtocol.subscribe(identifier: room)])
            warnings += actions.compactMap { action in
                guard case .log(let event) = action, event.level == .warn else { return nil }
                return "\(event.name) " + event.fields.map(\.rendered).joined(separator: " ")
            }
        }
        // Once, as the third re-send goes out: the channel's class and how many went unanswered, no other param.
        #expect(warnings == ["subscribe_unanswered sub=#1 channel=ChatChannel count=3"])
        for (delay, base) in zip(delays, [5.0, 10, 20, 30, 30]) {
            #expect((base * 0.75...base * 1.25).contains(delay), "\(delay) for \(base)")
        }
        #expect(table.subscribesSent(room) == 6)
        let confirmed = table.confirmed(room)
        #expect(deadlines(confirmed) == [nil], "the timer is cancelled with the last re-send")
        #expect(sends(table.resendsDue(now: now + 100, random: &random)).isEmpty)
    }

    @Test("confirmations count once per connection, even with duplicate confirms; state follows the session")
    func confirmationsPerConnection() {
        var random = SeededRandom(seed: 1)
        var table = Self.table()
        let handle = add(room, to: &table, random: &random)
        _ = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        #expect(published(table.confirmed(room)) == [.subscribed(confirmations: 1)])
        #expect(table.confirmed(room).isEmpty)
        #expect(table.canPerform(room, sink: handle.sink.id) && !table.canPerform(room, sink: handle.sink.id + 1))
        #expect(published(table.sessionEnded()) == [.pending])
        #expect(table.state(of: room) == .pending)
        _ = table.sessionStarted(2, restored: nil, replays: false, now: 0, random: &random)
        #expect(published(table.confirmed(room)) == [.subscribed(confirmations: 2)])
        #expect(table.state(of: room) == .subscribed(confirmations: 2))
    }

    @Test("a rejected subscription is not re-sent on the same connection but is sent again after the next welcome")
    func rejectedResentNextWelcome() {
        var random = SeededRandom(seed: 1)
        var table = Self.table()
        let handle = add(room, to: &table, random: &random)
        let started = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        #expect(published(table.rejected(room)) == [.rejected])
        let deadline = deadlines(started).compactMap { $0 }.last ?? 0
        #expect(sends(table.resendsDue(now: deadline, random: &random)).isEmpty)
        #expect(!table.canPerform(room, sink: handle.sink.id))
        #expect(published(table.sessionEnded()).isEmpty && table.state(of: room) == .rejected, "rejected stays")
        let again = table.sessionStarted(2, restored: nil, replays: false, now: 0, random: &random)
        #expect(sends(again) == [CableProtocol.subscribe(identifier: room)])
        #expect(published(again) == [.pending])
    }

    @Test("a confirmation for an identifier we do not know gets an unsubscribe, spelled as the server spelled it")
    func orphanConfirm() {
        var random = SeededRandom(seed: 1)
        var table = Self.table()
        _ = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        #expect(sends(table.confirmed(room)) == [CableProtocol.unsubscribe(identifier: room)])
    }

    @Test("unsubscribe sends only if the subscribe went out on this connection, and is final")
    func unsubscribeRules() {
        var random = SeededRandom(seed: 1)
        var table = Self.table()
        let offline = add(room, to: &table, random: &random)
        let removed = table.releaseHandle(offline.sink.id, of: room, serial: offline.route.serial, now: 0)
        #expect(sends(removed).isEmpty && ended(removed) == 1)

        let live = add(other, to: &table, random: &random)
        _ = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        let unsubscribe = table.releaseHandle(live.sink.id, of: other, serial: live.route.serial, now: 0)
        #expect(sends(unsubscribe) == [CableProtocol.unsubscribe(identifier: other)])
        _ = table.sessionEnded()
        #expect(sends(table.sessionStarted(2, restored: nil, replays: false, now: 0, random: &random)).isEmpty)
        #expect(!table.canPerform(other, sink: live.sink.id))
    }

    @Test(
        "a restored subscription is confirmed with no subscribe; a listed one never confirmed is adopted, an unlisted one subscribed"
    )
    func restore() {
        var random = SeededRandom(seed: 1)
        var table = Self.table()
        let third = #"{"channel":"Third"}"#
        add(room, to: &table, random: &random)
        add(other, to: &table, random: &random)
        add(third, to: &table, random: &random)
        _ = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        _ = table.confirmed(room)
        _ = table.sessionEnded()
        // other's subscribe went out and the server took it, but its confirmation was lost with the connection
        let actions = table.sessionStarted(
            2, restored: .init(identifiers: [room, other]), replays: false, now: 0, random: &random)
        #expect(sends(actions) == [CableProtocol.subscribe(identifier: third)])
        #expect(table.state(of: room) == .subscribed(confirmations: 1) && table.subscribesSent(room) == 0)
        #expect(table.lastReconnect(of: room) == .restored)
        #expect(table.state(of: other) == .subscribed(confirmations: 1) && table.subscribesSent(other) == 0)
        #expect(table.lastReconnect(of: other) == nil, "its first confirmation, not a reconnect")
        #expect(table.state(of: third) == .pending)
    }

    @Test("restored with no list: only what was confirmed on the previous session is restored")
    func restoreWithoutList() {
        var random = SeededRandom(seed: 1)
        var table = Self.table()
        add(room, to: &table, random: &random)
        add(other, to: &table, random: &random)
        _ = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        _ = table.confirmed(room)
        _ = table.sessionEnded()
        let actions = table.sessionStarted(
            2, restored: .init(identifiers: nil), replays: false, now: 0, random: &random)
        #expect(sends(actions) == [CableProtocol.subscribe(identifier: other)])
        #expect(table.state(of: room) == .subscribed(confirmations: 1))
    }

    @Test("a listed identifier no handle holds gets one unsubscribe, as the server spelled it")
    func restoreUnheld() {
        var random = SeededRandom(seed: 1)
        var table = Self.table()
        let handle = add(room, to: &table, random: &random)
        _ = table.sessionStarted(1, restored: nil, replays: false, now: 0, random: &random)
        _ = table.confirmed(room)
        _ = table.sessionEnded()
        #expect(sends(table.releaseHandle(handle.sink.id, of: room, serial: handle.route.serial, now: 0)).isEmpty)
        let spelled = #"{"room": "1", "channel": "ChatChannel"}"#  // the server's spelling of room
        let actions = table.sessionStarted(
            2, restored: .init(identifiers: [spelled]), replays: false, now: 0, random: &random)
        #expect(sends(actions) == [CableProtocol.unsubscribe(identifier: spelled)])
        #expect(table.count == 0)
    }

    @Test("a server's other spelling of an identifier resolves, is remembered as an alias and is published")
    func aliases() {
        var random = SeededRandom(seed: 1)
        var table = Self.table()
        let identifier = #"{"channel":"Café"}"#
        let first = add(identifier, to: &table, random: &random)
        let alias = #"{"channel": "Caf\u00e9"}"#  // spaced and escaped: a server's re-encoding
        #expect(table.resolve(alias) === first.route)
        table.publishRoutes()
        let token = String(decoding: RouteIndex.token(for: alias), as: UTF8.self)
        #expect(RouteIndexTests.lookup(table.published.withLock { $0.index }, token) === first.route)
        let second = add(identifier, to: &table, random: &random)  // a new route, with both handles
        table.publishRoutes()
        let routed = RouteIndexTests.lookup(table.published.withLock { $0.index }, token)
        #expect(routed?.sinks.map(\.id) == [first.sink.id, second.sink.id], "the alias follows the new route")
        #expect(table.resolve(#"{"channel":"Other"}"#) == nil)
        _ = table.releaseHandle(first.sink.id, of: identifier, serial: first.route.serial, now: 0)
        _ = table.releaseHandle(second.sink.id, of: identifier, serial: first.route.serial, now: 0)
        table.publishRoutes()
        #expect(table.published.withLock { $0.index.count } == 0, "the identifier and its alias went with it")
    }

    @Test("the published routes carry the live session")
    func publishedLive() {
        var random = SeededRandom(seed: 1)
        var table = Self.table()
        _ = table.sessionStarted(3, restored: nil, replays: false, now: 0, random: &random)
        table.publishRoutes()
        #expect(table.published.withLock { $0.live } == 3)
        _ = table.sessionEnded()
        #expect(table.published.withLock { $0.live } == 3, "not until published")
        table.publishRoutes()
        #expect(table.published.withLock { $0.live } == nil)
    }
}
