// Compiled on every platform, like URLSessionTaskEnd: which of a task's end reports the client is told is decided
// here, from plain values, and tested on Linux. URLSessionTransport (Apple only) feeds it the reports.

/// Which end of a `URLSessionWebSocketTask` the client is told, whatever order URLSession reports it in.
///
/// A task's end reaches ``URLSessionTransport`` up to three times, on the session's delegate queue, in an order
/// URLSession does not promise: the pending `receive` fails, `didCloseWith` gives the close frame, and
/// `didCompleteWithError` completes the task (always, even when the receive's completion never comes). The
/// first report that settles the end is delivered; every later one is ignored. The rules:
///
/// - After the app's own close (``requestClose(code:reason:)``), any report ends the connection with that close:
///   the client asked for it, whatever the task says.
/// - A failed `receive` settles nothing unless the task already holds a close code. On a server close it can
///   fail before `didCloseWith`, with no code yet (`.invalid`) and `ENOTCONN` (POSIX 57): finishing there
///   reported a clean close as an I/O failure. It waits for the delegate instead, and keeps its error for a
///   completion that reports none.
/// - `didCloseWith` settles it with the frame's code and reason. A code of 0 (`.invalid`) says no more than the
///   completion will, so it waits for that; an empty close frame arrives as 1005 (`.noStatusReceived`).
/// - `didCompleteWithError` settles it with ``URLSessionTaskEnd/closeInfo`` of the task at that moment (its close
///   code, HTTP status and error), with the failed receive's error when the completion carries none.
/// - A message this text-only protocol cannot take (binary) settles it at once, as a protocol violation.
package struct URLSessionEndRace: Sendable {
    /// One report of the task's end.
    package enum Report: Sendable {
        /// The pending `receive` failed; `end` is what the task held then.
        case receiveFailed(URLSessionTaskEnd)
        /// `urlSession(_:webSocketTask:didCloseWith:reason:)`: the close code's raw value and the reason bytes.
        case closeFrameReceived(code: Int, reason: [UInt8]?)
        /// `urlSession(_:task:didCompleteWithError:)`; `end` is what the task held then.
        case completed(URLSessionTaskEnd)
        /// The server sent a message that is not text; the transport cancels the task with 1003.
        case unsupportedMessageReceived
        /// The app closed the task before it opened; the transport cancelled it and reports the close itself.
        case cancelledBeforeOpen
    }

    /// The close the app asked for, if it has: what every end after it reports.
    package private(set) var closeRequest: (code: WebSocketCloseCode, reason: String)?
    /// The end the client was told, once it has been.
    package private(set) var outcome: WebSocketCloseInfo?
    /// The error of a failed `receive` that settled nothing: the domain and code.
    private var receiveError: (domain: String, code: Int)?

    package init() {}

    /// Whether the end has been delivered.
    package var hasEnded: Bool { outcome != nil }

    /// Records the app's close. Returns `false`, and changes nothing, if a close was asked for already or the end
    /// has been delivered: the transport then sends nothing.
    package mutating func requestClose(code: WebSocketCloseCode, reason: String) -> Bool {
        guard closeRequest == nil, outcome == nil else { return false }
        closeRequest = (code, reason)
        return true
    }

    /// Takes one report; returns the end to deliver now (exactly once per task), or `nil`.
    package mutating func settle(_ report: Report) -> WebSocketCloseInfo? {
        guard outcome == nil, let end = decide(report) else { return nil }
        outcome = end
        return end
    }

    private mutating func decide(_ report: Report) -> WebSocketCloseInfo? {
        if let closeRequest { return .closed(code: closeRequest.code, reason: closeRequest.reason) }
        switch report {
        case .receiveFailed(let end):
            if end.closeCode != 0 { return end.closeInfo }
            if let domain = end.errorDomain { receiveError = (domain, end.errorCode) }
            return nil
        case .closeFrameReceived(let code, let reason):
            guard code != 0 else { return nil }
            return URLSessionTaskEnd(closeCode: code, closeReason: reason).closeInfo
        case .completed(var end):
            if end.errorDomain == nil, let receiveError {
                end.errorDomain = receiveError.domain
                end.errorCode = receiveError.code
            }
            return end.closeInfo
        case .unsupportedMessageReceived:
            return .failed(WebSocketError(.protocolViolation(closeCode: .unsupportedData)))
        case .cancelledBeforeOpen:
            // Only sent after requestClose, which the first line answers; a task cancelled by anyone else failed.
            return .failed(WebSocketError(.abnormalClosure))
        }
    }
}
