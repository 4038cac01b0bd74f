import Dispatch

/// Where the client runs code it does not own (state observers, message observers): a serial queue, or
/// the scheduler's ``CableScheduler/perform(_:)``. Never the network thread, never under the client's lock.
struct CallbackExecutor: Sendable {
    let submit: @Sendable (@escaping @Sendable () -> Void) -> Void

    init(_ queue: DispatchQueue) {
        submit = { work in queue.async(execute: work) }
    }

    init(_ scheduler: any CableScheduler) {
        submit = { work in scheduler.perform(work) }
    }

    /// Queues `work`; calls made in order run in order.
    func run(_ work: @escaping @Sendable () -> Void) {
        submit(work)
    }
}
