// Compiled on every platform, like URLSessionTaskEnd: which of a task's end reports the client is told, and what
// the transport does to the task meanwhile, is decided here, from plain values, and tested on Linux.
// URLSessionConnectionCore carries the decisions out; URLSessionTransport (Apple only) feeds it the reports.

/// Which end of a `URLSessionWebSocketTask` the client is told, whatever order URLSession reports it in, and
/// what the transport must do to the task meanwhile.
///
/// A task's end reaches ``URLSessionTransport`` up to three times, on the session's delegate queue, in an order
/// URLSession does not promise: the pending `receive` fails, `didCloseWith` gives the close frame, and
/// `didCompleteWithError` completes the task (always, even when the receive's completion never comes). The
/// first report that settles the end is delivered; every later one is ignored. The rules:
///
/// - After the app's own close (``requestClose(code:reason:)``), any report ends the connection with that close:
///   the client asked for it, whatever the task says.
/// - A message over `maximumMessageSize` fails the pending `receive` with `EMSGSIZE` (POSIX 40) and may leave the
///   task open: it ends the connection at once as ``WebSocketError/Kind-swift.struct/messageTooBig(limit:)``, as
///   on Linux, and the task is cancelled with 1009. A completion with that error is the same end.
/// - A failed `receive` settles nothing unless the task already holds a close code. On a server close it can
///   fail before `didCloseWith`, with no code yet (`.invalid`) and `ENOTCONN` (POSIX 57): finishing there
///   reported a clean close as an I/O failure. It waits for the delegate instead, and keeps its error for a
///   completion that reports none.
/// - `didCloseWith` settles it with the frame's code (its raw value, which holds private codes such as 4001) and
///   reason. A code of 0 (`.invalid`: URLSession gave none) waits for the completion: the task's `closeCode` may
///   hold it by then; if not, a completion without an error is a close with 1005 (`.noStatusReceived`, the
///   frame's reason kept), and one with an error is that failure. An empty close frame arrives as 1005 itself.
/// - `didCompleteWithError` settles it with ``URLSessionTaskEnd/closeInfo`` of the task at that moment (its close
///   code, HTTP status and error), with the failed receive's error when the completion carries none.
/// - A report that settles nothing arms the end deadline (``endGrace``): should neither `didCloseWith` nor the
///   completion come within it, ``Report/endOverdue`` ends the connection with what is known (the receive's
///   error, or the close frame), and the task is cancelled. A receive failure that leaves the task open would
///   otherwise keep a silent connection until the client's stale watchdog closed it, reported as the app's
///   own close and with its cause lost.
/// - A message this text-only protocol cannot take (binary) settles it at once, as a protocol violation, and
///   the task is cancelled with 1003.
package struct URLSessionEndRace: Sendable {
    /// How long a report that settled nothing waits for the task's end: well above the milliseconds in which
    /// URLSession reports `didCloseWith` and the completion after a failed receive, well below the client's stale
    /// timeout (15 s by default).
    package static let endGrace: Double = 3
    /// The `errno` of a message over `maximumMessageSize`: `EMSGSIZE` on Apple platforms ("Message too long").
    package static let messageTooLongErrno = 40

    /// One report of the task's end.
    package enum Report: Sendable {
        /// The pending `receive` failed; `end` is what the task held then.
        case receiveFailed(URLSessionTaskEnd)
        /// `urlSession(_:webSocketTask:didCloseWith:reason:)`: the close code's raw value and the reason bytes.
        case closeFrameReceived(code: Int, reason: [UInt8]?)
        /// `urlSession(_:task:didCompleteWithError:)`; `end` is what the task held then.
        case completed(URLSessionTaskEnd)
        /// The server sent a message that is not text.
        case unsupportedMessageReceived
        /// The app closed the task before it opened; the transport cancelled it and reports the close itself.
        case cancelledBeforeOpen
        /// The end deadline (``Step/armEndDeadline``) passed.
        case endOverdue
    }

    /// How the transport cancels the task.
    package enum TaskCancel: Equatable, Sendable {
        /// `cancel(with:reason:)`: a close frame with this code and no reason.
        case closing(WebSocketCloseCode)
        /// `cancel()`: no close frame (the connection is already broken, or closing).
        case abort
    }

    /// What the transport does after one report, in this order: arm the deadline, cancel the task, deliver.
    package struct Step: Equatable, Sendable {
        /// Report ``Report/endOverdue`` after this many seconds, unless the end has been delivered by then.
        package var armEndDeadline: Double?
        /// Cancel the task.
        package var cancelTask: TaskCancel?
        /// The end to deliver now (exactly once per task).
        package var deliver: WebSocketCloseInfo?

        package init(armEndDeadline: Double? = nil, cancelTask: TaskCancel? = nil, deliver: WebSocketCloseInfo? = nil) {
            self.armEndDeadline = armEndDeadline
            self.cancelTask = cancelTask
            self.deliver = deliver
        }

        /// Nothing to do.
        package static let none = Step()
    }

    /// The largest message the task accepts (its `maximumMessageSize`): the limit an over-size message reports.
    package let maximumMessageSize: Int
    /// The close the app asked for, if it has: what every end after it reports.
    package private(set) var closeRequest: (code: WebSocketCloseCode, reason: String)?
    /// The end the client was told, once it has been.
    package private(set) var outcome: WebSocketCloseInfo?
    /// Whether the end deadline has been armed (once per task).
    package private(set) var awaitsEnd = false
    /// What the task held when a `receive` failed without settling the end: its error is the cause.
    private var receiveFailure: URLSessionTaskEnd?
    /// Whether a close frame arrived whose code URLSession gave as 0, and its reason.
    private var closeFrameWithoutCode = false
    private var closeFrameReason: [UInt8]?

    package init(maximumMessageSize: Int = 1 << 20) {
        self.maximumMessageSize = maximumMessageSize
    }

    /// Whether the end has been delivered.
    package var hasEnded: Bool { outcome != nil }

    /// Records the app's close. Returns `false`, and changes nothing, if a close was asked for already or the end
    /// has been delivered: the transport then sends nothing.
    package mutating func requestClose(code: WebSocketCloseCode, reason: String) -> Bool {
        guard closeRequest == nil, outcome == nil else { return false }
        closeRequest = (code, reason)
        return true
    }

    /// Takes one report; returns what to do now. Nothing, once the end has been delivered.
    package mutating func settle(_ report: Report) -> Step {
        guard outcome == nil else { return .none }
        var step = decide(report)
        if let end = step.deliver {
            outcome = end
            step.armEndDeadline = nil
        } else if step.armEndDeadline != nil {
            if awaitsEnd { step.armEndDeadline = nil }
            awaitsEnd = true
        }
        return step
    }

    private mutating func decide(_ report: Report) -> Step {
        if let closeRequest {
            let close = WebSocketCloseInfo.closed(code: closeRequest.code, reason: closeRequest.reason)
            guard case .endOverdue = report else { return Step(deliver: close) }
            return awaitsEnd ? Step(cancelTask: .abort, deliver: close) : .none
        }
        switch report {
        case .receiveFailed(let end):
            if end.isMessageTooLong { return tooBig(cancelling: true) }
            if end.closeCode != 0 { return Step(deliver: end.closeInfo) }
            receiveFailure = end
            return Step(armEndDeadline: Self.endGrace)
        case .closeFrameReceived(let code, let reason):
            guard code == 0 else {
                return Step(deliver: URLSessionTaskEnd(closeCode: code, closeReason: reason).closeInfo)
            }
            closeFrameWithoutCode = true
            closeFrameReason = reason
            return Step(armEndDeadline: Self.endGrace)
        case .completed(var end):
            if end.isMessageTooLong || (end.errorDomain == nil && receiveFailure?.isMessageTooLong == true) {
                return tooBig(cancelling: false)
            }
            if closeFrameWithoutCode {
                // The task may hold the code didCloseWith could not give (with the frame's reason if it has none);
                // if not, a task that completed cleanly after the frame was closed by it.
                if end.closeCode != 0 {
                    end.closeReason = end.closeReason ?? closeFrameReason
                } else if end.errorDomain == nil {
                    return Step(deliver: unreadClose(reason: closeFrameReason ?? end.closeReason))
                }
            }
            if end.errorDomain == nil, let receiveFailure, let domain = receiveFailure.errorDomain {
                end.errorDomain = domain
                end.errorCode = receiveFailure.errorCode
            }
            return Step(deliver: end.closeInfo)
        case .endOverdue:
            guard awaitsEnd else { return .none }
            if closeFrameWithoutCode {
                return Step(cancelTask: .abort, deliver: unreadClose(reason: closeFrameReason))
            }
            var cause = URLSessionTaskEnd()
            if let receiveFailure {
                cause.errorDomain = receiveFailure.errorDomain
                cause.errorCode = receiveFailure.errorCode
            }
            return Step(cancelTask: .abort, deliver: cause.closeInfo)
        case .unsupportedMessageReceived:
            return Step(
                cancelTask: .closing(.unsupportedData),
                deliver: .failed(WebSocketError(.protocolViolation(closeCode: .unsupportedData))))
        case .cancelledBeforeOpen:
            // Only sent after requestClose, which the first line answers; a task cancelled by anyone else failed.
            return Step(deliver: .failed(WebSocketError(.abnormalClosure)))
        }
    }

    /// The end of an over-size message, as the Linux transport reports it.
    private func tooBig(cancelling: Bool) -> Step {
        let error = WebSocketError(
            .messageTooBig(limit: maximumMessageSize),
            detail: "\(URLSessionTaskEnd.posixErrorDomain) \(Self.messageTooLongErrno)")
        return Step(cancelTask: cancelling ? .closing(.messageTooBig) : nil, deliver: .failed(error))
    }

    /// A close frame arrived, but neither `didCloseWith` nor the task could say its code.
    private func unreadClose(reason: [UInt8]?) -> WebSocketCloseInfo {
        .closed(code: .noStatusReceived, reason: reason.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }
}

extension URLSessionTaskEnd {
    /// Whether the task failed with `EMSGSIZE`: a message over its `maximumMessageSize`.
    package var isMessageTooLong: Bool {
        errorDomain == Self.posixErrorDomain && errorCode == URLSessionEndRace.messageTooLongErrno
    }
}
