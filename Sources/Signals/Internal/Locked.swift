#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value guarded by one lock: the package's only `@unchecked Sendable` primitive.
///
/// `Synchronization.Mutex` needs iOS 18 and macOS 15, and this package supports iOS 13, so the lock is a
/// pthread mutex, which exists on every platform we target. Every read and write of the value goes through
/// ``withLock(_:)``; never call code you do not own (observers, user callbacks) inside the closure.
///
/// A `Locked` is a reference: copies share one value and one lock. The object header, the mutex and the
/// value live in one allocation (a `ManagedBuffer`), so taking the lock and touching the value cost one
/// cache miss, not three: the client touches one lock per subscription per network read, and with a
/// thousand subscriptions a lock object and a value allocated apart would each miss the cache. The
/// mutex never moves, as POSIX requires, because the buffer's element stays where it was allocated.
///
/// Inlinable, so that CableReactive's hot paths get it specialized for their own state types instead of
/// calling the generic version (which looks up type metadata at run time on every call).
@usableFromInline
package struct Locked<State>: @unchecked Sendable {
    // Guarded by the mutex next to the value: the value is only touched inside `withLock`.
    @usableFromInline let storage: LockedStorage<State>

    @inlinable
    package init(_ state: State) {
        storage = LockedStorage.make(state)
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @inlinable
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try storage.withUnsafeMutablePointerToElements { slot in
            let mutex = UnsafeMutableRawPointer(slot).assumingMemoryBound(to: pthread_mutex_t.self)
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&slot.pointee.value)
        }
    }
}

/// The mutex and the value, side by side in a ``LockedStorage``'s one element.
@usableFromInline
struct LockedSlot<State> {
    /// First, so that the element's address is the mutex's: Swift lays a struct's stored properties out in
    /// declaration order, the first at offset 0 (the ABI's type layout rules).
    @usableFromInline var mutex: pthread_mutex_t
    @usableFromInline var value: State

    @inlinable
    init(value: State) {
        mutex = pthread_mutex_t()
        self.value = value
    }
}

/// The allocation behind a ``Locked``: one element, the mutex and the value. They live in the element, not
/// the header, because the element is reached by pointer arithmetic alone, while the header is a stored
/// property whose every use is a formal access (which the thread sanitizer reports as racing when two
/// threads take the lock at once).
@usableFromInline
final class LockedStorage<State>: ManagedBuffer<Void, LockedSlot<State>> {
    @inlinable
    static func make(_ state: State) -> LockedStorage<State> {
        let buffer = create(minimumCapacity: 1) { _ in }
        buffer.withUnsafeMutablePointerToElements { slot in
            slot.initialize(to: LockedSlot(value: state))
            let mutex = UnsafeMutableRawPointer(slot).assumingMemoryBound(to: pthread_mutex_t.self)
            _ = pthread_mutex_init(mutex, nil)
        }
        // `create` returns a ManagedBuffer typed as the class it was called on.
        return unsafeDowncast(buffer, to: LockedStorage<State>.self)
    }

    @inlinable
    deinit {
        withUnsafeMutablePointerToElements { slot in
            let mutex = UnsafeMutableRawPointer(slot).assumingMemoryBound(to: pthread_mutex_t.self)
            _ = pthread_mutex_destroy(mutex)
            _ = slot.deinitialize(count: 1)
        }
    }
}
