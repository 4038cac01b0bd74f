#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// A transport of this package (`SocketTransport`, `URLSessionTransport`, CableTesting's `FakeTransport`):
/// one the client uses as it is. Any other ``WebSocketTransport`` is wrapped once, when the client is made
/// (``ForeignTransport``).
///
/// Two promises beyond ``WebSocketTransport``'s:
/// - Text messages go to a ``TextReceiver`` as validated UTF-8, with the end of each network read reported,
///   so the client parses bytes without a `String` per message and wakes a waiting loop once per read.
///   A transport with no reads of its own reports each message as a read (``TextReceiver/adapting(_:)``).
/// - Its connections accept `send` and `close` from inside their own event delivery, on the delivering
///   thread (the client answers a welcome with its subscribes, a ping with a pong, from there).
package protocol NativeTransport: WebSocketTransport {
    /// ``WebSocketTransport/connect(request:protocols:handler:)``, except that text messages go to
    /// `receiver` instead of `handler` as `.text` events. Both run on the same thread, serially.
    func connect(
        request: CableRequest,
        protocols: [String],
        receiver: TextReceiver,
        handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection

    /// Whether its connections are ``PingingConnection``s, whose pongs reach the receiver: the client's checks
    /// then probe with a WebSocket ping, which every server answers. Default `false`.
    var pings: Bool { get }
}

extension NativeTransport {
    package var pings: Bool { false }
}

/// Where a connection delivers text messages as UTF-8 bytes instead of `.text(String)` events: the path
/// ``ActionCableClient`` uses. Package-only, as ``NativeTransport`` is: apps get messages from the
/// client, and a custom transport delivers `.text` events.
///
/// Both closures run on the connection's I/O thread, serially, in wire order, interleaved with the
/// handler's other events; the connection keeps them alive until `.closed` has been delivered, and must let
/// go of them then (``ActionCableClient``'s receiver holds the client's state).
///
/// ```swift
/// let receiver = TextReceiver(
///     text: { utf8 in parser.feed(utf8) },          // valid UTF-8; copy it if you keep it
///     batchEnded: { parser.publishPending() }       // after the messages of one network read
/// )
/// let connection = SocketTransport().connect(request: request, protocols: [], receiver: receiver) { event in
///     print(event)                                  // .opened and .closed; no .text events
/// }
/// ```
package struct TextReceiver: Sendable {
    /// Gets each text message's validated UTF-8, in order. The bytes are valid only during the call.
    package var text: @Sendable (UnsafeBufferPointer<UInt8>) -> Void
    /// Called after the messages of one network read, so a consumer can publish them in one go; says what the
    /// read delivered, for the I/O thread's ``ReadDelivery/shouldYield(since:)``.
    package var batchEnded: @Sendable () -> ReadDelivery
    /// Called once per attempt, on the connection's thread, with how it reaches the server, before it connects
    /// (``ConnectionRoute``; `SocketTransport` only), so the client can log it. Default: nothing.
    package var routed: @Sendable (ConnectionRoute) -> Void
    /// Called when the peer answers a ping of ours (``PingingConnection/sendPing()``) with a pong, on the
    /// connection's thread, in wire order with the text. Default: nothing.
    package var pong: @Sendable () -> Void

    /// A receiver with the callbacks.
    package init(
        text: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Void,
        batchEnded: @escaping @Sendable () -> ReadDelivery,
        routed: @escaping @Sendable (ConnectionRoute) -> Void = { _ in },
        pong: @escaping @Sendable () -> Void = {}
    ) {
        self.text = text
        self.batchEnded = batchEnded
        self.routed = routed
        self.pong = pong
    }

    /// A receiver whose reads report nothing delivered (a consumer with no buffers of its own).
    package init(
        text: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Void,
        batchEnded: @escaping @Sendable () -> Void
    ) {
        self.init(
            text: text,
            batchEnded: {
                batchEnded()
                return ReadDelivery()
            })
    }
}

/// A connection that can ask its peer for a WebSocket pong: what the client's checks probe with, since every
/// RFC 6455 endpoint must answer a ping (§5.5.2), Rails and AnyCable alike. `SocketTransport`'s and
/// `URLSessionTransport`'s connections are; the pong goes to ``TextReceiver/pong``.
package protocol PingingConnection: WebSocketConnection {
    /// Sends a ping frame; `false` when the connection is not open (nothing sent).
    func sendPing() -> Bool
}

/// How one connection attempt reaches its server, as ``TextReceiver/routed`` reports it: what the client logs as
/// `transport_route`. It holds a proxy's host and port only, never its credentials.
package enum ConnectionRoute: Sendable, Hashable {
    /// No proxy applies.
    case direct
    /// A proxy applies, but its bypass list (or `no_proxy`) names the server: directly.
    case bypassed
    /// Through the HTTP proxy at `host` and `port`.
    case proxy(host: String, port: UInt16)
}

/// What one network read delivered to the consumers' buffers, as the receiver reports it.
package struct ReadDelivery: Sendable, Equatable {
    /// The most messages handed to one subscription's buffers at once.
    package var largestHandOver = 0
    /// The messages handed over, to any subscription.
    package var handedOver = 0

    /// A hand-over this large makes the I/O thread yield.
    package static let burst = 64
    /// So many messages handed over since the last yield, however spread, make it yield too.
    package static let yieldEvery = 1_024

    package init(largestHandOver: Int = 0, handedOver: Int = 0) {
        self.largestHandOver = largestHandOver
        self.handedOver = handedOver
    }

    /// Whether the I/O thread should give its core away before reading more, given `handed`, the messages
    /// handed over since it last yielded (this read's included; reset to 0 when this says yes).
    ///
    /// Where the I/O thread shares a core with the consumers (one core, or a pinned process) it would
    /// otherwise read ahead for a whole time slice, and a consumer would face thousands of messages (held, or
    /// dropped beyond `messageBufferSize`) instead of one read's worth. A burst to one subscription yields at
    /// once; messages spread over many subscriptions yield every ``yieldEvery``, since a yield after every
    /// read that reaches many subscriptions costs more than it saves. Where the consumers run on other cores,
    /// the yield returns at once.
    package func shouldYield(since handed: inout Int) -> Bool {
        handed += handedOver
        guard largestHandOver >= Self.burst || handed >= Self.yieldEvery else { return false }
        handed = 0
        return true
    }
}

extension TextReceiver {
    /// `handler`, except that `.text` events go to this receiver, each as a read of one message: how a
    /// transport that delivers `.text` events (`URLSessionTransport`, `FakeTransport`, your own) feeds the
    /// same delivery path as `SocketTransport`.
    package func adapting(
        _ handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> @Sendable (WebSocketEvent) -> Void {
        let receiver = self
        return { event in
            guard case .text(var message) = event else { return handler(event) }
            message.withUTF8 { receiver.text($0) }  // a String is valid UTF-8
            _ = receiver.batchEnded()  // no I/O thread of ours to yield
        }
    }
}
