/// The values of a ``Signal`` as an `AsyncSequence`; each loop gets its own buffered iterator.
///
/// The iterator starts observing when it is created (when a `for await` loop begins) and stops when it is
/// released, when the signal finishes, or when the iterating task is cancelled (the loop then ends). No
/// `Task` is started per value: values wait in the iterator's buffer, governed by its ``BufferingPolicy``.
///
/// ```swift
/// for await state in client.state.values {
///     print(state)
/// }
/// ```
public struct SignalValues<Base: Signal>: AsyncSequence, Sendable {
    /// The values the base signal emits.
    public typealias Element = Base.Element

    let base: Base
    let buffering: BufferingPolicy

    /// Starts observing the base signal; observation ends when the iterator is released or the loop ends.
    public func makeAsyncIterator() -> Iterator {
        Iterator(consumer: PullConsumer(base, buffering: buffering))
    }

    /// The iterator of one loop. It is not `Sendable`: iterate from one task.
    public struct Iterator: AsyncIteratorProtocol {
        @usableFromInline let consumer: PullConsumer<Element>

        init(consumer: PullConsumer<Element>) {
            self.consumer = consumer
        }

        /// Returns the next value, waiting for one if the buffer is empty, or `nil` once the signal has
        /// finished or the task is cancelled.
        #if compiler(>=6.2)
            /// Runs on the caller's executor (`nonisolated(nonsending)`): a buffered value is taken without a hop.
            @inlinable
            nonisolated(nonsending) public mutating func next() async -> Element? {
                await consumer.next()
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
            await consumer.next()
        }

        /// How many values this iterator's buffer has dropped.
        public var droppedCount: Int { consumer.box.droppedCount }
    }
}

@available(*, unavailable)
extension SignalValues.Iterator: Sendable {}

extension Signal {
    /// The values as an `AsyncSequence` whose iterators keep every value they have not consumed yet.
    public var values: SignalValues<Self> { SignalValues(base: self, buffering: .unbounded) }

    /// The values as an `AsyncSequence` whose iterators buffer according to `buffering`.
    public func values(buffering: BufferingPolicy) -> SignalValues<Self> {
        SignalValues(base: self, buffering: buffering)
    }

    /// Waits for the first value that satisfies `predicate` and returns it.
    ///
    /// It runs on the caller's actor (`isolation` defaults to it), so `predicate` need not be `Sendable` and the
    /// call compiles in actor-isolated code such as a `@MainActor` view model:
    ///
    /// ```swift
    /// let connected = await client.state.first { $0 == .connected }
    /// ```
    ///
    /// - Returns: the value, or `nil` if the signal finishes first or the task is cancelled.
    public func first(
        isolation: isolated (any Actor)? = #isolation,
        where predicate: (Element) throws -> Bool
    ) async rethrows -> Element? {
        var iterator = values.makeAsyncIterator()
        while let value = await iterator.next(isolation: isolation) {
            if try predicate(value) { return value }
        }
        return nil
    }

    /// Waits for the first value and returns it; `nil` if the signal finishes first or the task is cancelled.
    public func first(isolation: isolated (any Actor)? = #isolation) async -> Element? {
        await first(isolation: isolation) { _ in true }
    }
}

/// One async consumer of a signal: a pull ``ObserverBox`` registered with the signal, and the token that
/// keeps it registered (and keeps alive whatever the signal's chain holds) until the consumer is released.
///
/// An ``EventStream`` takes the box directly, so each value is buffered once and a send wakes the loop once
/// however many values it brings. Any other signal feeds the box from an observation on the sending thread.
@usableFromInline
package final class PullConsumer<Element: Sendable>: Sendable {
    @usableFromInline package let box: ObserverBox<Element>
    @usableFromInline let observation: SignalObservation
    /// What the consumer keeps alive (a subscription's handle): held here rather than by a wrapping
    /// observation, which would cost a lock and two closures per loop.
    private let owner: (any AnyObject & Sendable)?

    /// Registers a pull box with `base`.
    package init(_ base: some Signal<Element>, buffering: BufferingPolicy) {
        let box = ObserverBox<Element>(pulling: buffering)
        self.box = box
        // The library's own sources take the box directly: each value is buffered once, and a loop is woken when the
        // value is written, not one hop later (a view's queue for observers is not the loop's).
        // A view's owner (what a library ties to the use of the view) is kept by the loop, as by an observation.
        if let view = base as? EventStream<Element> {
            observation = view.storage.attach(box)
            owner = view.owner
        } else if let stream = (base as? MutableEventStream<Element>)?.storage {
            observation = stream.attach(box)
            owner = nil
        } else if let view = base as? StateValue<Element> {
            observation = view.storage.attach(box)
            owner = view.owner
        } else if let state = (base as? MutableStateValue<Element>)?.storage {
            observation = state.attach(box)
            owner = nil
        } else {
            observation = base.observeEvents(on: nil, buffering: .unbounded) { event in box.receive(event) }
            owner = nil
        }
    }

    /// Registers a pull box with the stream behind `storage`; `keeping` stays alive as long as the consumer.
    package init(
        _ storage: StreamStorage<Element>, buffering: BufferingPolicy, keeping owner: (any AnyObject & Sendable)?
    ) {
        box = ObserverBox(pulling: buffering)
        observation = storage.attach(box)
        self.owner = owner
    }

    deinit { observation.cancel() }

    /// The next value, waiting if none is buffered; nil at the end, after cancellation, or when the task is
    /// cancelled (which also ends the observation). A buffered value is taken without suspending.
    #if compiler(>=6.2)
        /// Runs on the caller's executor (`nonisolated(nonsending)`), so taking a buffered value hops
        /// nowhere: a plain nonisolated async function switches to the global executor on every call, and a
        /// loop calls this once per message.
        @inlinable
        nonisolated(nonsending) package func next() async -> Element? {
            while true {
                if let taken = takeBuffered() { return taken }
                await box.wait()
            }
        }
    #else
        @inlinable
        package func next() async -> Element? {
            while true {
                if let taken = takeBuffered() { return taken }
                await box.wait()
            }
        }
    #endif

    /// A buffered value (`.some(value)`), the end (`.some(nil)`, which also ends the observation), or `nil`
    /// when nothing is buffered.
    @inlinable
    func takeBuffered() -> Element?? {
        switch box.poll() {
        case .element(let element): return .some(element)
        case .end:
            observation.cancel()  // stop observing, and let go of what the chain holds
            return .some(nil)
        case .empty: return nil
        }
    }
}
