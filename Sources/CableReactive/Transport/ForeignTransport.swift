import Dispatch
import Signals

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A ``WebSocketTransport`` this package did not write, as the client uses it: wrapped once, when the
/// client is made.
///
/// - Its `.text` events feed the client's ``TextReceiver``, each as a read of one message.
/// - A call the client makes into one of its connections from inside that connection's own event delivery,
///   on the delivering thread (the subscribes that answer a welcome, the pong that answers a ping), is
///   deferred to a serial queue and made after the delivery returns, in order with the calls around it. So a
///   transport may hold a lock of its own, even a non-recursive one, while it delivers, and take that same
///   lock in `send` and `close`. A deferred `send` reports `true` (queued); a call from any other thread goes
///   straight through unless deferred calls are still waiting, which it then follows.
struct ForeignTransport: NativeTransport {
    let base: any WebSocketTransport

    init(_ base: any WebSocketTransport) {
        self.base = base
    }

    func connect(
        request: CableRequest, protocols: [String], handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection {
        base.connect(request: request, protocols: protocols, handler: handler)
    }

    func connect(
        request: CableRequest, protocols: [String], receiver: TextReceiver,
        handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection {
        let connection = DeferringConnection()
        let deliver = receiver.adapting(handler)
        let base = base.connect(request: request, protocols: protocols) { event in
            connection.delivering { deliver(event) }
        }
        connection.attach(base)
        return connection
    }
}

/// A foreign connection seen through ``ForeignTransport``'s rule: calls from inside its delivery wait for it.
final class DeferringConnection: WebSocketConnection {
    private enum Call: Sendable {
        case send(String)
        case close(WebSocketCloseCode, String)
    }

    private struct State: Sendable {
        var base: (any WebSocketConnection)?
        /// The thread delivering an event right now, if any.
        var deliveringThread: UInt?
        var pending: [Call] = []
        /// Whether the queue is making the pending calls.
        var flushing = false
    }

    private let state = Locked(State())
    private static let queue = DispatchQueue(label: "CableReactive.foreign-transport")

    /// Runs one event's delivery, marking this thread as the connection's delivering thread meanwhile.
    func delivering(_ body: () -> Void) {
        let thread = Self.currentThread
        let outer = state.withLock { state in
            defer { state.deliveringThread = thread }
            return state.deliveringThread
        }
        body()
        state.withLock { $0.deliveringThread = outer }
    }

    /// The wrapped connection, once `connect` returned it; calls made before wait for it.
    func attach(_ base: any WebSocketConnection) {
        let flush = state.withLock { state -> Bool in
            state.base = base
            return Self.startFlush(&state)
        }
        if flush { Self.queue.async { self.flush() } }
    }

    @discardableResult
    func send(text: String) -> Bool {
        guard let base = direct(.send(text)) else { return true }
        return base.send(text: text)
    }

    func close(code: WebSocketCloseCode, reason: String) {
        direct(.close(code, reason))?.close(code: code, reason: reason)
    }

    /// The connection to call at once, or nil when `call` was deferred.
    private func direct(_ call: Call) -> (any WebSocketConnection)? {
        let thread = Self.currentThread
        let (base, flush) = state.withLock { state -> ((any WebSocketConnection)?, Bool) in
            if let base = state.base, state.deliveringThread != thread, state.pending.isEmpty, !state.flushing {
                return (base, false)
            }
            state.pending.append(call)
            return (nil, Self.startFlush(&state))
        }
        if flush { Self.queue.async { self.flush() } }
        return base
    }

    /// Whether the caller should start the queue's flush (calls wait, the connection is known, none runs).
    private static func startFlush(_ state: inout State) -> Bool {
        guard state.base != nil, !state.pending.isEmpty, !state.flushing else { return false }
        state.flushing = true
        return true
    }

    /// Makes the pending calls in order, one at a time, with no lock held.
    private func flush() {
        while true {
            let next = state.withLock { state -> (Call, any WebSocketConnection)? in
                guard let base = state.base, !state.pending.isEmpty else {
                    state.flushing = false
                    return nil
                }
                return (state.pending.removeFirst(), base)
            }
            guard let (call, base) = next else { return }
            switch call {
            case .send(let text): base.send(text: text)
            case .close(let code, let reason): base.close(code: code, reason: reason)
            }
        }
    }

    private static var currentThread: UInt {
        #if canImport(Glibc)
            UInt(pthread_self())
        #else
            UInt(bitPattern: pthread_self())
        #endif
    }
}
