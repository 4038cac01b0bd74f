import CableReactive
import CableTesting
import Dispatch
import Foundation
import Signals
import Testing

/// Model-based test: random sequences of API calls, server frames, faults and time jumps, with the
/// client's invariants checked after every step.
@Suite("ActionCableClient: model-based")
struct ClientModelTests {
    /// 100 seeds; `CABLE_MODEL_SEEDS=a..<b` replays a range (e.g. one failing seed).
    static let seeds: Range<Int> = {
        let parts = (ProcessInfo.processInfo.environment["CABLE_MODEL_SEEDS"] ?? "").components(separatedBy: "..<")
        guard parts.count == 2, let low = Int(parts[0]), let high = Int(parts[1]), low < high else { return 0..<100 }
        return low..<high
    }()
    /// One handle, with two consumers on its messages (an observer and a mapped observer).
    private final class Tracked: Sendable {
        let subscription: ChannelSubscription
        let channel: Int
        let received = Locked<[JSONValue]>([])
        let mapped = Locked<[JSONValue]>([])
        let observations: [SignalObservation]
        let expected = Locked<[JSONValue]>([])

        init(_ subscription: ChannelSubscription, channel: Int) {
            self.subscription = subscription
            self.channel = channel
            let received = received
            let mapped = mapped
            observations = [
                subscription.messages.observe { message in received.withLock { $0.append(message) } },
                subscription.messages.map { $0 }.observe { message in mapped.withLock { $0.append(message) } },
            ]
        }
    }

    @Test("100 seeds x 200 random steps keep every invariant", arguments: ClientModelTests.seeds)
    func randomWalk(seed: Int) throws {
        try walk(seed: seed, extended: false)
    }

    /// The same walk against an AnyCable server speaking the extended protocol: restoring welcomes (all, some
    /// or none of the subscriptions), messages with stream positions (some repeated), and replay answers.
    @Test("100 seeds x 200 random steps against an extended-protocol server", arguments: ClientModelTests.seeds)
    func extendedRandomWalk(seed: Int) throws {
        try walk(seed: seed, extended: true)
    }

    private func walk(seed: Int, extended: Bool) throws {
        var options = CableOptions()
        options.messageBufferSize = 10_000
        options.maxReconnectAttempts = 6
        if extended { options.wireProtocol = .anyCableExtended }
        let subprotocol = extended ? "actioncable-v1-ext-json" : "actioncable-v1-json"
        /// The server's last offset per channel: only messages that reach the client take one, so the
        /// client never sees a gap it would hold messages for.
        var offsets: [Int: Int] = [:]
        let gate = MutableStateValue(true)
        let h = try ClientHarness(options: options, gate: gate.eraseToAnySignal(), seed: UInt64(seed))
        var random = SeededRandom(seed: UInt64(seed) &* 7919)
        var tracked: [Tracked] = []
        var nextChannel = 0
        var sequence = 0

        /// The newest connection if it is open: a server can only send on an open connection.
        func live() -> FakeTransport.Connection? {
            guard let last = h.fake.last, last.isOpen else { return nil }
            return last
        }

        for step in 0..<200 {
            switch Int.random(in: 0..<16, using: &random) {
            case 0: h.client.connect()
            case 1: if Int.random(in: 0..<3, using: &random) == 0 { h.client.disconnect() }
            case 2: gate.value.toggle()
            case 3: h.fake.last?.open(subprotocol: subprotocol)
            case 4:
                var welcomes = [#"{"type":"welcome"}"#]
                if extended {
                    let some = tracked.randomElement(using: &random).map {
                        ClientHarness.quoted($0.subscription.identifier)
                    }
                    welcomes += [
                        #"{"type":"welcome","sid":"s\#(step)"}"#,
                        #"{"type":"welcome","sid":"s\#(step)","restored":true}"#,
                        #"{"type":"welcome","sid":"s\#(step)","restored":true,"restored_ids":[\#(some ?? "")]}"#,
                    ]
                }
                live()?.receive(welcomes[Int.random(in: 0..<welcomes.count, using: &random)])
            case 5, 6:
                if let entry = tracked.randomElement(using: &random), let connection = live() {
                    let frame = Bool.random(using: &random) ? ClientHarness.confirm : ClientHarness.reject
                    connection.receive(frame(entry.subscription.identifier))
                }
            case 7, 8:
                if let entry = tracked.randomElement(using: &random), let connection = live() {
                    sequence += 1
                    let delivered = h.state == .connected && connection.isOpen
                    let payload: JSONValue = ["seq": .int(sequence)]
                    var frame = ClientHarness.message(entry.subscription.identifier, #"{"seq":\#(sequence)}"#)
                    if extended {
                        let offset = (offsets[entry.channel] ?? 0) + (delivered ? 1 : 0)
                        if delivered { offsets[entry.channel] = offset }
                        frame =
                            String(frame.dropLast())
                            + #","stream_id":"c\#(entry.channel)","epoch":"e","offset":\#(offset)}"#
                    }
                    connection.receive(frame)
                    // Every handle on the identifier gets it.
                    for other in tracked where delivered && other.channel == entry.channel {
                        other.expected.withLock { $0.append(payload) }
                    }
                    if extended, delivered, Int.random(in: 0..<4, using: &random) == 0 {
                        connection.receive(frame)  // a repeat, as AnyCable may send one live and replayed
                    }
                }
            case 9:
                let garbage = ["{", "[]", #"{"type":7}"#, #"{"identifier":1,"message":2}"#, "\u{0}", "nul"]
                live()?.receive(garbage[Int.random(in: 0..<garbage.count, using: &random)])
            case 10:
                if Bool.random(using: &random) { live()?.fail() } else { live()?.serverClose() }
            case 11:
                let frames = [
                    #"{"type":"disconnect","reason":"server_restart","reconnect":true}"#,
                    #"{"type":"disconnect","reason":"remote","reconnect":false}"#,
                    #"{"type":"disconnect","reason":"unauthorized","reconnect":false}"#,
                    #"{"type":"ping","message":1}"#,
                ]
                if extended, let entry = tracked.randomElement(using: &random), Bool.random(using: &random) {
                    let type = Bool.random(using: &random) ? "confirm_history" : "reject_history"
                    live()?.receive(
                        #"{"identifier":\#(ClientHarness.quoted(entry.subscription.identifier)),"type":"\#(type)"}"#)
                    break
                }
                live()?.receive(frames[Int.random(in: 0..<frames.count, using: &random)])
            case 12:
                h.scheduler.advance(by: Double.random(in: 0...20, using: &random))
            case 13:
                // A new channel, or another handle on a tracked one (the server subscription is shared).
                var channel = nextChannel + 1
                if let shared = tracked.randomElement(using: &random), Bool.random(using: &random) {
                    channel = shared.channel
                } else {
                    nextChannel += 1
                }
                if let subscription = try? h.client.subscribe(["channel": "C", "n": .int(channel)]) {
                    tracked.append(Tracked(subscription, channel: channel))
                }
            case 14:
                if !tracked.isEmpty {
                    let entry = tracked.remove(at: Int.random(in: 0..<tracked.count, using: &random))
                    entry.subscription.unsubscribe()
                    h.scheduler.flush()
                    #expect(entry.subscription.state.value == .unsubscribed)
                    for other in tracked where other.channel == entry.channel && h.state != .closed {
                        #expect(
                            other.subscription.state.value != .unsubscribed,
                            "seed \(seed) step \(step): unsubscribing one handle ended another")
                    }
                }
            default:
                if let entry = tracked.randomElement(using: &random) {
                    let state = h.state
                    let subscriptionState = h.state(of: entry.subscription)
                    let sent = entry.subscription.perform("go", ["n": 1])
                    if sent {
                        guard case .subscribed = subscriptionState, state == .connected else {
                            return recordFailure(
                                "seed \(seed) step \(step): perform sent while \(state), \(subscriptionState)")
                        }
                    }
                }
            }
            try checkInvariants(h, tracked: tracked.map(\.subscription), seed: seed, step: step)
        }

        h.scheduler.flush()
        for entry in tracked {
            let expected = entry.expected.withLock { $0 }
            #expect(
                entry.received.withLock { $0 } == expected,
                "seed \(seed): deliveries for \(entry.subscription.identifier)")
            #expect(entry.mapped.withLock { $0 } == expected, "seed \(seed): mapped deliveries")
        }
        h.client.close()
        #expect(h.state == .closed)
        #expect(h.fake.connections.allSatisfy { $0.isClosed })
    }

    private func checkInvariants(
        _ h: ClientHarness,
        tracked: [ChannelSubscription],
        seed: Int,
        step: Int
    ) throws {
        let notClosed = h.fake.connections.filter { !$0.isClosed }
        #expect(notClosed.count <= 1, "seed \(seed) step \(step): \(notClosed.count) transports open")
        let state = h.state
        switch state {
        case .connected:
            #expect(h.fake.last?.isOpen == true, "seed \(seed) step \(step): connected without an open transport")
        case .disconnected, .stopped, .closed:
            #expect(notClosed.isEmpty, "seed \(seed) step \(step): \(state) with a live transport")
        case .connecting(let attempt):
            #expect(attempt >= 0 && attempt <= 7, "seed \(seed) step \(step): attempt \(attempt)")
        }
        if state != .connected {
            for subscription in tracked {
                if case .subscribed = subscription.state.value {
                    recordFailure("seed \(seed) step \(step): subscribed while \(state)")
                }
            }
        }
    }
}
