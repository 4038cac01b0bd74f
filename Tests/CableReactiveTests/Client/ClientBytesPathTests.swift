import CableTesting
import Foundation
import Signals
import Testing

@testable import CableReactive

/// A transport that hands text over as bytes, in batches, like SocketTransport: the client's hot path
/// (token routing, batched wake-ups, arrival noted once per read), driven by hand.
final class BytesTransport: NativeTransport {
    final class Connection: WebSocketConnection {
        let receiver: TextReceiver?
        let handler: @Sendable (WebSocketEvent) -> Void
        private let sentTexts = Locked<[String]>([])

        init(receiver: TextReceiver?, handler: @escaping @Sendable (WebSocketEvent) -> Void) {
            self.receiver = receiver
            self.handler = handler
        }

        var sent: [String] { sentTexts.withLock { $0 } }

        func send(text: String) -> Bool {
            sentTexts.withLock { $0.append(text) }
            return true
        }

        func close(code: WebSocketCloseCode, reason: String) {}

        func open() { handler(.opened(protocol: "actioncable-v1-json")) }

        /// Delivers `texts` as one network read: each as bytes, then the end of the batch.
        func read(_ texts: String...) {
            deliver(texts)
            _ = receiver?.batchEnded()
        }

        /// Delivers `texts` as bytes and ends the connection before the read ends.
        func readThenClose(_ texts: String...) {
            deliver(texts)
            handler(.closed(.closed(code: .goingAway, reason: "")))
        }

        private func deliver(_ texts: [String]) {
            for text in texts {
                Array(text.utf8).withUnsafeBufferPointer { receiver?.text($0) }
            }
        }
    }

    private let list = Locked<[Connection]>([])
    var last: Connection? { list.withLock { $0.last } }
    var count: Int { list.withLock { $0.count } }

    func connect(
        request: CableRequest, protocols: [String], handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection {
        let connection = Connection(receiver: nil, handler: handler)
        list.withLock { $0.append(connection) }
        return connection
    }

    func connect(
        request: CableRequest, protocols: [String], receiver: TextReceiver,
        handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection {
        let connection = Connection(receiver: receiver, handler: handler)
        list.withLock { $0.append(connection) }
        return connection
    }
}

@Suite("Client: the bytes path")
struct ClientBytesPathTests {
    static let url = URL(string: "ws://cable.test/cable")!
    static let token = #"{\"channel\":\"ChatChannel\",\"room\":\"a/b\"}"#

    /// A client subscribed to room "a/b" on a welcomed connection.
    static func subscribed(
        staleTimeout: TimeInterval = 15
    ) throws -> (BytesTransport, ManualScheduler, ActionCableClient, ChannelSubscription) {
        let transport = BytesTransport()
        let scheduler = ManualScheduler()
        var options = CableOptions()
        options.staleTimeout = staleTimeout
        let client = try ActionCableClient(
            url: url, options: options, transport: transport, scheduler: scheduler, random: SeededRandom(seed: 7))
        let room = try client.subscribe(["channel": "ChatChannel", "room": "a/b"])
        client.connect()
        scheduler.flush()
        let connection = try #require(transport.last)
        connection.open()
        connection.read(#"{"type":"welcome"}"#)
        connection.read(#"{"identifier":"\#(token)","type":"confirm_subscription"}"#)
        scheduler.flush()
        #expect(room.state.value == .subscribed(confirmations: 1))
        #expect(connection.sent.contains { $0.contains("subscribe") })
        return (transport, scheduler, client, room)
    }

    @Test(
        "routes data frames by token, by the identifier read when the server escapes differently, and drops unknown ones"
    )
    func routes() async throws {
        let (transport, _, client, room) = try Self.subscribed()
        let connection = try #require(transport.last)
        connection.read(
            #"{"identifier":"\#(Self.token)","message":{"n":1}}"#,  // our writer's token
            #"{"identifier":"{\"channel\":\"ChatChannel\",\"room\":\"a\/b\"}","message":{"n":2}}"#,  // `\/`
            #"{"identifier":"{\"channel\":\"Other\"}","message":{"n":99}}"#,  // not ours
            #"{"identifier":"\u007b\"channel\":\"ChatChannel\",\"room\":\"a/b\"}","message":{"n":3}}"#,
            #"{"identifier":"\#(Self.token)","message":{"n":4},"type":"confirm_subscription"}"#  // a confirm
        )
        var messages = room.messages.makeAsyncIterator()
        #expect(await messages.next() == ["n": 1])
        #expect(await messages.next() == ["n": 2])
        #expect(await messages.next() == ["n": 3])
        client.close()
        #expect(await messages.next() == nil, "the unknown identifier and the confirmation delivered nothing")
    }

    @Test("messages of a read the connection's end cuts short are still delivered, in order")
    func closedMidRead() async throws {
        let (transport, _, client, room) = try Self.subscribed()
        let connection = try #require(transport.last)
        connection.readThenClose(
            #"{"identifier":"\#(Self.token)","message":{"n":1}}"#,
            #"{"identifier":"\#(Self.token)","message":{"n":2}}"#
        )
        var messages = room.messages.makeAsyncIterator()
        #expect(await messages.next() == ["n": 1])
        #expect(await messages.next() == ["n": 2])
        client.close()
        #expect(await messages.next() == nil)
    }

    @Test("frames of a connection that is no longer live are dropped")
    func staleConnection() async throws {
        let (transport, scheduler, client, room) = try Self.subscribed()
        let old = try #require(transport.last)
        client.disconnect()
        scheduler.flush()
        old.read(#"{"identifier":"\#(Self.token)","message":{"late":true}}"#)
        client.close()
        var messages = room.messages.makeAsyncIterator()
        #expect(await messages.next() == nil)
    }

    @Test("data frames keep the connection fresh, noted once per read")
    func freshness() throws {
        let (transport, scheduler, client, _) = try Self.subscribed(staleTimeout: 10)
        let connection = try #require(transport.last)
        scheduler.advance(by: 9)
        connection.read(#"{"identifier":"\#(Self.token)","message":{"n":1}}"#)
        scheduler.advance(by: 9)  // 18 s after the welcome, 9 s after the data
        scheduler.flush()
        #expect(transport.count == 1)
        #expect(client.state.value == .connected)
        scheduler.advance(by: 1.5)  // 10.5 s of silence: stale, reconnect at once
        scheduler.flush()
        #expect(transport.count == 2)
        client.close()
    }
}
