import CableReactive
import Signals
import Testing

/// `URLSessionTransport`'s connection logic, run on Linux: the reports URLSession's delegate would make, a
/// `VirtualTimeScheduler` for the end deadline, and effects that record what the transport would do to the task.
@Suite("URLSessionConnectionCore")
struct URLSessionConnectionCoreTests {
    typealias Core = URLSessionConnectionCore
    typealias End = URLSessionTaskEnd

    /// A core and everything it does: events delivered, task cancellations, invalidations, and the work it hands
    /// to the delegate queue (run by ``drainDelegateQueue()``, as the queue would run it).
    final class Harness: Sendable {
        private struct Record {
            var events: [WebSocketEvent] = []
            var cancels: [URLSessionEndRace.TaskCancel] = []
            var invalidations = 0
            var delegateQueue: [@Sendable () -> Void] = []
        }

        let scheduler: VirtualTimeScheduler
        let core: Core
        private let record: Locked<Record>

        init(maxPendingSendBytes: Int = 100, maximumMessageSize: Int = 1 << 20) {
            let scheduler = VirtualTimeScheduler()
            let record = Locked(Record())
            self.scheduler = scheduler
            self.record = record
            let effects = Core.Effects(
                onDelegateQueue: { work in record.withLock { $0.delegateQueue.append(work) } },
                cancelTask: { cancel in record.withLock { $0.cancels.append(cancel) } },
                invalidate: { record.withLock { $0.invalidations += 1 } })
            core = Core(
                maxPendingSendBytes: maxPendingSendBytes, maximumMessageSize: maximumMessageSize,
                scheduler: scheduler, effects: effects
            ) { event in record.withLock { $0.events.append(event) } }
        }

        var events: [WebSocketEvent] { record.withLock { $0.events } }
        var cancels: [URLSessionEndRace.TaskCancel] { record.withLock { $0.cancels } }
        var invalidations: Int { record.withLock { $0.invalidations } }
        var closes: [WebSocketCloseInfo] {
            events.compactMap { event in
                if case .closed(let info) = event { return info }
                return nil
            }
        }

        /// Runs what was handed to the delegate queue, in order.
        func drainDelegateQueue() {
            let work = record.withLock { record in
                defer { record.delegateQueue.removeAll() }
                return record.delegateQueue
            }
            for item in work { item() }
        }

        /// Opens the connection as `didOpenWithProtocol` does.
        func open() {
            core.opened()?(.opened(protocol: nil))
        }
    }

    static let reset = End(httpStatus: 101, errorDomain: End.posixErrorDomain, errorCode: 54)

    @Test("a failed receive with no end: after endGrace the task is cancelled and the end is the receive's error")
    func receiveFailureWithoutEnd() {
        let h = Harness()
        h.open()
        h.core.report(.receiveFailed(Self.reset))
        #expect(h.closes.isEmpty)
        #expect(h.scheduler.pendingDelays == [URLSessionEndRace.endGrace])

        h.scheduler.advance(by: URLSessionEndRace.endGrace - 0.5)
        h.drainDelegateQueue()
        #expect(h.closes.isEmpty)
        h.scheduler.advance(by: 0.5)
        #expect(h.closes.isEmpty)  // the deadline hops to the delegate queue first
        h.drainDelegateQueue()
        #expect(h.closes == [.failed(WebSocketError(.io(errno: 54)))])
        #expect(h.cancels == [.abort])
        #expect(h.invalidations == 1)

        // The cancellation's completion comes afterwards and changes nothing.
        h.core.report(.completed(End(httpStatus: 101, errorDomain: End.urlErrorDomain, errorCode: -999)))
        #expect(h.closes.count == 1 && h.invalidations == 1)
        #expect(!h.core.deliver(.text("late")))
    }

    @Test("an end within the deadline is delivered and disarms it: nothing is cancelled")
    func endBeforeDeadline() {
        let h = Harness()
        h.open()
        h.core.report(.receiveFailed(Self.reset))
        h.core.report(.closeFrameReceived(code: 4001, reason: Array("kicked".utf8)))
        #expect(h.closes == [.closed(code: WebSocketCloseCode(rawValue: 4001), reason: "kicked")])
        #expect(h.scheduler.pendingCount == 0)
        h.scheduler.advance(by: 10)
        h.drainDelegateQueue()
        #expect(h.closes.count == 1)
        #expect(h.cancels.isEmpty)
    }

    @Test("an over-size message ends the connection at once as messageTooBig(limit:), and cancels with 1009")
    func messageTooBig() {
        let h = Harness(maximumMessageSize: 2048)
        h.open()
        h.core.report(.receiveFailed(End(httpStatus: 101, errorDomain: End.posixErrorDomain, errorCode: 40)))
        #expect(h.closes == [.failed(WebSocketError(.messageTooBig(limit: 2048)))])
        #expect(h.cancels == [.closing(.messageTooBig)])
        #expect(h.scheduler.pendingCount == 0)
    }

    @Test("a binary message cancels the task with 1003")
    func binaryMessage() {
        let h = Harness()
        h.open()
        h.core.report(.unsupportedMessageReceived)
        #expect(h.cancels == [.closing(.unsupportedData)])
        #expect(h.closes == [.failed(WebSocketError(.protocolViolation(closeCode: .unsupportedData)))])
    }

    @Test("the app's close: a sendable code and a cut reason once open, a cancellation before, nothing twice")
    func close() {
        let notOpen = Harness()
        #expect(notOpen.core.close(code: .normalClosure, reason: "bye") == .cancelBeforeOpen)
        notOpen.core.report(.cancelledBeforeOpen)
        #expect(notOpen.closes == [.closed(code: .normalClosure, reason: "bye")])

        let h = Harness()
        h.open()
        #expect(
            h.core.close(code: WebSocketCloseCode(rawValue: 4001), reason: "bye")
                == .sendClose(
                    code: 4001, reason: Array("bye".utf8)))
        #expect(h.core.close(code: .normalClosure, reason: "again") == .none)
        #expect(!h.core.admitSend(byteCount: 1))  // closing: nothing more is sent

        let local = Harness()
        local.open()
        // 1006 may not be sent: it goes out as 1000; the end still reports the close asked for.
        #expect(local.core.close(code: .abnormalClosure, reason: "") == .sendClose(code: 1000, reason: []))
        local.core.report(.completed(End(closeCode: 1000, httpStatus: 101)))
        #expect(local.closes == [.closed(code: .abnormalClosure, reason: "")])
    }

    @Test("sends wait for the connection to open and stay within maxPendingSendBytes until the task writes them")
    func sendBudget() {
        let h = Harness(maxPendingSendBytes: 10)
        #expect(!h.core.admitSend(byteCount: 1))
        h.open()
        #expect(h.core.admitSend(byteCount: 6))
        #expect(!h.core.admitSend(byteCount: 5))
        h.core.sendCompleted(byteCount: 6)
        #expect(h.core.admitSend(byteCount: 10))
    }

    @Test("messages reach the handler until the end; a certificate refusal is kept for the end")
    func deliveryAndTrust() {
        let h = Harness()
        h.open()
        #expect(h.core.deliver(.text("one")))
        h.core.refuseTrust("no certificate matches a pin")
        #expect(h.core.refusedTrust == "no certificate matches a pin")
        h.core.report(.completed(End(closeCode: 1000)))
        #expect(!h.core.deliver(.text("two")))
        #expect(h.events.count == 3)  // opened, one, closed
    }
}
