import Dispatch
import Testing

@testable import CableReactive

/// The client's hot path for data frames: `CableProtocol.decodeFrame` (a data frame's identifier left as its raw
/// JSON token) and `RouteIndex` (routes by that token). Read, the token must give the identifier that a
/// parse of the whole frame gives.
@Suite("Data frame fast path")
struct DataFrameFastPathTests {
    static func fast(_ text: String) -> (token: String, message: JSONValue, position: StreamPosition?)? {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { buffer in
            guard
                case .message(let token, .value(let message), let position)? =
                    CableProtocol.decodeFrame(validatedUTF8: buffer)
            else { return nil }
            return (String(decoding: buffer[token], as: UTF8.self), message, position)
        }
    }

    @Test("takes a data frame's identifier token as written and parses its message")
    func dataFrame() throws {
        let frame = try #require(Self.fast(#"{"identifier":"{\"channel\":\"A\"}","message":{"n":1}}"#))
        #expect(frame.token == #"{\"channel\":\"A\"}"#)
        #expect(frame.message == ["n": 1])
        let reordered = try #require(Self.fast(#"{ "message" : [1] , "stream_id":"s", "identifier" : "x\u0041" }"#))
        #expect(reordered.token == #"x\u0041"#)
        #expect(reordered.message == [1])
    }

    @Test("a repeated identifier: the last one wins, and a bad escape in any fails the frame")
    func repeatedIdentifier() {
        #expect(
            CableProtocol.decode(#"{"identifier":"x","identifier":"y","message":1}"#)
                == .message(identifier: "y", message: 1))
        #expect(Self.fast(#"{"identifier":"x","identifier":"y","message":1}"#)?.token == "y", "as the fast path")
        #expect(Self.fast(#"{"identifier":"x\u0041","identifier":"y","message":1}"#)?.token == "y")
        #expect(CableProtocol.decode(#"{"identifier":"\&","identifier":"x","message":1}"#) == nil)
    }

    @Test(
        "sees no data frame in any other frame",
        arguments: [
            #"{"type":"confirm_subscription","identifier":"x","message":1}"#,
            #"{"type":"reject_subscription","identifier":"x","message":1}"#,
            #"{"identifier":1,"message":1}"#,
            #"{"identifier":"x","message":1,"identifier":2}"#,
            #"{"identifier":"\&","identifier":"x","message":1}"#,  // a bad escape in a skipped token (fuzz)
            #"{"identifier":"x"}"#,
            #"{"message":1}"#,
            #"{"identifier":"x","message":}"#,
            #"{"identifier":"x","message":1} trailing"#,
            #"{"identifier":"x"#,
            #"["identifier","message"]"#,
            #"{"type":"welcome"}"#,
        ])
    func otherFrames(text: String) {
        #expect(Self.fast(text) == nil)
    }

    /// Data frames (escapes in the identifier and the message, extra keys) and a confirmation.
    static let seeds =
        CableProtocolRobustnessTests.seeds + [
            #"{"identifier":"{\"channel\":\"A\",\"q\":\"\\\"\\u00e9\"}","message":{"t":"\u00e9\\","n":1}}"#,
            #"{"message":"m","identifier":"{\"channel\":\"B\"}","type":"message"}"#,
        ]

    @Test("agrees with the reference rules on 30,000 random and mutated frames")
    func agreesWithReference() {
        var rng = JSONRoundTripTests.SeededGenerator(state: 0xF00D)
        var taken = 0
        for _ in 0..<30_000 {
            let seed = Array((Self.seeds.randomElement(using: &rng) ?? "{}").utf8)
            let bytes = CableProtocolRobustnessTests.mutate(seed, &rng)
            let text = String(decoding: bytes, as: UTF8.self)
            guard Array(text.utf8) == bytes else { continue }  // the hot path gets validated UTF-8 only
            let reference = CableProtocolRobustnessTests.reference(text)
            guard let fast = Self.fast(text) else {
                if case .message = reference { Issue.record("a data frame missed: \(text)") }
                continue
            }
            taken += 1
            // A data frame whose token is a valid JSON string is the reference's data frame, with the identifier
            // the token holds. A malformed token is never in a route table (which holds only tokens our writer
            // made), so the client reads it, fails, and drops the frame, which the reference rejects.
            guard let unescaped = (try? JSONValue(parsing: "\"\(fast.token)\""))?.stringValue else {
                #expect(reference == nil, "\(text)")
                continue
            }
            #expect(
                reference == .message(identifier: unescaped, message: fast.message, position: fast.position),
                "\(text)")
        }
        #expect(taken > 1_000)
    }
}

@Suite("RouteIndex")
struct RouteIndexTests {
    static func route(_ identifier: String, serial: Int = 1) -> DeliveryRoute {
        DeliveryRoute(serial: serial, identifier: identifier, context: DeliveryBatchTests.context(bufferSize: 4))
    }

    static func lookup(_ index: RouteIndex, _ token: String) -> DeliveryRoute? {
        Array(token.utf8).withUnsafeBufferPointer { index.lookup(token: $0) }
    }

    @Test("finds a route by its identifier's token, as our writer escapes it")
    func tokens() {
        var index = RouteIndex()
        let identifiers = [#"{"channel":"A"}"#, "plain", "", #"back\slash"#, "tab\tand\u{1}", "héllo ✓"]
        let routes = identifiers.enumerated().map { Self.route($1, serial: $0) }
        for (identifier, route) in zip(identifiers, routes) { index.set(route, for: identifier) }
        #expect(Self.lookup(index, #"{\"channel\":\"A\"}"#) === routes[0])
        #expect(Self.lookup(index, "plain") === routes[1])
        #expect(Self.lookup(index, "") === routes[2])
        #expect(Self.lookup(index, #"back\\slash"#) === routes[3])
        #expect(Self.lookup(index, #"tab\tand\u0001"#) === routes[4])
        #expect(Self.lookup(index, "héllo ✓") === routes[5])
        #expect(Self.lookup(index, #"{"channel":"A"}"#) == nil, "the unescaped form is not a token")
        #expect(Self.lookup(index, "plai") == nil)
        #expect(index.count == 6)

        index.remove("plain")
        #expect(Self.lookup(index, "plain") == nil && index.count == 5)
        index.remove("plain")
        #expect(index.count == 5, "removing what is not there changes nothing")

        let replacement = Self.route("", serial: 9)
        index.set(replacement, for: "")
        #expect(Self.lookup(index, "") === replacement && index.count == 5, "a spelling has one route")
    }

    @Test("keeps 5,000 routes apart, whatever their hashes share")
    func manyRoutes() {
        var index = RouteIndex()
        let identifiers = (0..<5_000).map { #"{"channel":"BenchChannel","sub":\#($0)}"# }
        let routes = identifiers.enumerated().map { Self.route($1, serial: $0) }
        for (identifier, route) in zip(identifiers, routes) { index.set(route, for: identifier) }
        for (identifier, route) in zip(identifiers, routes) {
            let token = String(decoding: RouteIndex.token(for: identifier), as: UTF8.self)
            #expect(Self.lookup(index, token) === route)
        }
        #expect(index.count == 5_000)
    }
}
