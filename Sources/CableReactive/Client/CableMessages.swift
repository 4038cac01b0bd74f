import Dispatch
import Signals

/// A subscription's messages: an `AsyncSequence` and a Signals `Signal` over its bounded buffer.
///
/// Messages wait in the subscription's buffer (``CableOptions/messageBufferSize``, newest kept) until
/// consumed, so nothing is lost between subscribing and starting a loop. One consumer at a time: a second,
/// concurrent loop or observer ends at once (and logs a WARN `concurrent_collection`); once the first one
/// ends, a new loop resumes from the buffer.
///
/// ```swift
/// for await message in subscription.messages {
///     print(message["text"]?.stringValue ?? "")
/// }
/// ```
///
/// Threading: a loop runs on its own task. An observer runs on the queue it names, or on the client's
/// callback queue; never on the network thread, so a slow consumer never delays the client.
/// Lifetime: the sequence ends when the subscription is unsubscribed or the client closes.
public struct CableMessages<Element: Sendable>: AsyncSequence, Signal {
    let buffer: MessageBuffer
    let callbacks: CallbackExecutor
    let transform: @Sendable (JSONValue) -> Element?

    /// How many messages the subscription's buffer has dropped because it was full.
    public var droppedCount: Int { buffer.droppedCount }

    /// Starts reading the subscription's buffer; use one loop per sequence (a single consumer).
    public func makeAsyncIterator() -> Iterator {
        Iterator(consumer: Consumer(buffer: buffer), transform: transform)
    }

    /// The iterator of one loop; iterate from one task.
    public struct Iterator: AsyncIteratorProtocol {
        @usableFromInline let consumer: Consumer
        @usableFromInline let transform: @Sendable (JSONValue) -> Element?

        // Inlinable so that a buffered message is taken without an async call: each call into a nonisolated
        // async function hops executors (swift_task_switch), which cost more than the message's own work.

        /// The next buffered message, waiting for one; `nil` once the subscription has ended and the buffer is empty.
        @inlinable
        public mutating func next() async -> Element? {
            guard let id = consumer.id else { return nil }
            while true {
                let message: JSONValue?
                if let ready = consumer.buffer.poll(id) {
                    message = ready.message
                } else {
                    message = await consumer.buffer.next(for: id)
                }
                guard let message else { return nil }
                if let element = transform(message) { return element }
            }
        }
    }

    /// Observes messages as they arrive; see `Signal.observeEvents(on:buffering:_:)` in Signals.
    public func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) -> Observation {
        let transform = transform
        let id = buffer.attach(
            executor: queue.map(CallbackExecutor.init) ?? callbacks,
            deliver: { message in
                if let element = transform(message) { handler(.value(element)) }
            },
            finish: { handler(.finished) }
        )
        guard let id else {
            handler(.finished)
            return Observation(cancel: {})
        }
        let buffer = buffer
        return Observation(cancel: { buffer.release(id) }, droppedCount: { buffer.droppedCount })
    }

    /// Holds the consumer slot for one iterator, and gives it back when the iterator is released.
    @usableFromInline
    final class Consumer: Sendable {
        @usableFromInline let buffer: MessageBuffer
        @usableFromInline let id: UInt64?

        init(buffer: MessageBuffer) {
            self.buffer = buffer
            id = buffer.claim()
        }

        deinit {
            if let id { buffer.release(id) }
        }
    }
}

@available(*, unavailable)
extension CableMessages.Iterator: Sendable {}
