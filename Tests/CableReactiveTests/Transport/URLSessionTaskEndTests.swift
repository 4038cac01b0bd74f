import CableReactive
import Testing

/// The rules `URLSessionTransport` applies to a finished task, run here on Linux with the values the task and
/// its error would hold on an Apple platform.
@Suite("URLSessionTaskEnd")
struct URLSessionTaskEndTests {
    typealias End = URLSessionTaskEnd

    static func urlError(_ code: Int, status: Int? = nil) -> End {
        End(httpStatus: status, errorDomain: End.urlErrorDomain, errorCode: code)
    }

    @Test(
        "URLError codes map to the Linux transport's kinds",
        arguments: [
            (-1000, WebSocketError.Kind.invalidURL), (-1002, .invalidURL),
            (-1022, .insecureConnectionBlocked),
            (-1201, .certificate), (-1202, .certificate), (-1203, .certificate), (-1204, .certificate),
            (-1200, .tls), (-1205, .tls), (-1206, .tls),
            (-1001, .timeout), (-1003, .dnsFailure), (-1006, .dnsFailure),
            (-1004, .connectionRefused), (-1009, .networkUnavailable), (-1018, .networkUnavailable),
            (-1019, .networkUnavailable), (-1020, .networkUnavailable),
            (-1011, .invalidHandshake), (-1013, .upgradeRejected(status: 401)),
            (-1005, .abnormalClosure), (-999, .abnormalClosure), (-1, .abnormalClosure), (-4242, .abnormalClosure),
        ])
    func urlErrorKinds(code: Int, kind: WebSocketError.Kind) {
        #expect(Self.urlError(code).closeInfo == .failed(WebSocketError(kind)))
    }

    @Test("permanent: App Transport Security, refused certificates and unusable URLs; offline and lost are retried")
    func permanence() {
        for code in [-1022, -1201, -1202, -1203, -1204, -1000, -1002] {
            guard case .failed(let error) = Self.urlError(code).closeInfo else {
                Issue.record("\(code)")
                continue
            }
            #expect(error.kind.isPermanent, "URLError \(code)")
        }
        for code in [-1009, -1005, -1001, -1004, -1003, -1200, -1011, -999, -1020] {
            guard case .failed(let error) = Self.urlError(code).closeInfo else {
                Issue.record("\(code)")
                continue
            }
            #expect(!error.kind.isPermanent, "URLError \(code)")
        }
    }

    @Test("no network (-1009, also watchOS's refusal of a WebSocket) is networkUnavailable: retried, not a refusal")
    func offline() {
        guard case .failed(let error) = Self.urlError(-1009).closeInfo else {
            Issue.record("-1009 is a failure")
            return
        }
        #expect(error.kind == .networkUnavailable)
        #expect(error.kind != .connectionRefused)
        #expect(!error.kind.isPermanent)
        #expect(error.detail == "NSURLErrorDomain -1009")
        #expect("\(error.kind)" == "networkUnavailable")
    }

    @Test("a refused upgrade reports its status whatever the error says: 401 and 403 reach onUnauthorized")
    func upgradeStatus() {
        for status in [400, 401, 403, 404, 500, 503] {
            #expect(
                Self.urlError(-1011, status: status).closeInfo
                    == .failed(WebSocketError(.upgradeRejected(status: status))))
        }
        // A 101 that was followed by a failure is that failure.
        #expect(Self.urlError(-1005, status: 101).closeInfo == .failed(WebSocketError(.abnormalClosure)))
    }

    @Test("a close frame wins over everything else, with its reason")
    func closeFrame() {
        let end = End(
            closeCode: 4001, closeReason: Array("going away".utf8), httpStatus: 101,
            errorDomain: End.posixErrorDomain, errorCode: 57)
        #expect(end.closeInfo == .closed(code: WebSocketCloseCode(rawValue: 4001), reason: "going away"))
        #expect(End(closeCode: 1000).closeInfo == .closed(code: .normalClosure, reason: ""))
        #expect(End(closeCode: 70_000).closeInfo == .closed(code: WebSocketCloseCode(rawValue: 65_535), reason: ""))
    }

    @Test("a certificate our delegate refused is a permanent .certificate, not the cancellation URLSession reports")
    func refusedTrust() {
        let end = End(errorDomain: End.urlErrorDomain, errorCode: -999, refusedTrust: "no certificate matches a pin")
        #expect(end.closeInfo == .failed(WebSocketError(.certificate)))
        guard case .failed(let error) = end.closeInfo else { return }
        #expect(error.detail == "no certificate matches a pin")
    }

    @Test("POSIX errors are io(errno:), other domains and no error at all are abnormal closures; details hold no URL")
    func otherDomains() {
        let reset = End(errorDomain: End.posixErrorDomain, errorCode: 54)
        #expect(reset.closeInfo == .failed(WebSocketError(.io(errno: 54))))
        #expect(
            End(errorDomain: "kCFErrorDomainCFNetwork", errorCode: 303).closeInfo
                == .failed(WebSocketError(.abnormalClosure)))
        #expect(End().closeInfo == .failed(WebSocketError(.abnormalClosure)))
        guard case .failed(let error) = Self.urlError(-1202).closeInfo else { return }
        #expect(error.detail == "NSURLErrorDomain -1202")
    }
}
