// Compiled on every platform: everything a URLSessionTransport connection decides and keeps, apart from the
// URLSession calls themselves, so that it runs and is tested on Linux (with a VirtualTimeScheduler for the end
// deadline). URLSessionConnection (Apple only) owns one, forwards the delegate's reports to it, and does to the
// task what its Effects ask.

import Signals

/// The state and rules of one `URLSessionWebSocketTask` connection: the send budget, the app's close, the
/// handler, the refused certificate, and the task's end (``URLSessionEndRace``) with its deadline.
///
/// Threading: ``report(_:)``, ``opened()`` and ``deliver(_:)`` run on the session's serial delegate queue, as
/// every delegate callback does, so the handler is called there, one event at a time. ``admitSend(byteCount:)``,
/// ``sendCompleted(byteCount:)`` and ``close(code:reason:)`` may be called from any thread. No lock is held while
/// the handler or an effect runs.
package final class URLSessionConnectionCore: Sendable {
    /// What the core asks of the task, done by the transport.
    package struct Effects: Sendable {
        /// Runs `work` on the session's delegate queue, after the callback in progress (`addOperation`).
        package var onDelegateQueue: @Sendable (_ work: @escaping @Sendable () -> Void) -> Void
        /// Cancels the task: `cancel(with:reason:)` with a close code, or `cancel()`.
        package var cancelTask: @Sendable (URLSessionEndRace.TaskCancel) -> Void
        /// Invalidates the session once the end has been delivered (it holds the delegate until then).
        package var invalidate: @Sendable () -> Void

        package init(
            onDelegateQueue: @escaping @Sendable (_ work: @escaping @Sendable () -> Void) -> Void,
            cancelTask: @escaping @Sendable (URLSessionEndRace.TaskCancel) -> Void,
            invalidate: @escaping @Sendable () -> Void
        ) {
            self.onDelegateQueue = onDelegateQueue
            self.cancelTask = cancelTask
            self.invalidate = invalidate
        }
    }

    /// What ``close(code:reason:)`` asks the transport to do.
    package enum CloseAction: Equatable, Sendable {
        /// Nothing: a close was asked for already, or the end has been delivered.
        case none
        /// `cancel(with:reason:)` with this code and reason (a code that may be sent, a reason cut to fit).
        case sendClose(code: Int, reason: [UInt8])
        /// The task has not opened: `cancel()` it, then ``report(_:)`` ``URLSessionEndRace/Report/cancelledBeforeOpen``
        /// on the delegate queue.
        case cancelBeforeOpen
    }

    private struct State {
        var isOpen = false
        var end: URLSessionEndRace
        var handler: (@Sendable (WebSocketEvent) -> Void)?
        /// Text bytes handed to the task whose send has not completed.
        var unsentBytes = 0
        /// Why the delegate refused the server's certificate, if it did.
        var refusedTrust: String?
        /// The armed end deadline, until it fires or the end is delivered.
        var deadline: (any ScheduledWork)?
    }

    private let state: Locked<State>
    private let maxPendingSendBytes: Int
    private let scheduler: any SignalScheduler
    private let effects: Effects

    /// - Parameters:
    ///   - maximumMessageSize: the task's `maximumMessageSize`, the limit an over-size message reports.
    ///   - scheduler: the clock of the end deadline (`DispatchScheduler` in the transport).
    package init(
        maxPendingSendBytes: Int, maximumMessageSize: Int, scheduler: any SignalScheduler, effects: Effects,
        handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) {
        state = Locked(State(end: URLSessionEndRace(maximumMessageSize: maximumMessageSize), handler: handler))
        self.maxPendingSendBytes = maxPendingSendBytes
        self.scheduler = scheduler
        self.effects = effects
    }

    // MARK: Sending and closing (any thread)

    /// Whether a text of `byteCount` bytes may be handed to the task now: open, not closing or ended, and within
    /// the send budget. If so, the bytes count as unsent until ``sendCompleted(byteCount:)``.
    package func admitSend(byteCount: Int) -> Bool {
        state.withLock { state in
            guard state.isOpen, !state.end.hasEnded, state.end.closeRequest == nil,
                byteCount <= maxPendingSendBytes - state.unsentBytes
            else { return false }
            state.unsentBytes += byteCount
            return true
        }
    }

    /// The task's completion of a send that ``admitSend(byteCount:)`` admitted. A failed send also fails the task;
    /// the end is reported from there.
    package func sendCompleted(byteCount: Int) {
        state.withLock { $0.unsentBytes -= byteCount }
    }

    /// Records the app's close; returns what to do to the task.
    package func close(code: WebSocketCloseCode, reason: String) -> CloseAction {
        let wasOpen: Bool? = state.withLock { state in
            guard state.end.requestClose(code: code, reason: reason) else { return nil }
            return state.isOpen
        }
        guard let wasOpen else { return .none }
        guard wasOpen else { return .cancelBeforeOpen }
        // Codes that may not be sent become 1000, the reason is cut on a character boundary, as on Linux.
        let payload = ClosePayload(sending: code.rawValue, reason: reason)
        return .sendClose(
            code: Int(payload.code ?? WebSocketCloseCode.normalClosure.rawValue), reason: payload.encodedReason)
    }

    // MARK: Delegate queue

    /// `didOpenWithProtocol`: returns the handler to deliver `.opened` to, or nil if the connection is closing or
    /// has ended (then nothing is delivered).
    package func opened() -> (@Sendable (WebSocketEvent) -> Void)? {
        state.withLock { state in
            guard !state.end.hasEnded, state.end.closeRequest == nil else { return nil }
            state.isOpen = true
            return state.handler
        }
    }

    /// Delivers a message's event, unless the end has been delivered. Returns whether it was.
    @discardableResult
    package func deliver(_ event: WebSocketEvent) -> Bool {
        guard let handler = state.withLock({ $0.handler }) else { return false }
        handler(event)
        return true
    }

    /// Records why the delegate refused the server's certificate.
    package func refuseTrust(_ reason: String) {
        state.withLock { $0.refusedTrust = reason }
    }

    /// Why the delegate refused the server's certificate, if it did.
    package var refusedTrust: String? { state.withLock { $0.refusedTrust } }

    /// Hands one report of the task's end to the race and does what it decides: arms the end deadline, cancels
    /// the task, and delivers `.closed` (once), then releases the handler and invalidates the session.
    package func report(_ report: URLSessionEndRace.Report) {
        let (step, handler, deadline) = state.withLock {
            state -> (URLSessionEndRace.Step, (@Sendable (WebSocketEvent) -> Void)?, (any ScheduledWork)?) in
            let step = state.end.settle(report)
            guard step.deliver != nil else { return (step, nil, nil) }
            defer {
                state.handler = nil
                state.deadline = nil
            }
            return (step, state.handler, state.deadline)
        }
        deadline?.cancel()
        if let delay = step.armEndDeadline { armDeadline(after: delay) }
        if let cancel = step.cancelTask { effects.cancelTask(cancel) }
        guard let info = step.deliver else { return }
        handler?(.closed(info))
        effects.invalidate()
    }

    private func armDeadline(after delay: Double) {
        let work = scheduler.schedule(after: delay) { [weak self, effects] in
            guard let core = self else { return }
            effects.onDelegateQueue { core.report(.endOverdue) }
        }
        let armed = state.withLock { state -> Bool in
            guard !state.end.hasEnded else { return false }
            state.deadline = work
            return true
        }
        if !armed { work.cancel() }
    }
}
