import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that can hand text messages over as UTF-8 bytes, and report the end of each network read.
///
/// The client's hot path: bytes skip a `String` per message (the client parses JSON from bytes anyway),
/// and the end-of-read report lets it wake a waiting `for await` loop once per read instead of once per
/// message (a read holds hundreds of messages from a fast server; waking a task costs more than handling
/// a message). Transports without it (custom ones, `URLSessionTransport`, the fake) deliver `.text`
/// events and the consumer is woken per message: correct, only slower.
package protocol BatchReportingTransport: WebSocketTransport {
    /// ``WebSocketTransport/connect(request:protocols:handler:)``, except that text messages go to
    /// `receiver` instead of `handler` as `.text` events. Both run on the same thread, serially.
    func connect(
        request: URLRequest,
        protocols: [String],
        receiver: TextReceiver,
        handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection
}

/// Where a ``BatchReportingTransport`` delivers text messages.
package struct TextReceiver: Sendable {
    /// Gets each text message's validated UTF-8, in order; the bytes are valid only during the call.
    package var text: @Sendable (UnsafeBufferPointer<UInt8>) -> Void
    /// Called after the messages of one network read.
    package var batchEnded: @Sendable () -> Void

    package init(
        text: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Void,
        batchEnded: @escaping @Sendable () -> Void
    ) {
        self.text = text
        self.batchEnded = batchEnded
    }
}

/// The subscriptions whose waiting consumer is due a wake-up at the end of the current network read.
///
/// `@unchecked Sendable`: `pending` is touched only by one connection's event handler and its
/// `batchEnded` callback, which the transport calls serially on its one I/O thread.
final class DeliveryBatch: @unchecked Sendable {
    private var pending: [MessageBuffer] = []

    func add(_ buffer: MessageBuffer) {
        pending.append(buffer)
    }

    /// Wakes every consumer a message was deferred for.
    func flush() {
        guard !pending.isEmpty else { return }
        let buffers = pending
        pending.removeAll(keepingCapacity: true)
        for buffer in buffers { buffer.wake() }
    }
}
