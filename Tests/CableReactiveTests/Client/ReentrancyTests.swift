import CableReactive
import CableTesting
import Dispatch
import Foundation
import Signals
import Testing

/// The client's contract with the code it calls (its transport and connections, its scheduler, logger, hooks and
/// the observers of its streams):
///
/// 1. no lock of the client is held while it calls any of them;
/// 2. it never calls into a connection from inside that connection's own event delivery on the delivering thread
///    (a transport may hold its own non-recursive lock while it delivers, and take it in `send` and `close`);
/// 3. operations apply in call order, on the wire and in the state publications;
/// 4. a scheduler that runs zero-delay work inline works;
/// 5. an observer may call `perform`, `subscribe`, `unsubscribe`, `disconnect`, `connect` and `close`.
///
/// Every scenario runs on threads of its own under a deadline (``bounded(seconds:_:)``): a client that deadlocks
/// fails its test with the step it was stuck in, instead of hanging the test process. Serialized: the floods
/// would otherwise compete for the CPU with each other, and a slow test is not a broken client.
@Suite("ActionCableClient: re-entrancy (ReentrancyTests)", .serialized)
struct ReentrancyTests {
    /// No subscribe re-sends (they would make the wire depend on timing), a stale timeout no scenario reaches,
    /// and no linger: the scenarios check that an `unsubscribe` and the next `subscribe` go out in call order
    /// (the linger, which sends neither, has its own tests in `LingerTests`).
    static let options = {
        var options = CableOptions(staleTimeout: 60, subscribeRetryDelays: [])
        options.unsubscribeDelay = 0
        return options
    }()

    static func client(
        _ s: Scenario, _ transport: any WebSocketTransport, _ scheduler: any CableScheduler,
        logger: CableLogger? = nil,
        onRequest: (@Sendable (inout CableRequest) async throws -> Void)? = nil,
        onUnauthorized: (@Sendable () async throws -> Bool)? = nil
    ) throws -> ActionCableClient {
        s.keep(
            try ActionCableClient(
                url: ClientHarness.url, options: options, transport: transport, scheduler: scheduler,
                random: SeededRandom(seed: 7), logger: logger, onRequest: onRequest, onUnauthorized: onUnauthorized))
    }

    /// `count` data messages for `identifier`, `{"n":0}` to `{"n":count - 1}`.
    static func messages(_ identifier: String, count: Int) -> [String] {
        (0..<count).map { ClientHarness.message(identifier, #"{"n":\#($0)}"#) }
    }

    // MARK: the tools themselves

    @Test("LockingTransport names a send made from inside its own delivery, and lets another thread's send wait")
    func lockingTransportReportsReentry() async throws {
        let outcome = try await bounded { s in
            let transport = s.keep(
                LockingTransport(server: .init(welcomes: false, confirms: false), changes: s.changes))
            let own = Guarded<(any WebSocketConnection)?>(nil)
            let connection = transport.connect(request: CableRequest(url: ClientHarness.url), protocols: []) { event in
                if case .text("echo") = event { _ = own.current?.send(text: "from inside") }
            }
            own.withLock { $0 = connection }
            let records = try required(transport.last, "a connection")
            records.open()
            records.receive("echo")
            try s.waitUntil("both events are delivered") { records.isIdle }
            let outside = connection.send(text: "from outside")
            connection.close(code: .normalClosure, reason: "")
            try s.waitUntil(".closed is delivered") { records.closedDelivered }
            own.withLock { $0 = nil }
            return (reentries: records.reentries, sent: records.sent, outside: outside)
        }
        #expect(outcome.reentries.count == 1)
        #expect(outcome.reentries.first?.contains("send(from inside) from inside the delivery of .text(echo)") == true)
        #expect(outcome.sent == ["from inside", "from outside"])
        #expect(outcome.outside)
    }

    @Test("InlineScheduler runs perform and zero-delay work before returning, and never runs positive delays")
    func inlineSchedulerRunsZeroDelayWorkInline() {
        let scheduler = InlineScheduler()
        let ran = Guarded<[String]>([])
        scheduler.perform { ran.withLock { $0.append("perform") } }
        _ = scheduler.schedule(after: 0) { ran.withLock { $0.append("zero") } }
        _ = scheduler.schedule(after: -1) { ran.withLock { $0.append("negative") } }
        let later = scheduler.schedule(after: 5) { ran.withLock { $0.append("later") } }
        _ = scheduler.schedule(after: 7) { ran.withLock { $0.append("much later") } }
        #expect(ran.current == ["perform", "zero", "negative"])
        #expect(scheduler.pendingDelays == [5, 7])
        later.cancel()
        #expect(scheduler.pendingDelays == [7])
        #expect(scheduler.ranInline == 3)
    }

    // MARK: contract 1: nothing runs under the client's lock

    @Test(
        "(1) nothing the client calls runs under its lock: transport, connection, scheduler, logger, hooks, observers"
    )
    func nothingRunsUnderTheClientsLock() async throws {
        let probed = try await bounded(seconds: 60) { s in
            let probe = LockProbe(patience: 3)
            let transport = s.keep(LockingTransport(changes: s.changes, probe: { probe.check($0) }))
            let scheduler = InlineScheduler(probe: { probe.check($0) })
            let logger = CableLogger(minimumLevel: .debug) { _, _ in probe.check("logger") }
            let client = try Self.client(
                s, transport, scheduler, logger: logger,
                onRequest: { _ in probe.check("onRequest") },
                onUnauthorized: {
                    probe.check("onUnauthorized")
                    return false
                })
            let room = s.keep(try client.subscribe(["channel": "Room"]))
            let states = s.keep(Recorder(client.state, s.changes))
            let roomStates = s.keep(Recorder(room.state, s.changes))
            s.keep(client.state.observe { _ in probe.check("state observer") })
            s.keep(room.state.observe { _ in probe.check("subscription state observer") })
            let message = Guarded(false)
            s.keep(
                room.messages.observe { _ in
                    probe.check("message observer")
                    message.withLock { $0 = true }
                    s.changes.notify()
                })
            // Aimed after the observers have had their current values (on this thread, from `observe`): only what
            // the client calls is probed.
            probe.aim(at: room)
            s.step("connect")
            client.connect()
            try s.waitUntil("the subscription is confirmed") { roomStates.last?.isSubscribed == true }
            let connection = try required(transport.last, "a connection")
            // Each step waits for the delivery before it to end: a perform racing a delivery is (a)'s deadlock, and
            // would keep this test from reporting on each kind of call.
            try s.waitUntil("the confirmation is delivered") { connection.isIdle }
            connection.receive(ClientHarness.message(room.identifier, #"{"n":1}"#))
            try s.waitUntil("the message reaches its observer") { message.current && connection.isIdle }
            s.step("perform")
            room.perform("speak", ["n": 1])
            connection.receive(#"{"type":"disconnect","reason":"unauthorized","reconnect":false}"#)
            try s.waitUntil("the client stops") { states.last?.stopReason != nil }
            try s.waitUntil("the connection has delivered .closed") { connection.closedDelivered }
            s.step("close")
            client.close()
            probe.aim(at: nil)
            return probe.outcome
        }
        let expected = [
            "connection.close", "connection.send", "logger", "message observer", "onRequest", "onUnauthorized",
            "scheduler.perform", "scheduler.schedule", "state observer", "subscription state observer",
            "transport.connect",
        ]
        #expect(probed.keys.sorted() == expected, "every kind of injected code was probed")
        let held = probed.filter { !$0.value }.keys.sorted()
        #expect(held == [], "a read of the client (subscribesSent) stayed blocked while the client called these")
    }

    // MARK: contract 2: no call into a connection from inside its own delivery

    @Test("(2) the subscribes a welcome causes, and the close a server disconnect causes, wait for the delivery to end")
    func callsCausedByADeliveryWaitForItToEnd() async throws {
        let outcome = try await bounded { s in
            let transport = s.keep(LockingTransport(changes: s.changes))
            let client = try Self.client(s, transport, DispatchScheduler())
            let room = s.keep(try client.subscribe(["channel": "Room"]))
            let lobby = s.keep(try client.subscribe(["channel": "Lobby"]))
            let states = s.keep(Recorder(client.state, s.changes))
            let roomStates = s.keep(Recorder(room.state, s.changes))
            let lobbyStates = s.keep(Recorder(lobby.state, s.changes))
            s.step("connect")
            client.connect()
            try s.waitUntil("both subscriptions are confirmed") {
                roomStates.last?.isSubscribed == true && lobbyStates.last?.isSubscribed == true
            }
            let connection = try required(transport.last, "a connection")
            connection.receive(#"{"type":"disconnect","reason":"server_restart","reconnect":false}"#)
            try s.waitUntil("the client stops and its connection has delivered .closed") {
                states.last?.stopReason != nil && connection.closedDelivered
            }
            client.close()
            return (
                reentries: transport.reentries, commands: connection.commands, closeCode: connection.closeCode,
                connections: transport.connections.count, room: room.identifier, lobby: lobby.identifier
            )
        }
        #expect(outcome.reentries == [])
        #expect(outcome.commands == [.subscribe(outcome.room), .subscribe(outcome.lobby)])
        #expect(outcome.closeCode == .normalClosure)
        #expect(outcome.connections == 1)
    }

    // MARK: (a) perform from several threads during a flood

    @Test(
        "(a) perform from three threads while the connection delivers a flood of messages",
        arguments: SchedulerKind.allCases)
    func performsDuringAFlood(_ kind: SchedulerKind) async throws {
        let threads = 3
        let performs = 500
        let flood = 20_000
        let outcome = try await bounded { s in
            let transport = s.keep(LockingTransport(changes: s.changes))
            let client = try Self.client(s, transport, kind.make())
            let room = s.keep(try client.subscribe(["channel": "Flood"]))
            let roomStates = s.keep(Recorder(room.state, s.changes))
            let highest = Guarded(-1)
            s.keep(
                room.messages.observe { message in
                    guard let n = message["n"]?.intValue else { return }
                    highest.withLock { $0 = max($0, n) }
                    if n == flood - 1 { s.changes.notify() }
                })
            s.step("connect")
            client.connect()
            try s.waitUntil("the subscription is confirmed") { roomStates.last?.isSubscribed == true }
            let connection = try required(transport.last, "a connection")
            connection.receive(contentsOf: Self.messages(room.identifier, count: flood))
            let results = Guarded([[Bool]](repeating: [], count: threads))
            let group = s.spawn(threads) { thread in
                for index in 0..<performs {
                    let data: JSONValue = ["t": .int(thread), "i": .int(index)]
                    let sent = room.perform("say", data)
                    results.withLock { $0[thread].append(sent) }
                }
            }
            try s.join(group, "\(threads) threads of \(performs) performs each, during the flood") {
                "performs returned per thread: \(results.current.map(\.count)), \(connection.delivered) events delivered"
            }
            try s.waitUntil("the flood's last message reaches the observer") { highest.current == flood - 1 }
            s.step("close")
            client.close()
            try s.waitUntil("the connection has delivered .closed") { connection.closedDelivered }
            return (
                reentries: transport.reentries, commands: connection.commands, results: results.current,
                room: room.identifier
            )
        }
        #expect(outcome.reentries == [])
        for (thread, results) in outcome.results.enumerated() {
            #expect(results.count == performs && results.allSatisfy { $0 }, "thread \(thread): every perform is sent")
        }
        #expect(outcome.commands.first == .subscribe(outcome.room))
        let performed = outcome.commands.dropFirst()
        #expect(performed.count == threads * performs, "the wire holds the subscribe and the performs, no more")
        for thread in 0..<threads {
            let order = performed.compactMap { command -> Int? in
                guard command.data?["t"] as? Int == thread else { return nil }
                return command.data?["i"] as? Int
            }
            #expect(order == Array(0..<performs), "thread \(thread)'s performs are on the wire in its order")
        }
    }

    // MARK: (b) the same with churn, reconnects and close

    @Test(
        "(b) performs, subscribe and unsubscribe churn, disconnect and connect, then close, during floods",
        arguments: SchedulerKind.allCases)
    func churnDuringFloods(_ kind: SchedulerKind) async throws {
        let cycles = 10
        let outcome = try await bounded { s in
            let sharedID = Guarded<String?>(nil)
            var server = LockingTransport.Server()
            server.onConnect = { connection in
                // Every connection floods the shared subscription, from its welcome on.
                if let id = sharedID.current { connection.receive(contentsOf: Self.messages(id, count: 300)) }
            }
            let transport = s.keep(LockingTransport(server: server, changes: s.changes))
            let client = try Self.client(s, transport, kind.make())
            let shared = s.keep(try client.subscribe(["channel": "Shared"]))
            sharedID.withLock { $0 = shared.identifier }
            let states = s.keep(Recorder(client.state, s.changes))
            let sharedStates = s.keep(Recorder(shared.state, s.changes))
            s.step("connect")
            client.connect()
            try s.waitUntil("the shared subscription is confirmed") { sharedStates.last?.isSubscribed == true }
            let results = Guarded([Bool]())
            let stop = Guarded(false)
            let firstSent = Guarded(false)
            let problems = Guarded<[String]>([])
            // The others run until the reconnecting thread has closed the client, at least 50 rounds and at most 3,000.
            let running: @Sendable (Int) -> Bool = { round in round < 50 || (!stop.current && round < 3_000) }
            let group = s.spawn(4) { thread in
                switch thread {
                case 0:
                    var index = 0
                    while running(index) {
                        let sent = shared.perform("say", ["i": .int(index)])
                        results.withLock { $0.append(sent) }
                        if sent, !firstSent.current {
                            firstSent.withLock { $0 = true }
                            s.changes.notify()
                        }
                        index += 1
                    }
                case 1:
                    var round = 0
                    while running(round) {
                        let params: JSONValue = ["channel": "Churn", "n": .int(round % 4)]
                        let handle = try? client.subscribe(params)
                        _ = handle?.perform("x")
                        handle?.unsubscribe()
                        round += 1
                    }
                case 2:
                    var round = 0
                    while running(round) {
                        // Two handles on one server subscription: one subscribe, one unsubscribe.
                        let params: JSONValue = ["channel": "Churn", "n": .int(4 + round % 4)]
                        let first = try? client.subscribe(params)
                        let second = try? client.subscribe(params)
                        first?.unsubscribe()
                        _ = second?.perform("y")
                        second?.unsubscribe()
                        round += 1
                    }
                default:
                    defer { stop.withLock { $0 = true } }
                    // A perform goes out before the first disconnect; each later session lives until the shared
                    // subscription is confirmed on it (behind that connection's flood).
                    let first = s.changes.wait(until: s.deadline) { firstSent.current }
                    guard first else {
                        problems.withLock { $0.append("no perform went out on the first connection") }
                        return
                    }
                    for cycle in 1...cycles {
                        client.disconnect()
                        client.connect()
                        let confirmed = s.changes.wait(until: s.deadline) {
                            sharedStates.all.filter(\.isSubscribed).count > cycle
                        }
                        guard confirmed else {
                            problems.withLock { $0.append("the subscription was not confirmed on connection \(cycle)") }
                            return
                        }
                    }
                    client.close()
                }
            }
            try s.join(group, "the performing, churning and reconnecting threads") {
                "\(transport.connections.count) connections, \(results.current.count) performs, "
                    + "stopped: \(stop.current), problems: \(problems.current)"
            }
            try s.waitUntil("the client is closed and its subscription unsubscribed") {
                states.last == .closed && sharedStates.last == .unsubscribed
            }
            try s.waitUntil("every connection has delivered .closed") {
                transport.connections.allSatisfy(\.closedDelivered)
            }
            return (
                reentries: transport.reentries, wires: transport.connections.map(\.commands),
                closeCodes: transport.connections.map(\.closeCode), results: results.current,
                shared: shared.identifier, state: client.state.value, problems: problems.current
            )
        }
        #expect(outcome.problems == [])
        #expect(outcome.reentries == [])
        #expect(outcome.state == .closed)
        #expect(outcome.wires.count == cycles + 1, "one connection per connect")
        #expect(outcome.closeCodes.allSatisfy { $0 == .normalClosure }, "the client closed every connection")
        for (index, wire) in outcome.wires.enumerated() {
            #expect(Self.problems(in: wire, connection: index) == [])
        }
        // The performs that went out, across the connections in order: those that returned true, in call order.
        let sentIndexes = outcome.wires.joined().compactMap { command -> Int? in
            guard command.identifier == outcome.shared, let data = command.data else { return nil }
            return data["i"] as? Int
        }
        let trueIndexes = outcome.results.indices.filter { outcome.results[$0] }
        #expect(sentIndexes == trueIndexes, "perform returned true exactly for what went out, in its call order")
    }

    /// What is wrong with one connection's wire: a command of a subscription that did not go out on it first (an
    /// unsubscribe or a perform before its subscribe, a perform after its unsubscribe), or an unknown command.
    static func problems(in wire: [Command], connection: Int) -> [String] {
        var live: Set<String> = []
        var seen: Set<String> = []
        var problems: [String] = []
        for (position, command) in wire.enumerated() {
            switch command {
            case .subscribe(let id):
                live.insert(id)
                seen.insert(id)
            case .unsubscribe(let id):
                // A second unsubscribe can follow: the answer to an orphan confirmation.
                if !seen.contains(id) { problems.append("connection \(connection) #\(position): \(command)") }
                live.remove(id)
            case .message(let id, _):
                if !live.contains(id) { problems.append("connection \(connection) #\(position): \(command)") }
            case .other:
                problems.append("connection \(connection) #\(position): \(command)")
            }
        }
        return problems
    }

    // MARK: (d) observers that call the client

    @Test(
        "(d) state observers call subscribe, unsubscribe, perform, disconnect, connect and close from their callbacks",
        arguments: Setup.allCases)
    func stateObserversCallTheClient(_ setup: Setup) async throws {
        let outcome = try await bounded { s in
            let world = try setup.world(s)
            let client = world.client
            let server = world.server
            let room = s.keep(try client.subscribe(["channel": "Room"]))
            let other = s.keep(try client.subscribe(["channel": "Other"]))
            let lobby = Guarded<ChannelSubscription?>(nil)
            let lobbyStates = Guarded<Recorder<SubscriptionState>?>(nil)
            let calls = Guarded<[String]>([])
            let states = s.keep(Recorder(client.state, s.changes))
            let roomStates = s.keep(Recorder(room.state, s.changes))
            let otherStates = s.keep(Recorder(other.state, s.changes))
            let connected = Guarded(0)
            let reconnected = Guarded(false)
            let report = { "states \(states.all), calls \(calls.current), wires \(server.wires)" }
            s.keep(
                client.state.observe { [weak client] state in
                    guard let client else { return }
                    switch state {
                    case .connected:
                        let count = connected.withLock { count -> Int in
                            count += 1
                            return count
                        }
                        if count == 1 {
                            calls.withLock { $0.append("subscribe Lobby, unsubscribe Other") }
                            let handle = try? client.subscribe(["channel": "Lobby"])
                            lobby.withLock { $0 = handle }
                            lobbyStates.withLock { $0 = handle.map { Recorder($0.state, s.changes) } }
                            other.unsubscribe()
                        } else if count == 2 {
                            calls.withLock { $0.append("close") }
                            client.close()
                        }
                    case .disconnected where connected.current == 1 && !reconnected.current:
                        reconnected.withLock { $0 = true }
                        calls.withLock { $0.append("connect") }
                        client.connect()
                    default:
                        break
                    }
                    s.changes.notify()
                })
            let performed = Guarded(false)
            s.keep(
                room.state.observe { [weak client] state in
                    guard state.isSubscribed, !performed.current else { return }
                    performed.withLock { $0 = true }
                    let sent = room.perform("hello", ["n": 1])
                    calls.withLock { $0.append("perform hello: \(sent)") }
                    calls.withLock { $0.append("disconnect") }
                    client?.disconnect()
                    s.changes.notify()
                })
            s.step("connect")
            client.connect()
            try s.waitUntil("the first connection is asked for", detail: report) { server.count >= 1 }
            s.step("welcome on connection 0")
            server.welcome(0)
            try s.waitUntil("the observer's subscribe and unsubscribe are on the wire", detail: report) {
                server.settle()
                return server.commands(on: 0).count >= 4
            }
            s.step("confirm Room on connection 0")
            server.confirm(room.identifier, on: 0)
            try s.waitUntil("the observers disconnect and connect again", detail: report) {
                server.settle()
                return server.count >= 2
            }
            s.step("welcome on connection 1")
            server.welcome(1)
            try s.waitUntil(
                "the observer closes the client, every handle ends and the close is on the wire", detail: report
            ) {
                server.settle()
                // A call the client makes into a foreign connection from inside that connection's delivery is
                // deferred until the delivery returns (WebSocketTransport's contract): the close, its last
                // call, reaches the wire after the states are published. Connection 0's perform and close too:
                // its delivery ran the client's effects, and may have gone on running the ones that followed.
                return states.last == .closed && roomStates.last == .unsubscribed
                    && lobbyStates.current?.last == .unsubscribed && server.closeCode(1) != nil
                    && server.closeCode(0) != nil
            }
            return (
                calls: calls.current, states: states.all, wire0: server.commands(on: 0), wire1: server.commands(on: 1),
                closed: [server.closeCode(0), server.closeCode(1)], reentries: server.reentries,
                other: otherStates.last, room: room.identifier, otherID: other.identifier,
                lobby: lobby.current?.identifier
            )
        }
        #expect(
            outcome.calls == [
                "subscribe Lobby, unsubscribe Other", "perform hello: true", "disconnect", "connect", "close",
            ])
        #expect(
            outcome.states == [
                .disconnected, .connecting(attempt: 0), .connected, .disconnected, .connecting(attempt: 0), .connected,
                .closed,
            ], "every observer sees the states in the order they were decided")
        let lobby = try #require(outcome.lobby)
        #expect(
            outcome.wire0 == [
                .subscribe(outcome.room), .subscribe(outcome.otherID), .subscribe(lobby), .unsubscribe(outcome.otherID),
                .message(outcome.room, data: #"{"action":"hello","n":1}"#),
            ])
        #expect(outcome.wire1 == [.subscribe(outcome.room), .subscribe(lobby)])
        #expect(outcome.closed == [.normalClosure, .normalClosure])
        #expect(outcome.other == .unsubscribed)
        #expect(outcome.reentries == [])
    }

    @Test(
        "(d) message observers call subscribe, unsubscribe, perform, disconnect and close from their callbacks",
        arguments: Setup.allCases)
    func messageObserversCallTheClient(_ setup: Setup) async throws {
        let outcome = try await bounded { s in
            let world = try setup.world(s)
            let client = world.client
            let server = world.server
            let room = s.keep(try client.subscribe(["channel": "Room"]))
            let other = s.keep(try client.subscribe(["channel": "Other"]))
            let lobby = Guarded<ChannelSubscription?>(nil)
            let lobbyStates = Guarded<Recorder<SubscriptionState>?>(nil)
            let calls = Guarded<[String]>([])
            let states = s.keep(Recorder(client.state, s.changes))
            let roomStates = s.keep(Recorder(room.state, s.changes))
            s.keep(
                room.messages.observe { [weak client] message in
                    guard let client else { return }
                    switch message["n"]?.intValue {
                    case 1:
                        calls.withLock { $0.append("subscribe Lobby, unsubscribe Other") }
                        let handle = try? client.subscribe(["channel": "Lobby"])
                        lobby.withLock { $0 = handle }
                        lobbyStates.withLock { $0 = handle.map { Recorder($0.state, s.changes) } }
                        other.unsubscribe()
                        let sent = room.perform("ack", ["n": 1])
                        calls.withLock { $0.append("perform ack 1: \(sent)") }
                    case 2:
                        calls.withLock { $0.append("disconnect") }
                        client.disconnect()
                    case 3:
                        let sent = room.perform("ack", ["n": 3])
                        calls.withLock { $0.append("perform ack 3: \(sent)") }
                        calls.withLock { $0.append("close") }
                        client.close()
                    default:
                        break
                    }
                    s.changes.notify()
                })
            func confirmed() -> Int { roomStates.all.filter(\.isSubscribed).count }
            let report = { "states \(states.all), calls \(calls.current), wires \(server.wires)" }
            s.step("connect")
            client.connect()
            try s.waitUntil("the first connection is asked for", detail: report) { server.count >= 1 }
            server.welcome(0)
            try s.waitUntil("both subscribes are on connection 0", detail: report) {
                server.settle()
                return server.commands(on: 0).count >= 2
            }
            server.confirm(room.identifier, on: 0)
            try s.waitUntil("Room is confirmed on connection 0", detail: report) {
                server.settle()
                return confirmed() == 1
            }
            s.step("message 1")
            server.receive(ClientHarness.message(room.identifier, #"{"n":1}"#), on: 0)
            try s.waitUntil("the observer's subscribe, unsubscribe and perform are on the wire", detail: report) {
                server.settle()
                return server.commands(on: 0).count >= 5
            }
            s.step("message 2")
            server.receive(ClientHarness.message(room.identifier, #"{"n":2}"#), on: 0)
            try s.waitUntil("the observer disconnects", detail: report) {
                server.settle()
                return states.last == .disconnected
            }
            s.step("connect again")
            client.connect()
            try s.waitUntil("the second connection is asked for", detail: report) { server.count >= 2 }
            server.welcome(1)
            try s.waitUntil("the subscribes are on connection 1", detail: report) {
                server.settle()
                return server.commands(on: 1).count >= 2
            }
            server.confirm(room.identifier, on: 1)
            try s.waitUntil("Room is confirmed on connection 1", detail: report) {
                server.settle()
                return confirmed() == 2
            }
            s.step("message 3")
            server.receive(ClientHarness.message(room.identifier, #"{"n":3}"#), on: 1)
            try s.waitUntil(
                "the observer closes the client, every handle ends and the close is on the wire", detail: report
            ) {
                server.settle()
                // A call the client makes into a foreign connection from inside that connection's delivery is
                // deferred until the delivery returns (WebSocketTransport's contract): the close, its last
                // call, reaches the wire after the states are published. Connection 0's perform and close too:
                // its delivery ran the client's effects, and may have gone on running the ones that followed.
                return states.last == .closed && roomStates.last == .unsubscribed
                    && lobbyStates.current?.last == .unsubscribed && server.closeCode(1) != nil
                    && server.closeCode(0) != nil
            }
            return (
                calls: calls.current, states: states.all, wire0: server.commands(on: 0), wire1: server.commands(on: 1),
                closed: [server.closeCode(0), server.closeCode(1)], reentries: server.reentries,
                room: room.identifier, other: other.identifier, lobby: lobby.current?.identifier
            )
        }
        #expect(
            outcome.calls == [
                "subscribe Lobby, unsubscribe Other", "perform ack 1: true", "disconnect", "perform ack 3: true",
                "close",
            ])
        #expect(
            outcome.states == [
                .disconnected, .connecting(attempt: 0), .connected, .disconnected, .connecting(attempt: 0), .connected,
                .closed,
            ])
        let lobby = try #require(outcome.lobby)
        #expect(
            outcome.wire0 == [
                .subscribe(outcome.room), .subscribe(outcome.other), .subscribe(lobby), .unsubscribe(outcome.other),
                .message(outcome.room, data: #"{"action":"ack","n":1}"#),
            ])
        #expect(
            outcome.wire1 == [
                .subscribe(outcome.room), .subscribe(lobby), .message(outcome.room, data: #"{"action":"ack","n":3}"#),
            ])
        #expect(outcome.closed == [.normalClosure, .normalClosure])
        #expect(outcome.reentries == [])
    }

    // MARK: (e) call order

    @Test(
        "(e) one thread's subscribe A, perform on B, unsubscribe B, subscribe B again go out in that order, during a flood",
        arguments: [Setup.fakeManual, .lockingDispatch, .lockingInline])
    func oneThreadsCommandsGoOutInOrder(_ setup: Setup) async throws {
        let rounds = 50
        let outcome = try await bounded { s in
            let world = try setup.world(s)
            let client = world.client
            let server = world.server
            let flood = s.keep(try client.subscribe(["channel": "Flood"]))
            let bs = try (0..<rounds).map { s.keep(try client.subscribe(["channel": "B", "n": .int($0)])) }
            for handle in [flood] + bs { s.keep(handle.state.observe { _ in s.changes.notify() }) }
            s.step("connect")
            client.connect()
            try s.waitUntil("the connection is asked for") { server.count >= 1 }
            server.welcome(0)
            try s.waitUntil("every subscribe is on the wire") {
                server.settle()
                return server.commands(on: 0).count == rounds + 1
            }
            for handle in [flood] + bs { server.confirm(handle.identifier, on: 0) }
            try s.waitUntil("every subscription is confirmed") {
                server.settle()
                return ([flood] + bs).allSatisfy { $0.state.value.isSubscribed }
            }
            let before = server.commands(on: 0).count
            server.flood(Self.messages(flood.identifier, count: 10_000), on: 0)
            s.step("the rounds")
            var sent: [Bool] = []
            for (round, b) in bs.enumerated() {
                s.keep(try client.subscribe(["channel": "A", "n": .int(round)]))
                sent.append(b.perform("x", ["i": .int(round)]))
                b.unsubscribe()
                s.keep(try client.subscribe(["channel": "B", "n": .int(round)]))
            }
            try s.waitUntil(
                "every round's commands are on the wire",
                detail: { "\(server.commands(on: 0).dropFirst(before).map(\.description)), sent \(sent)" }
            ) {
                server.settle()
                return server.commands(on: 0).count >= before + 4 * rounds
            }
            try s.waitUntil("the flood is delivered") { server.idle }
            client.close()
            return (
                wire: Array(server.commands(on: 0).dropFirst(before)), sent: sent, bs: bs.map(\.identifier),
                reentries: server.reentries
            )
        }
        #expect(outcome.sent == Array(repeating: true, count: rounds))
        let a = { (round: Int) in #"{"channel":"A","n":\#(round)}"# }
        let expected = outcome.bs.enumerated().flatMap { round, b -> [Command] in
            [.subscribe(a(round)), .message(b, data: #"{"action":"x","i":\#(round)}"#), .unsubscribe(b), .subscribe(b)]
        }
        #expect(outcome.wire == expected)
        #expect(outcome.reentries == [])
    }

    @Test(
        "(e) state publications are observed in the order they were decided, with the delivery thread deciding too",
        arguments: SchedulerKind.allCases)
    func publicationsFollowDecisionOrder(_ kind: SchedulerKind) async throws {
        let rounds = 100
        let outcome = try await bounded { s in
            let transport = s.keep(LockingTransport(changes: s.changes))
            let client = try Self.client(s, transport, kind.make())
            let states = s.keep(Recorder(client.state, s.changes))
            let sub = s.keep(try client.subscribe(["channel": "Room"]))
            for round in 0..<rounds {
                s.step("round \(round): connect")
                let connectedBefore = states.all.filter { $0 == .connected }.count
                client.connect()
                if round.isMultiple(of: 2) {
                    // Let the welcome win this time: the delivery thread decides `connected`.
                    try s.waitUntil("round \(round) connects") {
                        states.all.filter { $0 == .connected }.count > connectedBefore
                    }
                }
                s.step("round \(round): disconnect")
                client.disconnect()
            }
            client.close()
            try s.waitUntil("every connection has delivered .closed") {
                transport.connections.allSatisfy(\.closedDelivered)
            }
            try s.waitUntil("the last state observed is the last decided (closed)") { states.last == .closed }
            return (states: states.all, value: client.state.value, reentries: transport.reentries, sub: sub.identifier)
        }
        #expect(outcome.value == .closed)
        #expect(outcome.states.last == .closed)
        #expect(outcome.states.filter { $0 == .connected }.count >= rounds / 2)
        #expect(Self.badTransitions(outcome.states) == [], "a state published out of decision order")
        #expect(outcome.reentries == [])
    }

    /// The transitions between consecutive observed states that the client never decides: `connected` right after
    /// `disconnected` (it only comes from `connecting`), anything after `closed`.
    static func badTransitions(_ states: [CableState]) -> [String] {
        zip(states, states.dropFirst()).compactMap { from, to -> String? in
            switch (from, to) {
            case (.closed, _), (.disconnected, .connected):
                "\(from) → \(to)"
            default:
                nil
            }
        }
    }
}

/// `value`, or ``Stuck`` naming what is missing (a scenario runs off the test's task, where `#require` cannot
/// record an issue).
func required<T>(_ value: T?, _ what: String) throws -> T {
    guard let value else { throw Stuck("\(what) is missing") }
    return value
}

// MARK: - the setups of the scripted scenarios

/// A transport and a scheduler for a scripted scenario.
enum Setup: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// FakeTransport delivering on the scenario's thread; ManualScheduler's work runs when the scenario settles it.
    case fakeManual
    /// FakeTransport; callbacks run inline, on the thread that caused them (inside the delivery, for a welcome).
    case fakeInline
    /// LockingTransport's delivery threads; DispatchScheduler's callback queue.
    case lockingDispatch
    /// LockingTransport's delivery threads; callbacks inline, on the delivery thread for what a delivery caused.
    case lockingInline

    var testDescription: String {
        switch self {
        case .fakeManual: "FakeTransport, ManualScheduler"
        case .fakeInline: "FakeTransport, InlineScheduler"
        case .lockingDispatch: "LockingTransport, DispatchScheduler"
        case .lockingInline: "LockingTransport, InlineScheduler"
        }
    }

    func world(_ s: Scenario) throws -> World {
        switch self {
        case .fakeManual, .fakeInline:
            let transport = s.keep(NotifyingTransport(s.changes))
            let manual = self == .fakeManual ? ManualScheduler() : nil
            let scheduler: any CableScheduler = manual.map { NotifyingScheduler($0, s.changes) } ?? InlineScheduler()
            let client = try ReentrancyTests.client(s, transport, scheduler)
            return World(client: client, server: FakeServer(transport: transport, manual: manual, changes: s.changes))
        case .lockingDispatch, .lockingInline:
            let transport = s.keep(
                LockingTransport(server: .init(welcomes: false, confirms: false), changes: s.changes))
            let scheduler: any CableScheduler = self == .lockingDispatch ? DispatchScheduler() : InlineScheduler()
            let client = try ReentrancyTests.client(s, transport, scheduler)
            return World(client: client, server: LockingServer(transport: transport))
        }
    }
}

struct World: Sendable {
    let client: ActionCableClient
    let server: any ScriptedServer
}

/// The server's side of a scripted scenario: connections by index, in the order the client asked for them.
protocol ScriptedServer: Sendable {
    var count: Int { get }
    /// Opens connection `index` and sends the welcome.
    func welcome(_ index: Int)
    func confirm(_ identifier: String, on index: Int)
    func receive(_ text: String, on index: Int)
    /// Delivers `texts` on connection `index` from another thread than the scenario's, while it goes on.
    func flood(_ texts: [String], on index: Int)
    /// Whether every flood has been delivered.
    var idle: Bool { get }
    func commands(on index: Int) -> [Command]
    func closeCode(_ index: Int) -> WebSocketCloseCode?
    var reentries: [String] { get }
    /// Runs what the client queued on a manual scheduler, if it has one: timers due now and callbacks.
    func settle()
}

extension ScriptedServer {
    /// Every connection's commands, for failure messages.
    var wires: [[String]] { (0..<count).map { commands(on: $0).map(\.description) } }
}

final class FakeServer: ScriptedServer {
    let transport: NotifyingTransport
    let manual: ManualScheduler?
    let changes: Changes
    private let floods = Guarded(0)

    init(transport: NotifyingTransport, manual: ManualScheduler?, changes: Changes) {
        self.transport = transport
        self.manual = manual
        self.changes = changes
    }

    private func connection(_ index: Int) -> FakeTransport.Connection { transport.fake.connections[index] }

    var count: Int { transport.fake.connections.count }

    func welcome(_ index: Int) {
        connection(index).open()
        connection(index).receive(#"{"type":"welcome"}"#)
    }

    func confirm(_ identifier: String, on index: Int) { connection(index).receive(ClientHarness.confirm(identifier)) }
    func receive(_ text: String, on index: Int) { connection(index).receive(text) }

    func flood(_ texts: [String], on index: Int) {
        let connection = connection(index)
        let floods = floods
        let changes = changes
        floods.withLock { $0 += 1 }
        Thread {
            for text in texts { connection.receive(text) }
            floods.withLock { $0 -= 1 }
            changes.notify()
        }.start()
    }

    var idle: Bool { floods.current == 0 }
    func commands(on index: Int) -> [Command] { connection(index).sent.map(Command.init) }
    func closeCode(_ index: Int) -> WebSocketCloseCode? { connection(index).closeCode }
    var reentries: [String] { [] }
    func settle() { manual?.advance(by: 0) }
}

final class LockingServer: ScriptedServer {
    let transport: LockingTransport

    init(transport: LockingTransport) { self.transport = transport }

    private func connection(_ index: Int) -> LockingTransport.Connection { transport.connections[index] }

    var count: Int { transport.connections.count }

    func welcome(_ index: Int) {
        connection(index).open()
        connection(index).welcome()
    }

    func confirm(_ identifier: String, on index: Int) { connection(index).confirm(identifier) }
    func receive(_ text: String, on index: Int) { connection(index).receive(text) }
    func flood(_ texts: [String], on index: Int) { connection(index).receive(contentsOf: texts) }
    var idle: Bool { transport.connections.allSatisfy(\.isIdle) }
    func commands(on index: Int) -> [Command] { connection(index).commands }
    func closeCode(_ index: Int) -> WebSocketCloseCode? { connection(index).closeCode }
    var reentries: [String] { transport.reentries }
    func settle() {}
}

/// Checks, from inside code the client calls, that the client holds no lock meanwhile: another thread reads the
/// client (`subscribesSent`, which takes the lock that guards the subscriptions) and must be done within
/// `patience` seconds. Each kind of call is probed once, the first time it happens after ``aim(at:)``.
final class LockProbe: Sendable {
    private let target = Guarded<ChannelSubscription?>(nil)
    /// Each kind probed: whether the read finished in time.
    private let results = Guarded<[String: Bool]>([:])
    private let patience: Double

    init(patience: Double) { self.patience = patience }

    func aim(at subscription: ChannelSubscription?) { target.withLock { $0 = subscription } }

    var outcome: [String: Bool] { results.current }

    func check(_ kind: String) {
        guard let target = target.current else { return }
        let first = results.withLock { results -> Bool in
            guard results[kind] == nil else { return false }
            results[kind] = false
            return true
        }
        guard first else { return }
        let done = DispatchSemaphore(value: 0)
        Thread {
            _ = target.subscribesSent
            done.signal()
        }.start()
        // If the lock is held, the reader finishes once this call returns and the client lets go of it.
        let free = done.wait(wallTimeout: .now() + patience) == .success
        results.withLock { $0[kind] = free }
    }
}
