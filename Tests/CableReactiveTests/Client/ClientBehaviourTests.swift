import CableReactive
import CableTesting
import Dispatch
import Foundation
import Signals
import Testing

@Suite("ActionCableClient: construction and handshake")
struct ClientHandshakeTests {
    @Test(
        "construction rejects URLs that are not ws, wss, http or https with a host",
        arguments: ["http:///cable", "ws:///cable", "ftp://x/y", "cable", "file:///tmp/cable"])
    func rejectsBadURLs(text: String) throws {
        let url = try #require(URL(string: text))
        #expect(throws: CableError.invalidURL()) {
            _ = try ActionCableClient(url: url, transport: FakeTransport(), scheduler: ManualScheduler())
        }
    }

    @Test(
        "http and https URLs connect as ws and wss, with everything else kept",
        arguments: [
            ("http://example.com/cable", "ws://example.com/cable"),
            (
                "HTTPS://user@example.com:8443/cable?token=a%2Bb&x=1#frag",
                "wss://user@example.com:8443/cable?token=a%2Bb&x=1#frag"
            ),
            ("https://[::1]:3000/cable", "wss://[::1]:3000/cable"),
            ("ws://h/cable", "ws://h/cable"),
        ])
    func mapsHTTPSchemes(given: String, expected: String) throws {
        let fake = FakeTransport()
        let client = try ActionCableClient(
            url: #require(URL(string: given)), transport: fake, scheduler: ManualScheduler())
        client.connect()
        #expect(fake.last?.request.url.absoluteString == expected)
        client.close()
    }

    @Test("construction accepts WS and WSS in any case")
    func acceptsSchemes() throws {
        for text in ["WS://h/cable", "wss://h:8443/cable"] {
            _ = try ActionCableClient(url: #require(URL(string: text)), transport: FakeTransport())
        }
    }

    @Test("construction rejects invalid options with the option's name")
    func rejectsBadOptions() {
        let cases: [(String, (inout CableOptions) -> Void)] = [
            ("staleTimeout", { $0.staleTimeout = 0 }),
            ("minReconnectDelay", { $0.minReconnectDelay = -1 }),
            ("maxReconnectDelay", { $0.maxReconnectDelay = .infinity }),
            ("minReconnectDelay", { $0.minReconnectDelay = 40 }),
            ("maxReconnectAttempts", { $0.maxReconnectAttempts = -1 }),
            ("messageBufferSize", { $0.messageBufferSize = 0 }),
            ("subscribeRetryDelays", { $0.subscribeRetryDelays = [5, 0] }),
            ("subscribeRetryDelays", { $0.subscribeRetryDelays = [.nan] }),
        ]
        for (name, change) in cases {
            var options = CableOptions()
            change(&options)
            #expect(throws: CableError.invalidOption(name)) {
                _ = try ActionCableClient(url: ClientHarness.url, options: options, transport: FakeTransport())
            }
        }
    }

    @Test("it offers actioncable-v1-json then actioncable-unsupported, and stays connecting until the welcome")
    func offersProtocolsAndWaitsForWelcome() throws {
        let h = try ClientHarness()
        h.client.connect()
        let connection = try #require(h.fake.last)
        #expect(connection.protocols == ["actioncable-v1-json", "actioncable-unsupported"])
        #expect(h.state == .connecting(attempt: 0))
        connection.open()
        connection.receive(#"{"type":"ping","message":1}"#)
        #expect(h.state == .connecting(attempt: 0))
        connection.receive(#"{"type":"welcome"}"#)
        #expect(h.state == .connected)
    }

    @Test("a failed connection is retried after the backoff the scheduler was asked for")
    func retriesAfterBackoff() throws {
        let h = try ClientHarness()
        h.client.connect()
        h.fake.last?.fail()
        #expect(h.state == .connecting(attempt: 1))
        let delay = try #require(h.scheduler.pendingDelays.first { $0 < 15 })
        #expect((0.75...1.25).contains(delay))
        h.scheduler.advance(by: delay - 0.01)
        #expect(h.fake.connections.count == 1)
        h.scheduler.advance(by: 0.01)
        #expect(h.fake.connections.count == 2)
    }

    @Test("a handshake that chose actioncable-unsupported stops for good, before any subscribe goes out")
    func unsupportedProtocolStops() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(["channel": "RoomChannel"])
        h.client.connect()
        let connection = try #require(h.fake.last)
        #expect(connection.protocols == ["actioncable-v1-json", "actioncable-unsupported"])
        connection.open(subprotocol: "actioncable-unsupported")
        #expect(h.state == .stopped(reason: .unsupportedProtocol))
        #expect(connection.closeCode == .normalClosure)
        // Whatever that server sends next is not taken for our protocol.
        connection.receive(#"{"type":"welcome"}"#)
        #expect(h.state == .stopped(reason: .unsupportedProtocol))
        #expect(connection.sent.isEmpty)
        #expect(h.state(of: room) == .pending)
        h.scheduler.advance(by: 120)
        #expect(h.fake.connections.count == 1)
    }

    @Test("a handshake with no chosen subprotocol is accepted (Rails answers so when it knows none offered)")
    func noSubprotocolIsAccepted() throws {
        let h = try ClientHarness()
        h.client.connect()
        let connection = try #require(h.fake.last)
        connection.open(subprotocol: nil)
        connection.receive(#"{"type":"welcome"}"#)
        #expect(h.state == .connected)
    }

    @Test("close sends no unsubscribe before the close frame: the close ends every subscription on the server")
    func closeSendsNoUnsubscribes() throws {
        let h = try ClientHarness()
        let rooms = try (0..<3).map { try h.client.subscribe(["channel": "RoomChannel", "n": .int($0)]) }
        let connection = try #require(h.connected())
        for room in rooms { connection.receive(ClientHarness.confirm(room.identifier)) }
        let sentBefore = connection.sent.count
        h.client.close()
        #expect(connection.sent.count == sentBefore)
        #expect(connection.closeCode == .normalClosure)
        for room in rooms { #expect(h.state(of: room) == .unsubscribed) }
    }

    @Test("connect while waiting to retry opens a connection at once, without waiting for the backoff")
    func retryNow() throws {
        let h = try ClientHarness()
        h.client.connect()
        h.fake.last?.fail()
        #expect(h.state == .connecting(attempt: 1))
        #expect(h.fake.connections.count == 1)
        h.client.connect()
        #expect(h.fake.connections.count == 2)
        #expect(h.state == .connecting(attempt: 1))
        // The backoff that was cancelled (at most 1.25 s) opens nothing more before the attempt's own deadline.
        h.scheduler.advance(by: 5)
        #expect(h.fake.connections.count == 2)
        h.welcome()
        #expect(h.state == .connected)
    }

    @Test("a server disconnect with reconnect false stops with its reason; connect starts over")
    func stopsOnDisconnect() throws {
        let h = try ClientHarness()
        let connection = h.connected()
        connection?.receive(#"{"type":"disconnect","reason":"remote","reconnect":false}"#)
        #expect(h.state == .stopped(reason: .server("remote")))
        #expect(connection?.isClosed == true)
        h.client.connect()
        #expect(h.state == .connecting(attempt: 0))
        #expect(h.fake.connections.count == 2)
    }

    @Test("the gate keeps the client disconnected while false and connects at once when it turns true")
    func gate() throws {
        let gate = MutableStateValue(false)
        let h = try ClientHarness(gate: gate.eraseToAnySignal())
        h.client.connect()
        #expect(h.state == .disconnected)
        #expect(h.fake.connections.isEmpty)
        gate.value = true
        #expect(h.fake.connections.count == 1)
        h.welcome()
        #expect(h.state == .connected)
        gate.value = false
        #expect(h.state == .disconnected)
        #expect(h.fake.connections.first?.isClosed == true)
    }

    @Test("a stale session is detected by the watchdog and replaced")
    func staleSession() throws {
        let h = try ClientHarness()
        h.connected()
        h.scheduler.advance(by: 20)
        #expect(h.fake.connections.first?.isClosed == true)
        #expect(h.fake.connections.count == 2)
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test("after a suspension longer than staleTimeout, a dead session is found stale the moment the app wakes")
    func staleAfterSuspension() throws {
        let h = try ClientHarness()
        h.connected()
        h.scheduler.advance(by: 2)  // a frame-less while before the app goes to the background
        h.scheduler.suspend(for: 600)  // asleep; the clock counts on, no timer ran
        // The watchdog's deadline passed during the sleep: it runs on waking, sees 602 s of silence, and the
        // client reconnects without a further second of waiting for a socket that is gone.
        #expect(h.fake.connections.first?.isClosed == true)
        #expect(h.state == .connecting(attempt: 0))
        #expect(h.client.lastDisconnect.value?.kind == .stale)
    }

    @Test("a suspension shorter than staleTimeout keeps a session whose frames resume")
    func shortSuspensionKeepsSession() throws {
        let h = try ClientHarness()
        let connection = try #require(h.connected())
        h.scheduler.suspend(for: 5)
        connection.receive(#"{"type":"ping","message":1}"#)
        h.scheduler.advance(by: 14)
        #expect(h.state == .connected)
        #expect(h.fake.connections.count == 1)
    }
}

@Suite("ActionCableClient: subscriptions, perform and messages")
struct ClientSubscriptionTests {
    let params: JSONValue = ["channel": "ChatChannel", "room": "lobby"]

    @Test("a subscription made before connect goes out after the welcome, and its identifier is canonical")
    func subscribeBeforeConnect() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(["room": "lobby", "channel": "ChatChannel"])
        #expect(room.identifier == #"{"channel":"ChatChannel","room":"lobby"}"#)
        let connection = try #require(h.connected())
        #expect(
            connection.sent == [
                #"{"command":"subscribe","identifier":"{\"channel\":\"ChatChannel\",\"room\":\"lobby\"}"}"#
            ])
        #expect(h.state(of: room) == .pending)
        connection.receive(ClientHarness.confirm(room.identifier))
        #expect(h.state(of: room) == .subscribed(confirmations: 1))
    }

    @Test("perform returns true only when confirmed on the live connection, and sends the action in data")
    func performRules() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        #expect(room.perform("speak", ["text": "early"]) == false)
        let connection = try #require(h.connected())
        #expect(room.perform("speak", ["text": "pending"]) == false)
        connection.receive(ClientHarness.confirm(room.identifier))
        #expect(room.perform("speak", ["text": "hi", "action": "ignored"]) == true)
        let last = try #require(connection.sent.last)
        let frame = try JSONValue(parsing: last)
        #expect(frame["command"] == "message")
        #expect(frame["identifier"]?.stringValue == room.identifier)
        let data = try JSONValue(parsing: frame["data"]?.stringValue ?? "")
        #expect(data == ["text": "hi", "action": "speak"])
        connection.fail()
        #expect(room.perform("speak", ["text": "offline"]) == false)
        #expect(h.state(of: room) == .pending)
    }

    @Test("a frame queued on a dropped connection never reaches the next one")
    func noLeakAcrossConnections() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let first = try #require(h.connected())
        first.receive(ClientHarness.confirm(room.identifier))
        #expect(room.perform("speak", ["n": 1]))
        first.fail()
        h.scheduler.advance(by: 1.25)
        let second = try #require(h.welcome())
        #expect(second.sent.allSatisfy { !$0.contains("\"message\"") })
        second.receive(ClientHarness.confirm(room.identifier))
        #expect(h.state(of: room) == .subscribed(confirmations: 2))
    }

    @Test("messages flow to the loop in order, including ones that arrive before the confirmation")
    func messagesInOrder() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        var iterator = room.messages.makeAsyncIterator()
        connection.receive(ClientHarness.message(room.identifier, #"{"n":0}"#))
        connection.receive(ClientHarness.confirm(room.identifier))
        for n in 1...3 { connection.receive(ClientHarness.message(room.identifier, #"{"n":\#(n)}"#)) }
        for n in 0...3 { #expect(await iterator.next() == ["n": .int(n)]) }
    }

    @Test("payloads of every JSON type arrive, and a payload with type ping is still a message")
    func payloadTypes() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        var iterator = room.messages.makeAsyncIterator()
        let payloads: [(String, JSONValue)] = [
            ("null", .null), ("false", false), ("0", 0), (#""""#, ""), ("[1,2]", [1, 2]),
            (#"{"type":"ping"}"#, ["type": "ping"]),
        ]
        for (text, _) in payloads { connection.receive(ClientHarness.message(room.identifier, text)) }
        for (_, value) in payloads { #expect(await iterator.next() == value) }
    }

    @Test("a full buffer keeps the newest messageBufferSize messages and counts the drops")
    func overflowKeepsNewest() async throws {
        var options = CableOptions()
        options.messageBufferSize = 8
        let h = try ClientHarness(options: options)
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        for n in 0..<20 { connection.receive(ClientHarness.message(room.identifier, "\(n)")) }
        #expect(room.messages.droppedCount == 12)
        var iterator = room.messages.makeAsyncIterator()
        for n in 12..<20 { #expect(await iterator.next() == .int(n)) }
    }

    @Test("typed messages decode with Codable and skip what does not decode")
    func typedMessages() async throws {
        struct Chat: Codable, Sendable, Equatable {
            let user: String
            let text: String
        }
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        var iterator = room.messages(as: Chat.self).makeAsyncIterator()
        connection.receive(ClientHarness.message(room.identifier, #"{"user":"a","text":"hi"}"#))
        connection.receive(ClientHarness.message(room.identifier, #"{"nope":1}"#))
        connection.receive(ClientHarness.message(room.identifier, #"{"user":"b","text":"yo"}"#))
        #expect(await iterator.next() == Chat(user: "a", text: "hi"))
        #expect(await iterator.next() == Chat(user: "b", text: "yo"))
    }

    @Test("params without a string channel are rejected")
    func missingChannel() throws {
        let h = try ClientHarness()
        #expect(throws: CableError.self) { _ = try h.client.subscribe(["room": "x"]) }
        #expect(throws: CableError.self) { _ = try h.client.subscribe(["channel": 5]) }
    }

    @Test("unsubscribe sends unsubscribe on the live connection, finishes the messages and is final")
    func unsubscribeIsFinal() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(room.identifier))
        var iterator = room.messages.makeAsyncIterator()
        room.unsubscribe()
        room.unsubscribe()
        #expect(connection.sent.filter { $0.contains("unsubscribe") }.isEmpty)  // it lingers
        #expect(h.state(of: room) == .unsubscribed)
        h.endLinger()
        #expect(
            connection.sent.last
                == #"{"command":"unsubscribe","identifier":"{\"channel\":\"ChatChannel\",\"room\":\"lobby\"}"}"#)
        #expect(connection.sent.filter { $0.contains("unsubscribe") }.count == 1)
        #expect(h.state(of: room) == .unsubscribed)
        #expect(await iterator.next() == nil)
        connection.fail()
        h.scheduler.advance(by: 1.25)
        let next = try #require(h.welcome())
        #expect(next.sent.isEmpty)
    }

    @Test("releasing a subscription handle unsubscribes it")
    func releasingHandleUnsubscribes() throws {
        let h = try ClientHarness()
        let connection = try #require(h.connected())
        var room: ChannelSubscription? = try h.client.subscribe(params)
        connection.receive(ClientHarness.confirm(room?.identifier ?? ""))
        room = nil
        #expect(connection.sent.last?.contains("unsubscribe") == false)
        h.endLinger()
        #expect(connection.sent.last?.contains("unsubscribe") == true)
        _ = try h.client.subscribe(params)
    }

    @Test("a confirm for an unknown identifier gets an unsubscribe; a rejection ends rejected")
    func orphanAndReject() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(#"{"channel":"Ghost"}"#))
        #expect(connection.sent.last == #"{"command":"unsubscribe","identifier":"{\"channel\":\"Ghost\"}"}"#)
        connection.receive(ClientHarness.reject(room.identifier))
        #expect(h.state(of: room) == .rejected)
    }

    @Test("close is terminal: transport closed, subscriptions unsubscribed, later calls inert")
    func closeIsTerminal() async throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(room.identifier))
        var iterator = room.messages.makeAsyncIterator()
        h.client.close()
        h.client.close()
        #expect(h.state == .closed)
        #expect(connection.isClosed)
        #expect(h.state(of: room) == .unsubscribed)
        #expect(await iterator.next() == nil)
        #expect(room.perform("speak") == false)
        let late = try h.client.subscribe(["channel": "Late"])
        #expect(h.state(of: late) == .unsubscribed)
        h.client.connect()
        #expect(h.fake.connections.count == 1)
        #expect(h.scheduler.pendingCount == 0)
    }

    @Test("releasing the client closes its connection")
    func releasingClientCloses() throws {
        let fake = FakeTransport()
        var client: ActionCableClient? = try ActionCableClient(
            url: ClientHarness.url, transport: fake, scheduler: ManualScheduler())
        client?.connect()
        fake.last?.open()
        client = nil
        #expect(fake.last?.isClosed == true)
    }

    @Test("garbage from the server is ignored and changes nothing")
    func badInput() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(params)
        let connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(room.identifier))
        for garbage in [
            "", "{", "[]", "null", #"{"type":5}"#, #"{"identifier":5,"message":1}"#,
            #"{"type":"confirm_subscription"}"#,
            #"{"type":"disconnect","reconnect":"true","reason":7}"#, "1e400", #"{"type":"welcome""#,
            String(repeating: "[", count: 100_000),
        ] {
            connection.receive(garbage)
        }
        #expect(h.state == .connected)
        #expect(h.state(of: room) == .subscribed(confirmations: 1))
    }
}

@Suite("ActionCableClient: hooks")
struct ClientHookTests {
    /// Quick retries, for clients that talk to a LocalCableServer in real time.
    static var quickOptions: CableOptions {
        var options = CableOptions()
        options.minReconnectDelay = 0.05
        options.maxReconnectDelay = 0.2
        return options
    }

    @Test("onRequest runs before every attempt and its edits reach the server on the wire")
    func onRequestEveryAttempt() async throws {
        let server = try LocalCableServer()
        let calls = Locked(0)
        let client = try ActionCableClient(
            url: server.url, options: Self.quickOptions,
            onRequest: { request in
                let n = calls.withLock { n -> Int in
                    n += 1
                    return n
                }
                request.setHeader("X-Ticket", "ticket-\(n)")
            })
        client.connect()
        #expect(await client.state.first(within: 10) { $0 == .connected } == .connected)
        #expect(server.requests.map { $0.header("x-ticket") } == ["ticket-1"])
        server.drop()  // the connection dies without a close frame; the client tries again
        #expect(await server.wait(timeout: 10) { $0.requests.count == 2 && $0.connections.count == 1 })
        #expect(server.requests.map { $0.header("x-ticket") } == ["ticket-1", "ticket-2"])
        #expect(calls.withLock { $0 } == 2)
    }

    @Test("onUnauthorized is called exactly once; true reconnects, a second unauthorized stops")
    func unauthorizedOnce() async throws {
        let calls = Locked(0)
        let h = try ClientHarness(onUnauthorized: {
            calls.withLock { $0 += 1 }
            return true
        })
        h.client.connect()
        h.fake.last?.open()
        h.fake.last?.receive(#"{"type":"disconnect","reason":"unauthorized","reconnect":false}"#)
        #expect(await h.eventually { h.fake.connections.count >= 2 })
        #expect(calls.withLock { $0 } == 1)
        h.fake.last?.open()
        h.fake.last?.receive(#"{"type":"disconnect","reason":"unauthorized","reconnect":false}"#)
        #expect(await h.eventually { h.state == .stopped(reason: .unauthorized(serverReason: "unauthorized")) })
        #expect(calls.withLock { $0 } == 1)
    }

    @Test("an upgrade answered 401 calls onUnauthorized; declining stops")
    func httpUnauthorized() async throws {
        let server = try LocalCableServer()
        server.connectionRule = { _ in .reject(status: 401) }
        let calls = Locked(0)
        let client = try ActionCableClient(
            url: server.url, options: Self.quickOptions,
            onUnauthorized: {
                calls.withLock { $0 += 1 }
                return false
            })
        client.connect()
        #expect(
            await client.state.first(within: 10) { $0 == .stopped(reason: .unauthorized(serverReason: nil)) } != nil)
        #expect(calls.withLock { $0 } == 1)
        #expect(server.requests.map(\.status) == [401])
    }
}
