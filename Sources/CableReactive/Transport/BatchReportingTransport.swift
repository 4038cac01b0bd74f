import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A transport that also reports when it has delivered everything it read from the network at once.
///
/// The client uses the report to wake a waiting `for await` loop once per network read rather than once
/// per message: with a fast server, a read holds hundreds of messages, and waking a task costs more than
/// handling a message. Transports without it (custom ones, `URLSessionTransport`, the fake) wake the
/// consumer per message, which is correct, only slower.
package protocol BatchReportingTransport: WebSocketTransport {
    /// ``WebSocketTransport/connect(request:protocols:handler:)``, plus `batchEnded`, called on the same
    /// thread as `handler` (never concurrently with it) after the `.text` events of one network read.
    func connect(
        request: URLRequest,
        protocols: [String],
        handler: @escaping @Sendable (WebSocketEvent) -> Void,
        batchEnded: @escaping @Sendable () -> Void
    ) -> any WebSocketConnection
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
