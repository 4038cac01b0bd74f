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
}
