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
    /// Called after the messages of one network read, so a consumer can publish them in one go.
    package var batchEnded: @Sendable () -> Void

    /// A receiver with the two callbacks.
    package init(
        text: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Void,
        batchEnded: @escaping @Sendable () -> Void
    ) {
        self.text = text
        self.batchEnded = batchEnded
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
            receiver.batchEnded()
        }
    }
}
