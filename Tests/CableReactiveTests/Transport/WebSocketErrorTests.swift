import CableReactive
import Testing

@Suite("WebSocketError")
struct WebSocketErrorTests {
    @Test("compares by kind and ignores the detail text")
    func equalityOnKind() {
        #expect(WebSocketError(.timeout, detail: "TCP connect") == WebSocketError(.timeout))
        #expect(WebSocketError(.timeout) != WebSocketError(.tls))
        #expect(WebSocketError(.upgradeRejected(status: 401)) != WebSocketError(.upgradeRejected(status: 403)))
        #expect(Set([WebSocketError(.tls, detail: "a"), WebSocketError(.tls, detail: "b")]).count == 1)
    }

    @Test("kinds are values: the ones with a value expose it, and print like the old cases")
    func kindsCarryTheirValues() {
        let rejected = WebSocketError(.upgradeRejected(status: 404))
        #expect(rejected.httpStatus == 404 && rejected.kind.status == 404 && rejected.kind.name == "upgradeRejected")
        #expect(WebSocketError(.io(errno: 104)).kind.errno == 104)
        #expect(WebSocketError.Kind.protocolViolation(closeCode: .protocolError).closeCode == .protocolError)
        #expect(WebSocketError(.tls).httpStatus == nil && WebSocketError.Kind.tls.errno == nil)
        #expect("\(rejected.kind)" == "upgradeRejected(status: 404)")
        #expect("\(WebSocketError.Kind.dnsFailure)" == "dnsFailure")
        let kinds: [WebSocketError.Kind] = [
            .dnsFailure, .connectionRefused, .timeout, .tls, .upgradeRejected(status: 500), .invalidHandshake,
            .protocolViolation(closeCode: .protocolError), .abnormalClosure, .io(errno: 5), .invalidURL, .certificate,
            .insecureConnectionBlocked, .tlsUnavailable,
        ]
        #expect(Set(kinds).count == kinds.count)
        #expect(Set(kinds.map(\.name)).count == kinds.count)
    }

    @Test("only certificate, App Transport Security, missing TLS library and URL failures are permanent")
    func permanentKinds() {
        let permanent: [WebSocketError.Kind] = [.certificate, .insecureConnectionBlocked, .tlsUnavailable, .invalidURL]
        let retried: [WebSocketError.Kind] = [
            .dnsFailure, .connectionRefused, .timeout, .tls, .upgradeRejected(status: 404),
            .upgradeRejected(status: 503), .invalidHandshake, .protocolViolation(closeCode: .protocolError),
            .abnormalClosure, .io(errno: 104),
        ]
        #expect(permanent.allSatisfy { $0.isPermanent })
        #expect(!retried.contains { $0.isPermanent })
    }
}
