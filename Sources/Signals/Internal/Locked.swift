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
    // Guarded by `lock`: `state` is only touched inside `withLock`.
    @usableFromInline var state: State
    @usableFromInline let lock = NSLock()

    @inlinable
    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @inlinable
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
