import CableReactive
import Foundation
import Signals

/// An in-memory `WebSocketTransport` that a test drives by hand: it records every connection and every
/// frame the client sends, and delivers the server's side when told to.
///
/// ```swift
/// let fake = FakeTransport()
/// let client = try ActionCableClient(url: url, transport: fake, scheduler: ManualScheduler())
/// client.connect()
/// let connection = try #require(fake.last)
/// connection.open()
/// connection.receive(#"{"type":"welcome"}"#)
/// ```
///
/// Events are delivered synchronously on the calling thread. `close(code:reason:)` by the client only
/// records the close; call ``Connection/finishClose()`` to deliver the `.closed` event a real transport
/// would send.
public final class FakeTransport: WebSocketTransport, NativeTransport {
    private let connectionList = Locked<[Connection]>([])
    private let count = MutableStateValue(0)
    /// Whether its connections answer WebSocket pings (``Connection/pings``, ``Connection/pong()``).
    private let answersPings: Bool

    /// A transport with no connections yet. With `pings`, its connections take WebSocket pings, as
    /// `SocketTransport`'s and `URLSessionTransport`'s do, and the client's checks probe with them: count them
    /// with ``Connection/pings`` and answer with ``Connection/pong()``. Without (the default), the client knows
    /// no way to ping it, as with a transport of the app's own.
    public init(pings: Bool = false) {
        answersPings = pings
    }

    /// Whether the client may ping its connections.
    package var pings: Bool { answersPings }

    /// Every connection the client has asked for, oldest first.
    public var connections: [Connection] { connectionList.withLock { $0 } }
    /// The newest connection.
    public var last: Connection? { connections.last }
    /// How many connections the client has asked for; observable, so async tests can wait for one.
    public var connectCount: StateValue<Int> { count.readOnly }
    /// The connections that are open and not closed.
    public var openConnections: [Connection] { connections.filter { $0.isOpen } }

    /// Records a new ``Connection`` in the connecting phase; nothing happens until the test calls ``Connection/open(subprotocol:)`` or ``Connection/fail(_:)``.
    public func connect(
        request: CableRequest,
        protocols: [String],
        handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection {
        record(Connection(request: request, protocols: protocols, handler: handler, receiver: nil))
    }

    private func record(_ connection: Connection) -> Connection {
        let total = connectionList.withLock { list -> Int in
            list.append(connection)
            return list.count
        }
        count.value = total
        return connection
    }

    /// The client's way in: `.text` events feed its receiver, each as a read of its own, and
    /// ``Connection/receive(read:)`` delivers several as one read. A fake connection takes `send` and `close` from
    /// inside its own delivery (they never take the delivery lock).
    package func connect(
        request: CableRequest, protocols: [String], receiver: TextReceiver,
        handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection {
        record(
            Connection(request: request, protocols: protocols, handler: receiver.adapting(handler), receiver: receiver))
    }

    /// One fake connection.
    public final class Connection: PingingConnection {
        private struct State: Sendable {
            var phase = Phase.connecting
            var sent: [String] = []
            var pings = 0
            var closeCode: WebSocketCloseCode?
        }

        enum Phase: Sendable {
            case connecting
            case open
            case closed
        }

        /// The request the client made, after its `onRequest` hook.
        public let request: CableRequest
        /// The subprotocols the client offered.
        public let protocols: [String]
        private let eventHandler: @Sendable (WebSocketEvent) -> Void
        /// The client's receiver, when it connected through it: what a read of several messages goes to.
        private let receiver: TextReceiver?
        /// Held while an event is delivered: tests may call ``receive(_:)`` and the rest from many threads at
        /// once, and a transport's handler receives events serially (the `WebSocketTransport` contract).
        private let delivery = Locked(())
        private let state = Locked(State())

        init(
            request: CableRequest, protocols: [String], handler: @escaping @Sendable (WebSocketEvent) -> Void,
            receiver: TextReceiver?
        ) {
            self.request = request
            self.protocols = protocols
            eventHandler = handler
            self.receiver = receiver
        }

        private func deliver(_ event: WebSocketEvent) {
            delivery.withLock { _ in eventHandler(event) }
        }

        /// Every text frame the client sent, in order.
        public var sent: [String] { state.withLock { $0.sent } }
        /// How many WebSocket pings the client sent (its checks' probes, when the transport was made with `pings`).
        public var pings: Int { state.withLock { $0.pings } }

        /// Counts a ping while the connection is open.
        package func sendPing() -> Bool {
            state.withLock { state in
                guard state.phase == .open else { return false }
                state.pings += 1
                return true
            }
        }

        /// Delivers the server's pong to a ping, as a real transport reports it.
        public func pong() {
            guard let receiver else { return }
            delivery.withLock { _ in receiver.pong() }
        }
        /// Whether the connection is open (opened and not closed).
        public var isOpen: Bool { state.withLock { $0.phase == .open } }
        /// The code the client closed with, if it closed.
        public var closeCode: WebSocketCloseCode? { state.withLock { $0.closeCode } }
        /// Whether either side closed the connection.
        public var isClosed: Bool { state.withLock { $0.phase == .closed } }

        /// Records `text` in ``sent`` and returns `true` while the connection is open; otherwise returns `false`.
        public func send(text: String) -> Bool {
            state.withLock { state in
                guard state.phase == .open else { return false }
                state.sent.append(text)
                return true
            }
        }

        /// Records the close; ``finishClose()`` delivers the `.closed` event.
        public func close(code: WebSocketCloseCode, reason: String) {
            state.withLock { state in
                guard state.phase != .closed else { return }
                state.phase = .closed
                state.closeCode = code
            }
        }

        /// The upgrade succeeds, with `subprotocol` chosen.
        public func open(subprotocol: String? = "actioncable-v1-json") {
            let opened = state.withLock { state -> Bool in
                guard state.phase == .connecting else { return false }
                state.phase = .open
                return true
            }
            if opened { deliver(.opened(protocol: subprotocol)) }
        }

        /// The server sends `text`.
        public func receive(_ text: String) {
            deliver(.text(text))
        }

        /// The server sends `texts`, and they arrive in one network read (as a confirmation and the messages a
        /// Rails channel transmits right after it do, written together); with a client of this package they reach
        /// it as one read, with any other as one `.text` event each.
        public func receive(read texts: [String]) {
            guard let receiver else { return texts.forEach(receive) }
            delivery.withLock { _ in
                for var text in texts { text.withUTF8 { receiver.text($0) } }
                _ = receiver.batchEnded()
            }
        }

        /// The connection fails with `error` (by default a connection without a close frame).
        public func fail(_ error: WebSocketError = WebSocketError(.abnormalClosure)) {
            finish(.failed(error))
        }

        /// The server closes with `code`.
        public func serverClose(code: WebSocketCloseCode = .normalClosure, reason: String = "") {
            finish(.closed(code: code, reason: reason))
        }

        /// Delivers the `.closed` event that follows the client's own close.
        public func finishClose() {
            let code = state.withLock { $0.closeCode } ?? .normalClosure
            deliver(.closed(.closed(code: code, reason: "")))
        }

        private func finish(_ info: WebSocketCloseInfo) {
            state.withLock { $0.phase = .closed }
            deliver(.closed(info))
        }
    }
}
