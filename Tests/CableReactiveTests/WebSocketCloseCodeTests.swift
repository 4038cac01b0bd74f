import CableReactive
import Testing

@Suite("WebSocketCloseCode")
struct WebSocketCloseCodeTests {
    @Test("named codes carry the RFC 6455 numbers")
    func namedCodes() {
        #expect(WebSocketCloseCode.normalClosure.rawValue == 1000)
        #expect(WebSocketCloseCode.protocolError.rawValue == 1002)
        #expect(WebSocketCloseCode.messageTooBig.rawValue == 1009)
        #expect(WebSocketError(.upgradeRejected(status: 401)).httpStatus == 401)
    }
}
