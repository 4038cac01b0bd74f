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
/// A `Locked` is a reference: copies share one value and one lock. The object header, the value and the
/// mutex live in one allocation (a `ManagedBuffer`), so taking the lock and touching the value cost one
/// cache miss, not three: the client touches one lock per subscription per network read, and with a
/// thousand subscriptions the separate lock object and value allocation of each missed the cache. The
/// mutex never moves, as POSIX requires, because the buffer's elements stay where they were allocated.
///
/// Inlinable, so that CableReactive's hot paths get it specialized for their own state types instead of
/// calling the generic version (which looks up type metadata at run time on every call).
@usableFromInline
package struct Locked<State>: @unchecked Sendable {
    // Guarded by the mutex in the buffer's elements: the value (the buffer's header) is only touched inside
    // `withLock`.
    @usableFromInline let storage: LockedStorage<State>

    @inlinable
    package init(_ state: State) {
        storage = LockedStorage.make(state)
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @inlinable
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        try storage.withUnsafeMutablePointers { value, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&value.pointee)
        }
    }
}

/// The allocation behind a ``Locked``: the value as the header, one mutex as the only element.
@usableFromInline
final class LockedStorage<State>: ManagedBuffer<State, pthread_mutex_t> {
    @inlinable
    static func make(_ state: State) -> LockedStorage<State> {
        let buffer = create(minimumCapacity: 1) { _ in state }
        buffer.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            _ = pthread_mutex_init(mutex, nil)
        }
        // `create` returns a ManagedBuffer typed as the class it was called on.
        return unsafeDowncast(buffer, to: LockedStorage<State>.self)
    }

    // The header (the value) is a stored property of ManagedBuffer and is destroyed with it; the element
    // (the mutex) is ours to destroy.
    @inlinable
    deinit {
        withUnsafeMutablePointerToElements { mutex in
            _ = pthread_mutex_destroy(mutex)
            _ = mutex.deinitialize(count: 1)
        }
    }
}
