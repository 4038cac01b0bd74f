import CableReactive
import Testing

/// The subprotocol `URLSessionTransport` reports as opened, run on Linux with what an Apple platform's delegate
/// and upgrade response would hold.
@Suite("URLSessionSubprotocol")
struct URLSessionSubprotocolTests {
    static let offer = ["actioncable-v1-json", "actioncable-unsupported"]

    static func chosen(_ reported: String?, _ headers: [String: String] = [:]) -> String? {
        URLSessionSubprotocol.chosen(reported: reported, responseHeaders: headers, offered: offer)
    }

    @Test("the delegate's protocol, when it is one we offered")
    func reported() {
        #expect(Self.chosen("actioncable-v1-json") == "actioncable-v1-json")
        #expect(
            Self.chosen("actioncable-unsupported", ["Sec-WebSocket-Protocol": "actioncable-v1-json"])
                == "actioncable-unsupported")
    }

    @Test(
        "without one, the response's Sec-WebSocket-Protocol, its name in any case",
        arguments: [
            "Sec-WebSocket-Protocol", "sec-websocket-protocol", "SEC-WEBSOCKET-PROTOCOL", "Sec-Websocket-Protocol",
        ])
    func header(name: String) {
        #expect(
            Self.chosen(nil, [name: "actioncable-unsupported", "Upgrade": "websocket"]) == "actioncable-unsupported")
        #expect(Self.chosen("", [name: "actioncable-v1-json"]) == "actioncable-v1-json")
    }

    @Test("whitespace around the header's value is not part of it")
    func whitespace() {
        #expect(Self.chosen(nil, ["Sec-WebSocket-Protocol": " \tactioncable-v1-json \t"]) == "actioncable-v1-json")
    }

    @Test(
        "a value we did not offer is ignored: another protocol, another case, a list, an empty value",
        arguments: [
            "actioncable-v1-ext-json", "ActionCable-v1-JSON", "actioncable-v1-json, actioncable-unsupported", "", " ",
        ])
    func notOffered(value: String) {
        #expect(Self.chosen(nil, ["Sec-WebSocket-Protocol": value]) == nil)
        #expect(Self.chosen(value) == nil)
    }

    @Test("an AnyCable token we offered is never the chosen protocol, from the delegate or the header")
    func anyCableToken() {
        let offered = ["anycable-token.tok-1"] + Self.offer
        func chosen(_ reported: String?, _ header: String?) -> String? {
            URLSessionSubprotocol.chosen(
                reported: reported, responseHeaders: header.map { ["Sec-WebSocket-Protocol": $0] } ?? [:],
                offered: offered)
        }
        #expect(chosen("anycable-token.tok-1", nil) == nil)
        #expect(chosen(nil, "anycable-token.tok-1") == nil)
        #expect(chosen("anycable-token.tok-1", "actioncable-v1-json") == "actioncable-v1-json")
        #expect(chosen("actioncable-unsupported", "anycable-token.tok-1") == "actioncable-unsupported")
        #expect(chosen(nil, "actioncable-v1-json") == "actioncable-v1-json")
    }

    @Test("a delegate protocol we did not offer gives way to the header; no header and no protocol is none")
    func fallbacks() {
        #expect(Self.chosen("chat", ["Sec-WebSocket-Protocol": "actioncable-v1-json"]) == "actioncable-v1-json")
        #expect(Self.chosen(nil) == nil)
        #expect(Self.chosen(nil, ["Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="]) == nil)
    }

    @Test("header fields that differ only in the name's case must agree")
    func conflictingFields() {
        let agree = ["Sec-WebSocket-Protocol": "actioncable-v1-json", "sec-websocket-protocol": "actioncable-v1-json "]
        #expect(Self.chosen(nil, agree) == "actioncable-v1-json")
        let differ = [
            "Sec-WebSocket-Protocol": "actioncable-v1-json", "sec-websocket-protocol": "actioncable-unsupported",
        ]
        #expect(Self.chosen(nil, differ) == nil)
    }
}
