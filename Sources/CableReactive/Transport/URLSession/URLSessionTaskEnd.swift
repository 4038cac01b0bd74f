// Compiled on every platform: the rules that turn a URLSessionWebSocketTask's end into a WebSocketCloseInfo
// take plain values, so they run and are tested on Linux. URLSessionTransport (Apple only) gathers the values.

/// How a `URLSessionWebSocketTask` ended, in plain values: what ``URLSessionTransport`` reads from the task
/// and its error once the task has completed.
package struct URLSessionTaskEnd: Sendable, Equatable {
    /// The task's `closeCode.rawValue`; 0 (`.invalid`) when no close frame was exchanged.
    package var closeCode = 0
    /// The task's `closeReason`.
    package var closeReason: [UInt8]?
    /// The status of the HTTP response to the upgrade request (`task.response`), if one arrived.
    package var httpStatus: Int?
    /// The error's domain (`NSURLErrorDomain`, `NSPOSIXErrorDomain`, …) and code, if the task failed.
    package var errorDomain: String?
    package var errorCode = 0
    /// Why our session delegate refused the server's certificate (a pin that matched nothing, a custom CA that
    /// did not verify), if it did. URLSession then reports the task as cancelled.
    package var refusedTrust: String?

    package init(
        closeCode: Int = 0,
        closeReason: [UInt8]? = nil,
        httpStatus: Int? = nil,
        errorDomain: String? = nil,
        errorCode: Int = 0,
        refusedTrust: String? = nil
    ) {
        self.closeCode = closeCode
        self.closeReason = closeReason
        self.httpStatus = httpStatus
        self.errorDomain = errorDomain
        self.errorCode = errorCode
        self.refusedTrust = refusedTrust
    }

    /// What the client is told, with the same rules as `SocketTransport`: a close frame is a close; an upgrade
    /// answered with another status than 101 is `upgradeRejected(status:)` (401 and 403 reach `onUnauthorized`,
    /// 404 is a refused Origin or a wrong path); the permanent failures (a refused certificate, App Transport
    /// Security, an unusable URL) get the kinds that stop the client; everything else is retried.
    package var closeInfo: WebSocketCloseInfo {
        if closeCode != 0 {
            let reason = closeReason.map { String(decoding: $0, as: UTF8.self) } ?? ""
            return .closed(code: WebSocketCloseCode(rawValue: UInt16(clamping: closeCode)), reason: reason)
        }
        if let refusedTrust { return .failed(WebSocketError(.certificate, detail: refusedTrust)) }
        if let httpStatus, httpStatus != 101 {
            return .failed(WebSocketError(.upgradeRejected(status: httpStatus)))
        }
        guard let errorDomain else { return .failed(WebSocketError(.abnormalClosure)) }
        // The error's own description can hold the URL; keep only the domain and code.
        let detail = "\(errorDomain) \(errorCode)"
        switch errorDomain {
        case Self.urlErrorDomain:
            return .failed(WebSocketError(Self.kind(urlErrorCode: errorCode), detail: detail))
        case Self.posixErrorDomain:
            return .failed(WebSocketError(.io(errno: Int32(clamping: errorCode)), detail: detail))
        default:
            return .failed(WebSocketError(.abnormalClosure, detail: detail))
        }
    }

    /// `NSURLErrorDomain` and `NSPOSIXErrorDomain`, spelled out so that this file needs no Foundation.
    package static let urlErrorDomain = "NSURLErrorDomain"
    package static let posixErrorDomain = "NSPOSIXErrorDomain"

    /// The kind of a `URLError` code (`URLError.Code.rawValue`; Apple's `NSURLError.h` lists them).
    package static func kind(urlErrorCode code: Int) -> WebSocketError.Kind {
        switch code {
        case -1000, -1002: .invalidURL  // badURL, unsupportedURL
        case -1022: .insecureConnectionBlocked  // appTransportSecurityRequiresSecureConnection
        case -1201, -1202, -1203, -1204: .certificate  // bad date, untrusted, unknown root, not yet valid
        case -1200, -1205, -1206: .tls  // secureConnectionFailed, client certificate rejected or required
        case -1001: .timeout  // timedOut
        case -1003, -1006: .dnsFailure  // cannotFindHost, dnsLookupFailed
        case -1004: .connectionRefused  // cannotConnectToHost
        // notConnectedToInternet, internationalRoamingOff, callIsActive, dataNotAllowed: no network for now, so
        // retried; on watchOS, -1009 is also the refusal of any WebSocket outside audio and CallKit (TN3135),
        // which only the app's canConnect gate (CablePlatform.networkAvailable) can wait out.
        case -1009, -1018, -1019, -1020: .networkUnavailable
        case -1011: .invalidHandshake  // badServerResponse with no response to read a status from
        case -1013: .upgradeRejected(status: 401)  // userAuthenticationRequired
        default: .abnormalClosure  // networkConnectionLost (-1005), cancelled (-999), and the rest: retried
        }
    }
}
