import Dispatch
import Signals

/// A subscription's messages: a multicast Signals `Signal` and an `AsyncSequence`.
///
/// Any number of `for await` loops and observers may run at once; each gets every message from the moment
/// it starts, in order, through its own buffer. A loop's buffer keeps the newest
/// ``CableOptions/messageBufferSize`` messages; an observer's buffer is the policy it asks for, capped at
/// that size (the default `.unbounded` means `.bufferingNewest(messageBufferSize)`), so no buffer is ever
/// unbounded. Messages that arrive while nobody consumes (between `subscribe` and the first loop, or
/// between one loop and the next) are held, the newest `messageBufferSize` of them, for the next consumer
/// that starts; a consumer that starts while another runs sees only later messages.
///
/// ```swift
/// let room = try client.subscribe(["channel": "ChatChannel", "room": "lobby"])
/// Task { for await message in room.messages { print("list:", message) } }
/// badge = room.messages.observe(on: .main) { [weak self] _ in self?.unread += 1 }  // at the same time, in a @MainActor model
/// ```
///
/// Threading: a loop runs on its own task. An observer runs on the queue it names, or on the client's
/// callback queue; never on the network thread, so a slow consumer never delays the client. Operators
/// (`map`, `filter`, `merge`, ...) run in their observer's context.
///
/// Lifetime: a loop, an observation, or this value itself keeps the subscription alive, as its handle does
/// (the end of a chain holds the chain). The sequence ends when the handle is unsubscribed or the client
/// closes.
public struct CableMessages<Element: Sendable>: AsyncSequence, Signal {
    let storage: StreamStorage<MessageJSON>
    let lease: SubscriptionLease
    /// The typed view's count of messages that did not decode; nil for the untyped ``ChannelSubscription/messages``,
    /// whose consumers read values (and so have their subscription's messages parsed on the I/O thread).
    let undecodable: Locked<Int>?
    let transform: @Sendable (MessageJSON) -> Element?

    init(
        storage: StreamStorage<MessageJSON>, lease: SubscriptionLease, undecodable: Locked<Int>? = nil,
        transform: @escaping @Sendable (MessageJSON) -> Element?
    ) {
        self.storage = storage
        self.lease = lease
        self.undecodable = undecodable
        self.transform = transform
    }

    /// A consumer starts: an untyped one has its subscription's messages parsed from now on (``MessageJSON``).
    private func consumerStarts() {
        guard undecodable == nil else { return }
        lease.engine?.readValues(identifier: lease.identifier, sink: lease.sinkID)
    }

    /// How many messages this handle's consumers have lost: held messages that did not fit while nobody
    /// consumed, and every consumer's buffer overflows. Each observer's own count is its
    /// `SignalObservation.droppedCount`; a loop's is its iterator's ``Iterator/droppedCount``. Shared by the
    /// handle's ``ChannelSubscription/messages`` and every typed view of it.
    public var droppedCount: Int { storage.droppedCount }

    /// How many messages this view's consumers skipped because they did not decode as `Element`: the view that
    /// ``ChannelSubscription/messages(as:decoder:)`` returned, summed over the loops and observers it started
    /// (each consumer decodes each message it gets, so a message that two of them skip counts twice). Each
    /// call of `messages(as:)` gives a view with a count of its own, from 0; always 0 for the untyped
    /// ``ChannelSubscription/messages``, where every message is delivered.
    ///
    /// ```swift
    /// let chats = room.messages(as: Chat.self)
    /// for await chat in chats { show(chat) }
    /// if chats.undecodableCount > 0 { print("skipped", chats.undecodableCount, "messages") }
    /// ```
    public var undecodableCount: Int { undecodable?.withLock { $0 } ?? 0 }

    /// These messages as an `AsyncSequence`: the messages themselves, so that `for await m in room.messages.values`
    /// is the same loop as `for await m in room.messages`, woken where the message is written, with no hop through
    /// the callback queue (Signals' generic `values` of a `Signal` would observe on that queue).
    public var values: CableMessages<Element> { self }

    /// Starts a consumer with a buffer of the newest ``CableOptions/messageBufferSize`` messages.
    public func makeAsyncIterator() -> Iterator {
        consumerStarts()
        let policy = BufferingPolicy.bufferingNewest(lease.bufferSize)
        return Iterator(consumer: PullConsumer(storage, buffering: policy, keeping: lease), transform: transform)
    }

    /// The iterator of one loop; iterate from one task.
    public struct Iterator: AsyncIteratorProtocol {
        @usableFromInline let consumer: PullConsumer<MessageJSON>
        @usableFromInline let transform: @Sendable (MessageJSON) -> Element?

        init(consumer: PullConsumer<MessageJSON>, transform: @escaping @Sendable (MessageJSON) -> Element?) {
            self.consumer = consumer
            self.transform = transform
        }

        // Inlinable so that a buffered message is taken without an async call: each call into a nonisolated
        // async function hops executors (swift_task_switch), which cost more than the message's own work.

        /// The next message, waiting for one; `nil` once the subscription has ended and the buffer is empty,
        /// or when the task is cancelled.
        #if compiler(>=6.2)
            /// Runs on the caller's executor (`nonisolated(nonsending)`): a buffered message is taken without a
            /// hop, in a loop on the main actor as in one on the global executor.
            @inlinable
            nonisolated(nonsending) public mutating func next() async -> Element? {
                while let message = await consumer.next() {
                    if let element = transform(message) { return element }
                }
                return nil
            }
        #else
            @inlinable
            public mutating func next() async -> Element? {
                await next(isolation: nil)
            }
        #endif

        /// ``next()`` from the caller's actor: what a `for await` loop in actor-isolated code (a `@MainActor`
        /// view model) calls, so that the iterator never leaves that actor.
        @inlinable
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
            while let message = await consumer.next() {
                if let element = transform(message) { return element }
            }
            return nil
        }

        /// How many messages this loop's buffer has dropped because the loop fell behind.
        public var droppedCount: Int { consumer.box.droppedCount }
    }

    /// Observes messages as they arrive; see `Signal.observeEvents(on:buffering:_:)` in Signals. `buffering` is
    /// capped at ``CableOptions/messageBufferSize``; without a `queue`, `handler` runs on the client's callback
    /// queue.
    public func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Element>) -> Void
    ) -> SignalObservation {
        consumerStarts()
        let transform = transform
        let lane = queue.map(DeliveryLane.serving) ?? lease.callbacks.lane
        let observation = storage.observeEvents(lane: lane, buffering: buffering.capped(at: lease.bufferSize)) {
            event in
            switch event {
            case .value(let message): if let element = transform(message) { handler(.value(element)) }
            case .finished: handler(.finished)
            }
        }
        let lease = lease
        return SignalObservation(
            cancel: {
                observation.cancel()
                _ = lease  // the observation keeps the subscription
            }, droppedCount: { observation.droppedCount })
    }
}

@available(*, unavailable)
extension CableMessages.Iterator: Sendable {}
