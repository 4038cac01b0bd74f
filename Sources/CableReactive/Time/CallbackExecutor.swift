import Dispatch
import Signals

/// Where the client runs code it does not own (state observers, message observers): a serial queue, or
/// the scheduler's ``CableScheduler/perform(_:)``. Never the network thread, never under the client's lock.
///
/// Its ``lane`` orders every observer that runs here, across the client's signals: what the client publishes
/// reaches them in the order it was published. A queue's lane is the one every observer on that queue shares, so
/// an app observer that names the callback queue itself is in the same order.
struct CallbackExecutor: Sendable {
    let lane: DeliveryLane

    init(_ queue: DispatchQueue) {
        lane = DeliveryLane.serving(queue)
    }

    init(_ scheduler: any CableScheduler) {
        lane = DeliveryLane(submit: { work in scheduler.perform(work) })
    }
}
