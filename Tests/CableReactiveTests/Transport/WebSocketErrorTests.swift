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
            .dnsFailure, .connectionRefused, .networkUnavailable, .timeout, .tls, .upgradeRejected(status: 500),
            .invalidHandshake,
            .protocolViolation(closeCode: .protocolError), .abnormalClosure, .io(errno: 5), .invalidURL, .certificate,
            .insecureConnectionBlocked, .tlsUnavailable, .proxyRejected(status: 407), .invalidProxy,
        ]
        #expect(Set(kinds).count == kinds.count)
        #expect(Set(kinds.map(\.name)).count == kinds.count)
    }

    @Test(
        "only certificate, App Transport Security, missing TLS library, URL, proxy setting and proxy 407/403 failures are permanent"
    )
    func permanentKinds() {
        let permanent: [WebSocketError.Kind] = [
            .certificate, .insecureConnectionBlocked, .tlsUnavailable, .invalidURL, .invalidProxy,
            .proxyRejected(status: 407), .proxyRejected(status: 401), .proxyRejected(status: 403),
        ]
        let retried: [WebSocketError.Kind] = [
            .dnsFailure, .connectionRefused, .networkUnavailable, .timeout, .tls, .upgradeRejected(status: 404),
            .upgradeRejected(status: 503), .invalidHandshake, .protocolViolation(closeCode: .protocolError),
            .abnormalClosure, .io(errno: 104), .proxyRejected(status: 502), .proxyRejected(status: 503),
            .proxyRejected(status: 504), .proxyRejected(status: 500), .upgradeRejected(status: 407),
        ]
        #expect(permanent.allSatisfy { $0.isPermanent })
        #expect(!retried.contains { $0.isPermanent })
    }

    @Test("a proxy's refusal carries its status but is no upgrade status: a proxy 403 never looks like the server's")
    func proxyStatusIsNotTheUpgradeStatus() {
        let proxy = WebSocketError(.proxyRejected(status: 403))
        #expect(proxy.kind.status == 403)
        #expect(proxy.httpStatus == nil)
        #expect(WebSocketError(.upgradeRejected(status: 403)).httpStatus == 403)
        #expect("\(proxy.kind)" == "proxyRejected(status: 403)")
    }
}
