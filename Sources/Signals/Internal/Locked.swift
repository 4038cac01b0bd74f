import Foundation

/// A value guarded by one lock: the package's only `@unchecked Sendable` primitive.
///
/// `Synchronization.Mutex` needs iOS 18 and macOS 15, and this package supports iOS 13, so the lock is
/// an `NSLock`, which costs the same as a pthread mutex on Linux and exists on every platform we target.
/// Every read and write of the value goes through ``withLock(_:)``; never call code you do not own
/// (observers, user callbacks) inside the closure.
///
/// Inlinable, so that CableReactive's hot paths get it specialized for their own state types instead of
/// calling the generic version (which looks up type metadata at run time on every call).
package final class Locked<State>: @unchecked Sendable {
    // Guarded by `lock`: the value is only touched inside `withLock`. It lives in its own allocation rather
    // than in a stored `var`, whose every `inout` access a release build checks for exclusivity at run time
    // (swift_beginAccess); the lock already makes access exclusive.
    @usableFromInline let value: UnsafeMutablePointer<State>
    @usableFromInline let lock = NSLock()

    @inlinable
    package init(_ state: State) {
        value = .allocate(capacity: 1)
        value.initialize(to: state)
    }

    @inlinable
    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @inlinable
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value.pointee)
    }
}
