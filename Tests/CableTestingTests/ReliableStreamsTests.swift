import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

/// AnyCable's extended protocol end to end: LocalCableServer with reliable streams and the real client, over
/// sockets. A reconnect in the middle of a burst loses nothing with it, and shows its gap without it.
@Suite("LocalCableServer reliable streams with ActionCableClient", .serialized)
struct ReliableStreamsTests {
    static let count = 10_000

    static func server(historyLimit: Int = 2 * count, sessionTTL: Double = 300, replayChunk: Int? = nil) throws
        -> LocalCableServer
    {
        var options = Fixture.serverOptions()
        var reliable = LocalCableServer.ReliableStreams()
        reliable.historyLimit = historyLimit
        reliable.sessionTTL = sessionTTL
        reliable.replayChunk = replayChunk
        options.reliableStreams = reliable
        return try LocalCableServer(options: options)
    }

    static func client(_ server: LocalCableServer, _ wire: CableWireProtocol, bufferSize: Int = 2 * count) throws
        -> ActionCableClient
    {
        var options = Fixture.options()
        options.wireProtocol = wire
        options.messageBufferSize = bufferSize
        return try ActionCableClient(url: server.url, options: options)
    }

    /// Every `n` the subscription delivers, in order, and how many there are as a signal to wait on.
    final class Numbers: Sendable {
        let values = Locked<[Int]>([])
        let count = MutableStateValue(0)
        /// The last `n` delivered.
        let last = MutableStateValue(0)
        let token: SignalObservation

        init(_ room: ChannelSubscription) {
            let values = values
            let count = count
            let last = last
            token = room.messages.observe { message in
                let n = message["n"]?.intValue ?? -1
                let total = values.withLock { values in
                    values.append(n)
                    return values.count
                }
                count.value = total
                last.value = n
            }
        }
    }

    /// Broadcasts 1...count to `identifier`, dropping every connection after `dropAfter`.
    static func burst(_ server: LocalCableServer, to identifier: String, dropAfter: Int) async {
        await Task.detached {
            for n in 1...count {
                server.broadcast(["n": .int(n)], to: identifier)
                if n == dropAfter { server.drop() }
            }
        }.value
    }

    @Test("extended: a connection dropped mid-burst is restored and replayed; every number arrives once, in order")
    func seamless() async throws {
        let server = try Self.server()
        let client = try Self.client(server, .anyCableExtended)
        defer { client.close() }
        let room = try client.subscribe(["channel": "NumbersChannel"])
        let numbers = Numbers(room)
        client.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        await Self.burst(server, to: room.identifier, dropAfter: 3_000)
        #expect(await numbers.count.first(within: 20) { $0 >= Self.count } != nil)
        #expect(numbers.values.withLock { $0 } == Array(1...Self.count))
        #expect(await room.lastReconnect.first(within: 5) { $0 == .recovered } != nil)
        #expect(room.state.value == .subscribed(confirmations: 1), "restored: not confirmed again")
        #expect(server.requests.last?.header("X-AnyCable-Restore-SID") != nil)
    }

    @Test(
        "extended: a replay larger than the buffer after live messages past the gap: delivered ∪ counted is every number",
        arguments: [(16, 2_000), (16, 5_000), (128, 5_000)])
    func replayLargerThanBuffer(bufferSize: Int, live: Int) async throws {
        let server = try Self.server(replayChunk: 64)
        let client = try Self.client(server, .anyCableExtended, bufferSize: bufferSize)
        defer { client.close() }
        let room = try client.subscribe(["channel": "NumbersChannel"])
        let numbers = Numbers(room)
        client.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        let identifier = room.identifier
        let replayed = Self.count - live
        // 1...replayed with a drop after 300, and no connection until they are all out. The restored session
        // asks for its replay; the server holds it back while the last `live` numbers go out live, past the gap,
        // then sends the backlog in chunks of 64.
        server.holdReplays(true)
        await Task.detached {
            for n in 1...replayed {
                server.broadcast(["n": .int(n)], to: identifier)
                if n == 300 {
                    server.refuseConnections()
                    server.drop()
                }
            }
        }.value
        try server.acceptConnections()
        #expect(await server.wait(timeout: 10) { $0.commands.contains { $0.command == "history" } })
        await Task.detached {
            for n in (replayed + 1)...Self.count { server.broadcast(["n": .int(n)], to: identifier) }
        }.value
        server.holdReplays(false)
        let outcome = await room.lastReconnect.first(within: 20) { $0 == .recovered || $0 == .recoveredWithGaps }
        #expect(await numbers.last.first(within: 20) { $0 == Self.count } != nil)
        // What waits for the replay is bounded by 4,096 messages (or four buffers): more, and it goes out first.
        #expect(outcome == (live > max(4096, 4 * bufferSize) ? .recoveredWithGaps : .recovered))
        let delivered = numbers.values.withLock { $0 }
        #expect(zip(delivered, delivered.dropFirst()).allSatisfy { $0 < $1 }, "in order, each once")
        #expect(delivered.count + room.messages.droppedCount == Self.count, "delivered ∪ counted = every number")
        #expect(room.state.value == .subscribed(confirmations: 1), "restored: not confirmed again")
    }

    @Test(
        "extended: a restore never leaks: what the app let go while down is unsubscribed, params taken again are adopted"
    )
    func restoreNeverLeaks() async throws {
        let server = try Self.server()
        let client = try Self.client(server, .anyCableExtended)
        defer { client.close() }
        let keep = try client.subscribe(["channel": "NumbersChannel"])
        let gone = try client.subscribe(["channel": "NumbersChannel", "room": "gone"])
        let again = try client.subscribe(["channel": "NumbersChannel", "room": "again"])
        client.connect()
        for room in [keep, gone, again] { #expect(await room.reaches(.subscribed(confirmations: 1))) }
        let goneIdentifier = gone.identifier
        server.refuseConnections()
        server.drop()
        #expect(await keep.reaches(.pending))
        gone.unsubscribe()
        again.unsubscribe()
        let back = try client.subscribe(["channel": "NumbersChannel", "room": "again"])
        try server.acceptConnections()
        #expect(await back.reaches(.subscribed(confirmations: 1), within: 10), "adopted, not left pending")
        #expect(await keep.lastReconnect.first(within: 5) { $0 != nil } != nil)
        #expect(keep.lastReconnect.value == .restored, "restored, not resubscribed")
        let unsubscribed = await server.wait { snapshot in
            snapshot.commands.contains { $0.command == "unsubscribe" && $0.identifier == goneIdentifier }
                && snapshot.connections.last?.subscriptions.sorted() == [keep.identifier, back.identifier].sorted()
        }
        #expect(unsubscribed, "the server no longer streams what no handle holds")
        server.broadcast(["n": 1], to: back.identifier)
        #expect(await back.nextMessage()?["n"] == 1)
    }

    @Test("plain Action Cable: the same run shows a gap, and the subscription is confirmed again")
    func lossyWithoutIt() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions())
        let client = try Self.client(server, .actionCable)
        defer { client.close() }
        let room = try client.subscribe(["channel": "NumbersChannel"])
        let numbers = Numbers(room)
        client.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        await Self.burst(server, to: room.identifier, dropAfter: 3_000)
        #expect(await room.reaches(.subscribed(confirmations: 2), within: 10))
        server.broadcast(["n": .int(Self.count + 1)], to: room.identifier)
        #expect(
            await numbers.count.first(within: 5) { _ in numbers.values.withLock { $0.last } == Self.count + 1 } != nil)
        let received = numbers.values.withLock { $0 }
        #expect(received.count < Self.count + 1, "messages broadcast while disconnected are lost")
        #expect(received == received.sorted())
        #expect(room.lastReconnect.value == .resubscribed)
        #expect(room.lastReconnect.value?.mayHaveMissedMessages == true)
    }

    @Test("a new epoch on the server rejects the replay: the subscription says it may have missed messages")
    func epochChangeRejects() async throws {
        let server = try Self.server()
        let client = try Self.client(server, .anyCableExtended)
        defer { client.close() }
        let room = try client.subscribe(["channel": "NumbersChannel"])
        let numbers = Numbers(room)
        client.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        for n in 1...5 { server.broadcast(["n": .int(n)], to: room.identifier) }
        #expect(await numbers.count.first(within: 5) { $0 == 5 } != nil)
        server.drop()
        server.resetStreamEpoch()  // before the client is back: its replay asks for the old epoch
        #expect(await room.lastReconnect.first(within: 10) { $0 == .historyRejected } != nil)
        server.broadcast(["n": 100], to: room.identifier)  // offset 1 of the new epoch: a new sequence
        #expect(await numbers.count.first(within: 5) { $0 == 6 } != nil)
        #expect(numbers.values.withLock { $0 } == [1, 2, 3, 4, 5, 100])
    }

    @Test("an expired session is subscribed again and still replayed from its stream positions")
    func expiredSessionReplays() async throws {
        let server = try Self.server(sessionTTL: 0)
        let client = try Self.client(server, .anyCableExtended)
        defer { client.close() }
        let room = try client.subscribe(["channel": "NumbersChannel"])
        let numbers = Numbers(room)
        client.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        await Self.burst(server, to: room.identifier, dropAfter: 2_000)
        #expect(await numbers.count.first(within: 20) { $0 >= Self.count } != nil)
        #expect(numbers.values.withLock { $0 } == Array(1...Self.count))
        #expect(await room.lastReconnect.first(within: 5) { $0 == .recovered } != nil)
        #expect(room.state.value == .subscribed(confirmations: 2), "resubscribed, then replayed")
    }

    @Test("historySince: what was broadcast before the subscription is replayed first, then the live messages")
    func historySince() async throws {
        let server = try Self.server()
        let client = try Self.client(server, .anyCableExtended)
        defer { client.close() }
        let identifier = #"{"channel":"NumbersChannel"}"#
        for n in 1...5 { server.broadcast(["n": .int(n)], to: identifier) }  // nobody subscribed yet
        let room = try client.subscribe(["channel": "NumbersChannel"], historySince: Date(timeIntervalSinceNow: -60))
        let numbers = Numbers(room)
        client.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        server.broadcast(["n": 6], to: identifier)
        #expect(await numbers.count.first(within: 5) { $0 == 6 } != nil)
        #expect(numbers.values.withLock { $0 } == [1, 2, 3, 4, 5, 6])
    }

    @Test("historySince against a server without history (Rails): nothing is replayed and nothing waits")
    func historySinceIgnored() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions())
        let client = try Self.client(server, .actionCable)
        defer { client.close() }
        let room = try client.subscribe(["channel": "NumbersChannel"], historySince: Date(timeIntervalSinceNow: -60))
        let numbers = Numbers(room)
        client.connect()
        #expect(await room.reaches(.subscribed(confirmations: 1)))
        server.broadcast(["n": 1], to: room.identifier)
        #expect(await numbers.count.first(within: 5) { $0 == 1 } != nil)
    }
}
