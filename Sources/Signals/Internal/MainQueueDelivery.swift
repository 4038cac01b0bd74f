import Dispatch

/// How an observer's drain reaches its queue: `queue.async`, except that a drain for the main queue that starts
/// on the main queue runs at once. So an observer on the main queue (`observe(on: .main)`, `on: DispatchQueue.main`)
/// sees a change made on the main actor before that change returns, as an observer without a queue sees one made
/// on its thread, instead of a turn of the main queue later: a SwiftUI view reads it in the same transaction, and a
/// main-actor test or preview that drives the source sees it without waiting.
///
/// Order is the observer box's: a drain starts only when none is running or posted, so a value sent on the main
/// queue while an earlier drain is posted waits for that drain, behind the values before it.
package func drainSubmit(on queue: DispatchQueue) -> @Sendable (@escaping @Sendable () -> Void) -> Void {
    if MainQueueMark.isMain(queue) {
        return { work in
            if MainQueueMark.isCurrent {
                work()
            } else {
                DispatchQueue.main.async(execute: work)
            }
        }
    }
    return { work in queue.async(execute: work) }
}

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
