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
    /// One handle, with two consumers on its messages (an observer and a mapped observer) and one on its
    /// presence events.
    private final class Tracked: Sendable {
        let subscription: ChannelSubscription
        let channel: Int
        let received = Locked<[JSONValue]>([])
        let mapped = Locked<[JSONValue]>([])
        let events = Locked<[PresenceEvent]>([])
        let observations: [SignalObservation]
        let expected = Locked<[JSONValue]>([])
        let expectedEvents = Locked<[PresenceEvent]>([])

        init(_ subscription: ChannelSubscription, channel: Int) {
            self.subscription = subscription
            self.channel = channel
            let received = received
            let mapped = mapped
            let events = events
            observations = [
                subscription.messages.observe { message in received.withLock { $0.append(message) } },
                subscription.messages.map { $0 }.observe { message in mapped.withLock { $0.append(message) } },
                subscription.presence.events.observe { event in events.withLock { $0.append(event) } },
            ]
        }
    }

    /// What the app asked of one channel's presence, and what its handles must show of the set.
    private struct PresenceModel {
        /// The handles' joins, oldest first (a handle's new join replaces its old one), until a leave or the
        /// handle's release: the channel's join is the newest.
        var joins: [(handle: ObjectIdentifier, member: PresenceMember)] = []
        var intent: PresenceMember? { joins.last?.member }
        /// The app joined once: the client keeps the set and asks for it on every confirmation.
        var tracks = false
        /// The set from the last `info` answer with the events since, known on connection `membersOn` only.
        var members: [String: PresenceMember]?
        var membersOn: Int?
    }

    /// What one connection's server saw from the client, read from its sent frames (and the frames the test
    /// gave it).
    private struct WireModel {
        /// How many of its sent frames were read.
        var checked = 0
        /// The join the server holds per identifier: from a joining `subscribe`, `join` (refused, as AnyCable
        /// does, when another id is held), `leave` and `unsubscribe`.
        var held: [String: PresenceMember] = [:]
        /// The identifiers the set was asked for.
        var requested: Set<String> = []
        /// The identifiers the test confirmed on it, and whether a welcome on it said it restored.
        var confirms: Set<String> = []
        var restored = false
    }

    /// Presence ids and infos the walk draws from: a few, so that joins and leaves collide.
    private static let ids = ["u1", "u2", "u3"]
    private static let infos: [(value: JSONValue?, text: String?)] = [
        (nil, nil), (nil, "null"), (["n": 1], #"{"n":1}"#), (["name": "Ada"], #"{"name":"Ada"}"#),
    ]

    /// How often each step kind comes (by its number in the walk's switch): the handshake and the presence
    /// steps more than faults, so that walks spend much of their time with confirmed subscriptions.
    private static let stepWeights = [
        4, 1, 1, 6, 6, 5, 5, 3, 3, 1, 1, 1, 2, 2, 1, 1, 3, 3, 1, 3, 3, 2, 1,
    ]

    private static func stepKind(using random: inout SeededRandom) -> Int {
        var roll = Int.random(in: 0..<stepWeights.reduce(0, +), using: &random)
        for (kind, weight) in stepWeights.enumerated() {
            if roll < weight { return kind }
            roll -= weight
        }
        return stepWeights.count - 1
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
        // The model's wire expects an `unsubscribe` when the last handle goes (the linger has `LingerTests`).
        options.unsubscribeDelay = 0
        if extended { options.wireProtocol = .anyCableExtended }
        let subprotocol = extended ? "actioncable-v1-ext-json" : "actioncable-v1-json"
        /// The server's last offset per channel: only messages that reach the client take one, so the
        /// client never sees a gap it would hold messages for. Whispers take none.
        var offsets: [Int: Int] = [:]
        let gate = MutableStateValue(true)
        let h = try ClientHarness(options: options, gate: gate.eraseToAnySignal(), seed: UInt64(seed))
        var random = SeededRandom(seed: UInt64(seed) &* 7919)
        var tracked: [Tracked] = []
        /// Handles unsubscribed, whose calls must do nothing.
        var ended: [Tracked] = []
        var nextChannel = 0
        var sequence = 0
        var presence: [Int: PresenceModel] = [:]
        var wire: [WireModel] = []
        /// Whispers the client said it sent (returned true).
        var whispers = 0

        /// The newest connection if it is open: a server can only send on an open connection.
        func live() -> FakeTransport.Connection? {
            guard let last = h.fake.last, last.isOpen else { return nil }
            return last
        }
        /// The index of the welcomed connection, if the client is connected.
        func session() -> Int? {
            h.state == .connected && h.fake.last?.isOpen == true ? h.fake.connections.count - 1 : nil
        }
        func isSubscribed(_ subscription: ChannelSubscription) -> Bool {
            if case .subscribed = h.state(of: subscription) { return true }
            return false
        }
        /// The model's word on what `perform`, `whisper` and presence commands need: the handle's subscription
        /// confirmed on the live connection.
        func confirmedLive(_ subscription: ChannelSubscription) -> Bool {
            h.state == .connected && isSubscribed(subscription)
        }
        func wireIndex(_ index: Int) {
            while wire.count <= index { wire.append(WireModel()) }
        }

        /// What the client sent, read frame by frame: presence and whisper commands only for a subscription
        /// confirmed on the live connection, the set asked for only when kept, replays asked from the last
        /// delivered offset (whispers do not move it); then, on the live connection, the server holds the app's
        /// join for every confirmed subscription, and every handle shows the model's set and events.
        func checkWireAndHandles(step: Int) {
            let context = "seed \(seed) step \(step)"
            let on = session()
            let connections = h.fake.connections
            var channelOf: [String: Int] = [:]
            for entry in tracked { channelOf[entry.subscription.identifier] = entry.channel }
            func confirmed(_ identifier: String) -> Bool {
                let handles = tracked.filter { $0.subscription.identifier == identifier }
                return on != nil && !handles.isEmpty && handles.allSatisfy { isSubscribed($0.subscription) }
            }
            if !connections.isEmpty { wireIndex(connections.count - 1) }
            var whispersSeen = 0
            for (index, connection) in connections.enumerated() {
                let sent = connection.sent
                for text in sent.dropFirst(wire[index].checked) {
                    guard let frame = try? JSONValue(parsing: text), let command = frame["command"]?.stringValue,
                        let identifier = frame["identifier"]?.stringValue
                    else { continue }
                    let member = frame["presence"].map {
                        PresenceMember(
                            id: $0["id"]?.stringValue ?? "?", info: $0["info"].flatMap { $0.isNull ? nil : $0 })
                    }
                    switch command {
                    case "subscribe": wire[index].held[identifier] = member
                    case "unsubscribe": wire[index].held[identifier] = nil
                    case "history":
                        let channel = channelOf[identifier] ?? -1
                        let streams = frame["history"]?["streams"]?.objectValue ?? [:]
                        let offset = streams["c\(channel)"]?["offset"]?.intValue
                        #expect(streams.count == 1, "\(context): replay asked for \(streams.keys.sorted())")
                        #expect(
                            offset == offsets[channel],
                            "\(context): replay asked from \(String(describing: offset)), delivered up to \(String(describing: offsets[channel]))"
                        )
                    case "join", "leave", "presence", "whisper":
                        if index != on || !confirmed(identifier) {
                            recordFailure(
                                "\(context): \(command) for \(identifier) sent on connection \(index) (live: \(String(describing: on))) while not confirmed there"
                            )
                        }
                        if command == "join", let member {
                            // AnyCable refuses another id while one is held.
                            if wire[index].held[identifier].map({ $0.id == member.id }) ?? true {
                                wire[index].held[identifier] = member
                            }
                        } else if command == "leave" {
                            wire[index].held[identifier] = nil
                        } else if command == "presence" {
                            wire[index].requested.insert(identifier)
                            if channelOf[identifier].flatMap({ presence[$0]?.tracks }) != true {
                                recordFailure("\(context): the set of \(identifier) asked for, yet nobody keeps it")
                            }
                        }
                    default: break
                    }
                }
                wire[index].checked = sent.count
                whispersSeen += sent.count(where: { $0.hasPrefix(#"{"command":"whisper""#) })
            }
            #expect(whispersSeen == whispers, "\(context): \(whispersSeen) whispers sent, \(whispers) said sent")

            for (channel, var model) in presence where model.membersOn != on {
                model.members = nil
                model.membersOn = nil
                presence[channel] = model
            }
            for entry in tracked {
                let identifier = entry.subscription.identifier
                let model = presence[entry.channel] ?? PresenceModel()
                if let on, confirmed(identifier) {
                    // A confirmation is the server's word: a confirm the test gave, or a restoring welcome.
                    if !wire[on].confirms.contains(identifier) && !wire[on].restored {
                        recordFailure("\(context): \(identifier) subscribed without a confirmation or a restore")
                    }
                    let held = wire[on].held[identifier]
                    if held != model.intent {
                        recordFailure(
                            "\(context): the server holds \(String(describing: held)) for \(identifier), the app joined \(String(describing: model.intent))"
                        )
                    }
                    if model.tracks, model.members == nil, !wire[on].requested.contains(identifier) {
                        recordFailure("\(context): the set of \(identifier) is kept and unknown, yet not asked for")
                    }
                }
                let members = entry.subscription.presence.members.value
                if members != model.members {
                    recordFailure(
                        "\(context): \(identifier) shows members \(String(describing: members)), expected \(String(describing: model.members))"
                    )
                }
                let events = entry.events.withLock { $0 }
                if events != entry.expectedEvents.withLock({ $0 }) {
                    recordFailure("\(context): presence events \(events) on \(identifier)")
                }
                let received = entry.received.withLock { $0 }
                if received != entry.expected.withLock({ $0 }) {
                    recordFailure("\(context): messages \(received.suffix(3)) on \(identifier)")
                }
            }
        }

        for step in 0..<200 {
            let context = "seed \(seed) step \(step)"
            switch Self.stepKind(using: &random) {
            case 0: h.client.connect()
            case 1: if Int.random(in: 0..<3, using: &random) == 0 { h.client.disconnect() }
            case 2: if !gate.value || Int.random(in: 0..<3, using: &random) == 0 { gate.value.toggle() }
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
                let welcome = welcomes[Int.random(in: 0..<welcomes.count, using: &random)]
                if let connection = live() {
                    wireIndex(h.fake.connections.count - 1)
                    if welcome.contains("restored") { wire[h.fake.connections.count - 1].restored = true }
                    connection.receive(welcome)
                }
            case 5, 6:
                if let entry = tracked.randomElement(using: &random), let connection = live() {
                    let confirm = Int.random(in: 0..<4, using: &random) != 0
                    if confirm {
                        wireIndex(h.fake.connections.count - 1)
                        wire[h.fake.connections.count - 1].confirms.insert(entry.subscription.identifier)
                    }
                    let frame = confirm ? ClientHarness.confirm : ClientHarness.reject
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
                    ended.append(entry)
                    h.scheduler.flush()
                    #expect(entry.subscription.state.value == .unsubscribed)
                    for other in tracked where other.channel == entry.channel && h.state != .closed {
                        #expect(
                            other.subscription.state.value != .unsubscribed,
                            "\(context): unsubscribing one handle ended another")
                    }
                    // The last handle ends the subscription, and its presence with it (a new channel is never
                    // subscribed to again: see case 13).
                    if !tracked.contains(where: { $0.channel == entry.channel }) {
                        presence[entry.channel] = nil
                    } else {
                        // Its join goes with it.
                        presence[entry.channel]?.joins.removeAll { $0.handle == ObjectIdentifier(entry) }
                    }
                }
            case 16:
                // Whisper: sent exactly when the subscription is confirmed on the live connection; never queued.
                if let entry = tracked.randomElement(using: &random) {
                    let expected = confirmedLive(entry.subscription)
                    let before = h.fake.last?.sent.count ?? 0
                    sequence += 1
                    let unencodable = Int.random(in: 0..<8, using: &random) == 0
                    let data: JSONValue = unencodable ? ["bad": .double(.nan)] : ["typing": .int(sequence)]
                    let sent = entry.subscription.whisper(data)
                    if sent { whispers += 1 }
                    #expect(sent == (expected && !unencodable), "\(context): whisper returned \(sent)")
                    let frame =
                        #"{"command":"whisper","data":{"typing":\#(sequence)},"identifier":\#(ClientHarness.quoted(entry.subscription.identifier))}"#
                    let new = Array(h.fake.last?.sent.dropFirst(before) ?? [])
                    #expect(new == (sent ? [frame] : []), "\(context): whisper sent \(new)")
                }
            case 17:
                // Join, with one of a few ids (another id than the server holds leaves first).
                if let entry = tracked.randomElement(using: &random) {
                    let id = Self.ids[Int.random(in: 0..<Self.ids.count, using: &random)]
                    let info = Self.infos[Int.random(in: 0..<Self.infos.count, using: &random)].value
                    if Int.random(in: 0..<10, using: &random) == 0 {
                        let before = h.fake.last?.sent.count ?? 0
                        #expect(throws: CableError.self) {
                            try entry.subscription.presence.join(id: id, info: ["x": .double(.infinity)])
                        }
                        #expect(h.fake.last?.sent.count ?? 0 == before, "\(context): an unencodable join sent")
                    } else {
                        try entry.subscription.presence.join(id: id, info: info)
                        var model = presence[entry.channel] ?? PresenceModel()
                        model.joins.removeAll { $0.handle == ObjectIdentifier(entry) }
                        model.joins.append((ObjectIdentifier(entry), PresenceMember(id: id, info: info)))
                        presence[entry.channel] = model
                        presence[entry.channel, default: PresenceModel()].tracks = true
                    }
                }
            case 18:
                if let entry = tracked.randomElement(using: &random) {
                    entry.subscription.presence.leave()
                    presence[entry.channel]?.joins = []
                }
            case 19, 20:
                // A presence frame from the server: an event, an answer to a request, or one the client ignores.
                if let entry = tracked.randomElement(using: &random), let connection = live() {
                    let on = session()
                    var model = presence[entry.channel] ?? PresenceModel()
                    if model.membersOn != on { model.members = nil }
                    let id = Self.ids[Int.random(in: 0..<Self.ids.count, using: &random)]
                    let info = Self.infos[Int.random(in: 0..<Self.infos.count, using: &random)]
                    let infoMember = info.text.map { #","info":\#($0)"# } ?? ""
                    let message: String
                    var event: PresenceEvent?
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0..<4:
                        message = #"{"type":"join","id":"\#(id)"\#(infoMember)}"#
                        let member = PresenceMember(id: id, info: info.value)
                        event = .joined(member)
                        if on != nil, model.members != nil { model.members?[id] = member }
                    case 4..<6:
                        message = #"{"type":"leave","id":"\#(id)"}"#
                        event = .left(id: id)
                        if on != nil { model.members?[id] = nil }
                    case 6..<9:
                        var members: [String: PresenceMember] = [:]
                        var records: [String] = []
                        for id in Self.ids where Bool.random(using: &random) {
                            let info = Self.infos[Int.random(in: 0..<Self.infos.count, using: &random)]
                            members[id] = PresenceMember(id: id, info: info.value)
                            records.append(#"{"id":"\#(id)"\#(info.text.map { #","info":\#($0)"# } ?? "")}"#)
                        }
                        let recordsMember =
                            records.isEmpty && Bool.random(using: &random)
                            ? "" : #","records":[\#(records.joined(separator: ","))]"#
                        message = #"{"type":"info","total":\#(members.count)\#(recordsMember)}"#
                        if let on {
                            model.members = members
                            model.membersOn = on
                        }
                    default:
                        message = Bool.random(using: &random) ? #"{"type":"error","total":0}"# : #"{"type":"odd"}"#
                    }
                    connection.receive(
                        #"{"type":"presence","identifier":\#(ClientHarness.quoted(entry.subscription.identifier)),"message":\#(message)}"#
                    )
                    presence[entry.channel] = model
                    for other in tracked where on != nil && other.channel == entry.channel {
                        if let event { other.expectedEvents.withLock { $0.append(event) } }
                    }
                }
            case 21:
                // A whisper from another client: a message with no stream position, delivered in order with the
                // others; the same one twice is no repeat.
                if let entry = tracked.randomElement(using: &random), let connection = live() {
                    sequence += 1
                    let delivered = h.state == .connected && connection.isOpen
                    let frame = ClientHarness.message(entry.subscription.identifier, #"{"w":\#(sequence)}"#)
                    let times = Int.random(in: 0..<4, using: &random) == 0 ? 2 : 1
                    for _ in 0..<times { connection.receive(frame) }
                    for other in tracked where delivered && other.channel == entry.channel {
                        other.expected.withLock { $0 += Array(repeating: ["w": .int(sequence)], count: times) }
                    }
                }
            case 22:
                // An unsubscribed handle does nothing, even while another handle keeps its subscription.
                if let entry = ended.randomElement(using: &random) {
                    let before = h.fake.connections.map(\.sent.count)
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0:
                        #expect(!entry.subscription.whisper(["typing": true]), "\(context): whisper on an ended handle")
                    case 1: #expect(!entry.subscription.perform("go"), "\(context): perform on an ended handle")
                    case 2: try entry.subscription.presence.join(id: Self.ids[0])
                    default: entry.subscription.presence.leave()
                    }
                    #expect(h.fake.connections.map(\.sent.count) == before, "\(context): an ended handle sent")
                }
            default:
                if let entry = tracked.randomElement(using: &random) {
                    let state = h.state
                    let subscriptionState = h.state(of: entry.subscription)
                    let expected = confirmedLive(entry.subscription)
                    let sent = entry.subscription.perform("go", ["n": 1])
                    if sent != expected {
                        return recordFailure(
                            "\(context): perform returned \(sent) while \(state), \(subscriptionState)")
                    }
                }
            }
            try checkInvariants(h, tracked: tracked.map(\.subscription), seed: seed, step: step)
            checkWireAndHandles(step: step)
        }

        h.scheduler.flush()
        for entry in tracked {
            let expected = entry.expected.withLock { $0 }
            #expect(
                entry.received.withLock { $0 } == expected,
                "seed \(seed): deliveries for \(entry.subscription.identifier)")
            #expect(entry.mapped.withLock { $0 } == expected, "seed \(seed): mapped deliveries")
            #expect(entry.events.withLock { $0 } == entry.expectedEvents.withLock { $0 }, "seed \(seed): events")
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
