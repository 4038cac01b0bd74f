import Foundation

/// A value guarded by one lock: the package's only `@unchecked Sendable` primitive.
///
/// `Synchronization.Mutex` needs iOS 18 and macOS 15, and this package supports iOS 13, so the lock is
/// an `NSLock`, which costs the same as a pthread mutex on Linux and exists on every platform we target.
/// Every read and write of the value goes through ``withLock(_:)``; never call code you do not own
/// (observers, user callbacks) inside the closure.
package final class Locked<State>: @unchecked Sendable {
    // Guarded by `lock`: `state` is only touched inside `withLock`.
    private var state: State
    private let lock = NSLock()

    package init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @inline(__always)
    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
