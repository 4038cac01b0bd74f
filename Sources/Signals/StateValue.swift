import Dispatch

/// The shared storage of a ``MutableStateValue`` and its read-only ``StateValue`` views. A library that only
/// hands out views (one per subscription handle, say) may hold the storage itself: one object and one lock
/// per state, instead of a ``MutableStateValue`` and its ``MutableStateValue/readOnly`` view besides.
@usableFromInline
package final class StateStorage<Value: Sendable>: ObserverSource {
    @usableFromInline
    struct State {
        @usableFromInline var value: Value
        @usableFromInline var observers = ObserverList<Value>()

        @inlinable
        init(value: Value) {
            self.value = value
        }
    }

    @usableFromInline let state: Locked<State>
    @usableFromInline let isDuplicate: (@Sendable (Value, Value) -> Bool)?

    package init(_ value: Value, isDuplicate: (@Sendable (Value, Value) -> Bool)?) {
        state = Locked(State(value: value))
        self.isDuplicate = isDuplicate
    }

    package var value: Value { state.withLock { $0.value } }

    /// A read-only view that keeps `owner` alive for as long as the view, or any observation or loop made
    /// through it, exists: how a library ties the lifetime of what it manages to the use of its state. An observer
    /// that names no queue runs on `lane` when one is given (a library whose writes happen on threads that must not
    /// run its users' code), else on the writing thread.
    package func view(keeping owner: (any AnyObject & Sendable)?, lane: DeliveryLane? = nil) -> StateValue<Value> {
        StateValue(storage: self, keeping: owner, lane: lane)
    }

    /// Inlinable, so that a module writing a state of a concrete type gets the write and its observers' drains
    /// specialized (see ``Wake``).
    @inlinable
    package func update<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        let (result, drains) = try state.withLock { state -> (R, WakeList) in
            let old = state.value
            let result = try body(&state.value)
            if let isDuplicate, isDuplicate(old, state.value) { return (result, WakeList()) }
            return (result, state.observers.enqueue(state.value))
        }
        drains.run()
        return result
    }

    func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Value>) -> Void
    ) -> SignalObservation {
        attach(ObserverBox(queue: queue, buffering: buffering, handler: handler))
    }

    /// Registers `box` (a push box, or an async loop's pull box): it gets the current value, then every change.
    package func attach(_ box: ObserverBox<Value>) -> SignalObservation {
        // The current value goes in under the same lock as the registration, so the observer sees it
        // first and then every later change, with nothing missed or repeated.
        let (id, wake) = state.withLock { state in
            (state.observers.insert(box), box.enqueue(state.value))
        }
        wake.run()
        box.register(with: self, id: id)
        return SignalObservation(box: box)
    }

    @usableFromInline
    func removeObserver(id: UInt64) {
        state.withLock { $0.observers.remove(id: id) }
    }
}

/// A read-only view of a value that changes over time; observers get the current value first.
///
/// Apps receive `StateValue`s (for example a client's connection state); the owner keeps the
/// ``MutableStateValue`` that writes it.
///
/// ```swift
/// let online = MutableStateValue(false)
/// let view: StateValue<Bool> = online.readOnly
/// let token = view.observe { print("online:", $0) }   // Prints: online: false
/// online.value = true                                 // Prints: online: true
/// ```
///
/// Threading: see ``Signal``. Observers run on the writer's thread unless they name a queue.
/// Lifetime: a view keeps the storage alive; observations do not.
public final class StateValue<Value: Sendable>: Signal {
    /// The type of the held value.
    public typealias Element = Value

    let storage: StateStorage<Value>
    /// What this view keeps alive, as does every observation made through it.
    let owner: (any AnyObject & Sendable)?
    /// Where an observer that names no queue runs; nil: on the writing thread.
    let lane: DeliveryLane?

    init(storage: StateStorage<Value>, keeping owner: (any AnyObject & Sendable)? = nil, lane: DeliveryLane? = nil) {
        self.storage = storage
        self.owner = owner
        self.lane = lane
    }

    /// The current value.
    public var value: Value { storage.value }

    /// Observes the current value at once, then every change; see ``Signal/observeEvents(on:buffering:_:)``.
    /// A view a library hands out may run observers that name no queue on the library's own queue (a client's
    /// callback queue, say); its documentation says so.
    public func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Value>) -> Void
    ) -> SignalObservation {
        let lane = queue.map(DeliveryLane.serving) ?? lane
        return storage.attach(ObserverBox(lane: lane, buffering: buffering, handler: handler)).keeping(owner)
    }
}

/// The owner's side of a ``StateValue``: a value that can be written and observed.
///
/// Setting a value notifies observers unless it is a duplicate. For `Equatable` values a duplicate is an
/// equal value, so setting `value` to what it already holds notifies nobody; pass `isDuplicate` to choose
/// another rule. Without `Equatable` and `isDuplicate`, every write notifies.
///
/// ```swift
/// let gate = MutableStateValue(false)
/// gate.value = true
/// gate.update { $0.toggle() }        // atomic read-modify-write
/// ```
///
/// Threading: writes may come from any thread; observers follow the rules of ``Signal``.
public final class MutableStateValue<Value: Sendable>: Signal {
    /// The type of the held value.
    public typealias Element = Value

    @usableFromInline package let storage: StateStorage<Value>

    /// The read-only view to hand to other code.
    public let readOnly: StateValue<Value>

    /// Creates a state whose every write notifies, or whose duplicate writes are skipped per `isDuplicate`.
    public convenience init(_ value: Value, isDuplicate: (@Sendable (Value, Value) -> Bool)? = nil) {
        self.init(storage: StateStorage(value, isDuplicate: isDuplicate))
    }

    private init(storage: StateStorage<Value>) {
        self.storage = storage
        readOnly = StateValue(storage: storage)
    }

    /// The current value. Setting it notifies observers unless the new value is a duplicate.
    public var value: Value {
        get { storage.value }
        @inlinable set { storage.update { $0 = newValue } }
    }

    /// Changes the value in place, atomically with respect to other writers, and returns `body`'s result.
    @inlinable
    @discardableResult
    public func update<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        try storage.update(body)
    }

    /// Observes the current value at once, then every change; see ``Signal/observeEvents(on:buffering:_:)``.
    public func observeEvents(
        on queue: DispatchQueue?,
        buffering: BufferingPolicy,
        _ handler: @escaping @Sendable (SignalEvent<Value>) -> Void
    ) -> SignalObservation {
        storage.observeEvents(on: queue, buffering: buffering, handler)
    }
}

extension MutableStateValue where Value: Equatable {
    /// Creates a state that skips writes equal to the current value.
    public convenience init(_ value: Value) {
        self.init(storage: StateStorage(value))
    }
}

extension StateStorage where Value: Equatable {
    /// A storage that skips writes equal to the current value.
    package convenience init(_ value: Value) {
        self.init(value, isDuplicate: { $0 == $1 })
    }
}
