import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

/// A phone's network, through the client's inputs: a fake network path and lifecycle, the fake transport and the
/// manual clock. The machine's rules are in ConnectionCheckTests; these check the wiring and what the app sees.
@Suite("Handovers, flaps, returns: the client checks its connection")
struct HandoverTests {
    static let wifi = NetworkInterface(name: "en0", kind: .wifi)
    static let cellular = NetworkInterface(name: "pdp_ip0", kind: .cellular)
    static let onWiFi = NetworkPath(status: .satisfied, interfaces: [wifi])
    static let onCellular = NetworkPath(status: .satisfied, interfaces: [cellular], isExpensive: true)
    static let offline = NetworkPath(status: .unsatisfied)
    static let params: JSONValue = ["channel": "ChatChannel", "room": "lobby"]
    static let room = #"{"channel":"ChatChannel","room":"lobby"}"#
    static let ping = #"{"type":"ping","message":1}"#

    let path = MutableStateValue<NetworkPath?>(onWiFi)
    let foreground = MutableStateValue(true)
    let h: ClientHarness

    init() throws {
        h = try ClientHarness(network: path.readOnly, foreground: foreground.readOnly)
    }

    /// A welcomed connection (AnyCable's, with a `sid`, when `anyCable`) with the room confirmed on it.
    func confirmed(anyCable: Bool = false) throws -> (ChannelSubscription, FakeTransport.Connection) {
        h.client.connect()
        let connection = try #require(h.fake.last)
        connection.open()
        connection.receive(anyCable ? #"{"type":"welcome","sid":"s1"}"# : #"{"type":"welcome"}"#)
        let room = try h.client.subscribe(Self.params)
        connection.receive(ClientHarness.confirm(Self.room))
        #expect(h.state(of: room) == .subscribed(confirmations: 1))
        return (room, connection)
    }

    @Test(
        "Wi-Fi to cellular kills the socket: the client replaces it within 4 s (Rails: the next ping is overdue), at attempt 0, and messages flow on the new one"
    )
    func handoverKillsTheSocket() async throws {
        let (room, old) = try confirmed()
        h.scheduler.advance(by: 2)
        old.receive(Self.ping)  // the last frame before the handover
        path.value = Self.onCellular  // …and the old socket goes silent
        h.scheduler.advance(by: 3.99)
        #expect(h.fake.connections.count == 1)
        h.scheduler.advance(by: 0.01)  // 2 + 3 + 1: the ping is a second overdue
        #expect(old.isClosed || old.closeCode != nil)
        #expect(h.client.lastDisconnect.value?.kind == .checkFailed)
        #expect(h.state == .connecting(attempt: 0))
        let new = try #require(h.fake.last)
        #expect(new !== old)
        new.open()
        new.receive(#"{"type":"welcome"}"#)
        new.receive(ClientHarness.confirm(Self.room))
        new.receive(ClientHarness.message(Self.room, #"{"text":"after"}"#))
        var loop = room.messages.makeAsyncIterator()
        #expect(await loop.next() == ["text": "after"])
        room.unsubscribe()
    }

    @Test("Wi-Fi joining cellular leaves the socket alone: no check, no new connection")
    func interfaceAddedKeepsTheSocket() throws {
        path.value = Self.onCellular
        let (_, connection) = try confirmed()
        path.value = NetworkPath(status: .satisfied, interfaces: [Self.wifi, Self.cellular])
        h.scheduler.advance(by: 14)
        connection.receive(Self.ping)
        h.scheduler.advance(by: 10)
        #expect(h.fake.connections.count == 1)
        #expect(connection.isOpen)
    }

    @Test("a handover the socket survives (pings keep coming) keeps it")
    func socketThatAnswersIsKept() throws {
        let (_, connection) = try confirmed()
        path.value = Self.onCellular
        for _ in 0..<4 {
            h.scheduler.advance(by: 3)
            connection.receive(Self.ping)
        }
        #expect(h.fake.connections.count == 1)
        #expect(connection.isOpen)
        #expect(h.client.lastDisconnect.value == nil)
    }

    @Test(
        "a flap shorter than 2 s closes nothing; an outage longer than that closes, and the route's return reconnects at once"
    )
    func flapAndOutage() throws {
        let (_, connection) = try confirmed()
        path.value = Self.offline
        h.scheduler.advance(by: 1.5)
        path.value = Self.onWiFi
        connection.receive(Self.ping)
        h.scheduler.advance(by: 5)
        #expect(connection.isOpen)
        #expect(h.state == .connected)
        path.value = Self.offline
        h.scheduler.advance(by: 2)
        #expect(!connection.isOpen)
        #expect(h.state == .disconnected)
        #expect(h.client.lastDisconnect.value == nil)  // the network's, not a failure
        h.scheduler.advance(by: 120)
        #expect(h.fake.connections.count == 1)  // no attempt while there is no route
        path.value = Self.onCellular
        #expect(h.fake.connections.count == 2)
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test("a path that needs a connection to come up (VPN on demand) connects")
    func requiresConnectionConnects() {
        path.value = NetworkPath(status: .requiresConnection)
        h.client.connect()
        #expect(h.fake.connections.count == 1)
    }

    @Test("AnyCable is probed: a pong keeps the socket, and once it has answered, silence replaces it after 1.5 s")
    func anyCableProbe() throws {
        let (_, connection) = try confirmed(anyCable: true)
        path.value = Self.onCellular
        #expect(connection.sent.last == #"{"command":"ping"}"#)
        connection.receive(#"{"type":"pong"}"#)
        h.scheduler.advance(by: 4)
        #expect(h.fake.connections.count == 1)
        connection.receive(Self.ping)
        path.value = Self.onWiFi
        #expect(connection.sent.filter { $0 == #"{"command":"ping"}"# }.count == 2)
        h.scheduler.advance(by: 1.49)
        #expect(h.fake.connections.count == 1)
        h.scheduler.advance(by: 0.01)
        #expect(h.fake.connections.count == 2)
        #expect(h.client.lastDisconnect.value?.kind == .checkFailed)
    }

    @Test(
        "over a transport that pings (ours), any server is probed with a WebSocket ping, trusted at once: a pong keeps the socket, silence replaces it after 1.5 s"
    )
    func webSocketPingProbe() throws {
        let h = try ClientHarness(network: path.readOnly, pings: true)
        h.client.connect()
        let connection = try #require(h.fake.last)
        connection.open()
        connection.receive(#"{"type":"welcome"}"#)  // Rails: no sid
        path.value = Self.onCellular
        #expect(connection.pings == 1)
        #expect(!connection.sent.contains(#"{"command":"ping"}"#))
        connection.pong()
        h.scheduler.advance(by: 1.5)
        #expect(h.fake.connections.count == 1)
        path.value = Self.onWiFi
        #expect(connection.pings == 2)
        h.scheduler.advance(by: 1.49)
        #expect(h.fake.connections.count == 1)
        h.scheduler.advance(by: 0.01)
        #expect(h.fake.connections.count == 2)
        #expect(h.client.lastDisconnect.value?.kind == .checkFailed)
    }

    @Test("a Rails session is never sent a ping command")
    func railsIsNotProbed() throws {
        let (_, connection) = try confirmed()
        path.value = Self.onCellular
        h.client.networkChanged()
        #expect(!connection.sent.contains(#"{"command":"ping"}"#))
    }

    @Test("a return to the foreground after the background checks once; staying in the foreground checks nothing")
    func foregroundReturn() throws {
        let (_, connection) = try confirmed(anyCable: true)
        foreground.value = true
        #expect(!connection.sent.contains(#"{"command":"ping"}"#))
        foreground.value = false
        foreground.value = true
        #expect(connection.sent.filter { $0 == #"{"command":"ping"}"# }.count == 1)
    }

    @Test("networkChanged() (a Linux service's network manager) checks the live connection the same way")
    func networkChangedByTheApp() throws {
        let (_, connection) = try confirmed()
        h.client.networkChanged()
        h.scheduler.advance(by: 4)
        #expect(connection.isClosed || !connection.isOpen)
        #expect(h.fake.connections.count == 2)
        #expect(h.client.lastDisconnect.value?.kind == .checkFailed)
    }

    @Test("a sleep longer than the silence limit replaces the connection at the wake, without waiting")
    func sleep() throws {
        let (_, connection) = try confirmed()
        h.scheduler.suspend(for: 600)
        #expect(!connection.isOpen)
        #expect(h.fake.connections.count == 2)
        #expect(h.state == .connecting(attempt: 0))
    }
}
