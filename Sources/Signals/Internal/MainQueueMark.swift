import Dispatch

/// Tells whether code runs on the main queue: a queue-specific value set on it. (`Thread.isMainThread` is not the
/// test: under a process that parks its main thread in `dispatch_main()`, as `swift test` on Linux does, worker
/// threads drain the main queue.)
package enum MainQueueMark {
    private static let key = DispatchSpecificKey<Bool>()
    private static let marked: Bool = {
        DispatchQueue.main.setSpecific(key: key, value: true)
        return true
    }()

    package static var isCurrent: Bool {
        _ = marked
        return DispatchQueue.getSpecific(key: key) == true
    }

    /// Whether `queue` is the main queue. Not `===`: on Linux every `DispatchQueue.main` is a new wrapper.
    static func isMain(_ queue: DispatchQueue) -> Bool {
        _ = marked
        return queue.getSpecific(key: key) == true
    }
}
