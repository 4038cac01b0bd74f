import CableReactive
import CableTesting
import Foundation
import Testing

/// The server seen from raw sockets: exact bytes, HTTP answers and the rules for bad input.
@Suite("LocalCableServer on the wire")
struct ServerWireTests {
    static func json(_ text: String?) -> JSONValue? { text.flatMap { try? JSONValue(parsing: $0) } }

    @Test("answers the upgrade per RFC 6455, then welcomes and pings with the Unix time")
    func upgradeWelcomePing() async throws {
        let before = Int(Date().timeIntervalSince1970)
        let server = try LocalCableServer(options: Fixture.serverOptions(pingInterval: 0.1))
        let socket = try RawSocket(port: server.port)
        let head = try #require(await socket.upgrade())
        let lines = head.components(separatedBy: "\r\n")
        #expect(lines.first == "HTTP/1.1 101 Switching Protocols")
        #expect(lines.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
        #expect(lines.contains("Sec-WebSocket-Protocol: actioncable-v1-json"))
        #expect(await socket.nextText() == #"{"type":"welcome"}"#)
        let ping = try #require(Self.json(await socket.nextText(skipPings: false)))
        #expect(ping["type"] == "ping")
        let sent = try #require(ping["message"]?.intValue)
        // The first ping read may have waited in the socket while this task was not scheduled: bound it by the
        // wall clock before the server started and after the ping was read.
        #expect((before - 1...Int(Date().timeIntervalSince1970) + 1).contains(sent))
    }

    @Test(
        "chooses the first offered subprotocol it knows, or none",
        arguments: [
            ("bogus, actioncable-v1-json", "actioncable-v1-json"),
            ("actioncable-unsupported, actioncable-v1-json", "actioncable-unsupported"),
            ("bogus", nil), (nil, nil),
        ] as [(String?, String?)])
    func subprotocols(offered: String?, chosen: String?) async throws {
        let server = try LocalCableServer()
        let socket = try RawSocket(port: server.port)
        let head = try #require(await socket.upgrade(protocols: offered))
        let header = head.components(separatedBy: "\r\n").first { $0.hasPrefix("Sec-WebSocket-Protocol:") }
        #expect(header == chosen.map { "Sec-WebSocket-Protocol: \($0)" })
        #expect(await socket.nextText() == #"{"type":"welcome"}"#)
    }

    @Test("adds the session id to the welcome when asked")
    func sessionID() async throws {
        var options = LocalCableServer.Options()
        options.includesSessionID = true
        let server = try LocalCableServer(options: options)
        let socket = try RawSocket(port: server.port)
        _ = await socket.upgrade()
        #expect(Self.json(await socket.nextText()) == ["type": "welcome", "sid": "1"])
    }

    /// A request the server must refuse, named for the test report.
    struct Refused: Sendable, CustomTestStringConvertible {
        let name: String
        let request: String
        let status: Int
        var testDescription: String { "\(name) → \(status)" }

        static let all = [
            Refused(name: "plain GET", request: "GET /cable HTTP/1.1\r\nHost: x\r\n\r\n", status: 404),
            Refused(name: "other path", request: RawSocket.upgradeRequest(path: "/other"), status: 404),
            Refused(name: "path below the mount", request: RawSocket.upgradeRequest(path: "/cable/x"), status: 404),
            Refused(
                name: "POST", request: RawSocket.upgradeRequest().replacingOccurrences(of: "GET", with: "POST"),
                status: 404),
            Refused(
                name: "version 8",
                request: RawSocket.upgradeRequest().replacingOccurrences(of: "Version: 13", with: "Version: 8"),
                status: 400),
            Refused(
                name: "short key",
                request: RawSocket.upgradeRequest().replacingOccurrences(
                    of: "dGhlIHNhbXBsZSBub25jZQ==", with: "c2hvcnQ="),
                status: 400),
            Refused(name: "no request line", request: "BLAH\r\n\r\n", status: 400),
            Refused(name: "header without colon", request: "GET /cable HTTP/1.1\r\nbroken\r\n\r\n", status: 400),
            Refused(name: "empty head", request: "\r\n\r\n", status: 400),
            Refused(
                name: "20 KB head",
                request: "GET / HTTP/1.1\r\nX: " + String(repeating: "a", count: 20_000) + "\r\n\r\n", status: 431),
            Refused(name: "endless head", request: String(repeating: "a", count: 20_000), status: 431),
        ]
    }

    @Test("answers requests it will not upgrade with an HTTP error and closes", arguments: Refused.all)
    func httpErrors(refused: Refused) async throws {
        let server = try LocalCableServer()
        let socket = try RawSocket(port: server.port)
        socket.send(refused.request)
        let response = await socket.readResponseToEnd()
        #expect(response.hasPrefix("HTTP/1.1 \(refused.status) "))
        if refused.status == 404 { #expect(response.hasSuffix("\r\n\r\nPage not found")) }
        #expect(server.connectionCount.value == 0)
    }

    @Test("a rejecting connection rule answers with its status; the request is recorded with it")
    func ruleStatus() async throws {
        let server = try LocalCableServer()
        server.connectionRule = { request in request.header("X-Let-In") == "yes" ? .accept : .reject(status: 403) }
        let socket = try RawSocket(port: server.port)
        socket.send(RawSocket.upgradeRequest(extra: ["X-Let-In: no"]))
        #expect(await socket.readResponseToEnd().hasPrefix("HTTP/1.1 403 Forbidden\r\n"))
        let admitted = try RawSocket(port: server.port)
        #expect(await admitted.upgrade(extra: ["X-Let-In: yes"])?.hasPrefix("HTTP/1.1 101") == true)
        #expect(server.requests.map(\.status) == [403, 101])
        #expect(server.requests.first?.header("x-let-in") == "no")
    }

    @Test("an unauthorized decision upgrades, sends the Rails disconnect and closes with 1000")
    func unauthorized() async throws {
        let server = try LocalCableServer()
        server.connectionRule = { _ in .unauthorized }
        let socket = try RawSocket(port: server.port)
        #expect(await socket.upgrade()?.hasPrefix("HTTP/1.1 101") == true)
        #expect(
            Self.json(await socket.nextText()) == ["type": "disconnect", "reason": "unauthorized", "reconnect": false])
        socket.send(RawSocket.clientFrame(.close, [0x03, 0xE8]))
        #expect(await socket.waitForClose() == (1000, true))
    }

    @Test("confirms and rejects with the identifier exactly as sent, and answers duplicates with nothing")
    func identifiersVerbatim() async throws {
        let server = try LocalCableServer()
        server.subscriptionRule = { params, _ in params["channel"] == "No" ? .reject : .confirm }
        let socket = try RawSocket(port: server.port)
        _ = await socket.upgrade()
        _ = await socket.nextText()
        let spaced = #"{"channel": "EchoChannel",  "z":1, "a":2}"#
        socket.sendText(#"{"command":"subscribe","identifier":\#(ServerWireTests.quoted(spaced))}"#)
        #expect(Self.json(await socket.nextText()) == ["identifier": .string(spaced), "type": "confirm_subscription"])
        socket.sendText(#"{"command":"subscribe","identifier":\#(ServerWireTests.quoted(spaced))}"#)
        socket.sendText(#"{"command":"subscribe","identifier":"{\"channel\":\"No\"}"}"#)
        #expect(
            Self.json(await socket.nextText()) == [
                "identifier": #"{"channel":"No"}"#, "type": "reject_subscription",
            ])
        #expect(server.connections.first?.subscriptions == [spaced])
        server.broadcast(["hi": 1], to: spaced)
        #expect(Self.json(await socket.nextText()) == ["identifier": .string(spaced), "message": ["hi": 1]])
    }

    static func quoted(_ text: String) -> String { JSONValue.string(text).description }

    @Test("holds commands sent before the welcome and runs them after it")
    func heldCommands() async throws {
        var options = LocalCableServer.Options()
        options.welcome = .never
        let server = try LocalCableServer(options: options)
        let socket = try RawSocket(port: server.port, timeout: 0.3)
        _ = await socket.upgrade()
        socket.sendText(#"{"command":"subscribe","identifier":"{\"channel\":\"A\"}"}"#)
        #expect(await socket.nextEvent() == .timeout)
        #expect(server.commands.count == 1)
        server.sendWelcome(.connection(LocalCableServer.ConnectionID(1)))
        #expect(await socket.nextText() == #"{"type":"welcome"}"#)
        #expect(Self.json(await socket.nextText())?["type"] == "confirm_subscription")
    }

    @Test("closes with 1008 when too many commands wait for the welcome")
    func tooManyHeld() async throws {
        var options = LocalCableServer.Options()
        options.welcome = .never
        options.maxBufferedCommands = 3
        let server = try LocalCableServer(options: options)
        let socket = try RawSocket(port: server.port)
        _ = await socket.upgrade()
        for _ in 0..<4 { socket.sendText(#"{"command":"subscribe","identifier":"{\"channel\":\"A\"}"}"#) }
        #expect(await socket.waitForClose() == (1008, true))
    }

    @Test("answers pings with pongs, joins fragments and echoes a client close")
    func controlFrames() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions(pingInterval: nil))
        let socket = try RawSocket(port: server.port)
        _ = await socket.upgrade()
        _ = await socket.nextText()
        socket.send(RawSocket.clientFrame(.ping, Array("are you there".utf8)))
        #expect(await socket.nextEvent() == .frame(Frame(opcode: .pong, payload: Array("are you there".utf8))))
        let subscribe = Array(#"{"command":"subscribe","identifier":"{\"channel\":\"A\"}"}"#.utf8)
        socket.send(RawSocket.clientFrame(.text, Array(subscribe[..<10]), fin: false))
        socket.send(RawSocket.clientFrame(.ping, []))
        socket.send(RawSocket.clientFrame(.continuation, Array(subscribe[10...])))
        #expect(await socket.nextEvent() == .frame(Frame(opcode: .pong, payload: [])))
        #expect(Self.json(await socket.nextText())?["type"] == "confirm_subscription")
        socket.send(RawSocket.clientFrame(.close, [0x0F, 0xA0] + Array("bye".utf8)))
        #expect(await socket.waitForClose() == (4000, true))
    }

    /// Bytes that break the framing rules after an upgrade, and the close code they earn.
    struct Violation: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        let code: UInt16
        var testDescription: String { "\(name) → \(code)" }

        static let all = [
            Violation(name: "unmasked frame", bytes: [0x81, 0x02, 0x68, 0x69], code: 1002),
            Violation(name: "reserved bits", bytes: [0xF1] + RawSocket.clientFrame(.text, []).dropFirst(), code: 1002),
            Violation(name: "binary message", bytes: RawSocket.clientFrame(.binary, [1, 2, 3]), code: 1003),
            Violation(name: "invalid UTF-8", bytes: RawSocket.clientFrame(.text, [0xC3, 0x28]), code: 1007),
            Violation(name: "continuation first", bytes: RawSocket.clientFrame(.continuation, [0x61]), code: 1002),
            Violation(name: "bad close code", bytes: RawSocket.clientFrame(.close, [0x03, 0xED]), code: 1002),
            Violation(
                name: "too big", bytes: RawSocket.clientFrame(.text, [UInt8](repeating: 0x61, count: 5000)), code: 1009),
            Violation(name: "garbage", bytes: Array("not a websocket frame at all".utf8), code: 1002),
        ]
    }

    @Test("closes with the code of each framing violation", arguments: Violation.all)
    func violations(violation: Violation) async throws {
        var options = LocalCableServer.Options()
        options.maxMessageSize = 4096
        let server = try LocalCableServer(options: options)
        let socket = try RawSocket(port: server.port)
        _ = await socket.upgrade()
        _ = await socket.nextText()
        socket.send(violation.bytes)
        #expect(await socket.waitForClose() == (violation.code, true))
        #expect(await server.connectionCount.first(within: 5) { $0 == 0 } == 0)
    }

    @Test("a disconnect sends the frame and a 1000 close, then closes even if the client never answers")
    func disconnectFrames() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions())
        let socket = try RawSocket(port: server.port)
        _ = await socket.upgrade()
        _ = await socket.nextText()
        server.disconnect(reason: nil, reconnect: true)
        #expect(Self.json(await socket.nextText()) == ["type": "disconnect", "reason": nil, "reconnect": true])
        #expect(server.connections.first?.isClosing == true)
        #expect(await socket.waitForClose() == (1000, true))
        #expect(await server.connectionCount.first(within: 5) { $0 == 0 } == 0)
    }

    @Test("drop ends the stream without a close frame; stall silences the socket but keeps it open")
    func dropAndStall() async throws {
        let server = try LocalCableServer(options: Fixture.serverOptions(pingInterval: 0.05))
        let dropped = try RawSocket(port: server.port)
        _ = await dropped.upgrade()
        let stalled = try RawSocket(port: server.port, timeout: 0.4)
        _ = await stalled.upgrade()
        _ = await stalled.nextText()
        server.stall(.connection(LocalCableServer.ConnectionID(2)))
        server.drop(.connection(LocalCableServer.ConnectionID(1)))
        #expect(await dropped.waitForClose() == (nil, true))
        // Whatever was queued before the stall may still arrive; then nothing, not even pings.
        while case .frame = await stalled.nextEvent() {}
        #expect(await stalled.nextEvent() == .timeout)
        #expect(server.connectionCount.value == 1)
        #expect(server.connections.first?.isStalled == true)
        server.drop()
        #expect(await stalled.waitForClose().ended)
    }

    @Test("closes a socket that sends no request within the handshake timeout, and sockets beyond the limit")
    func handshakeTimeoutAndLimit() async throws {
        var options = LocalCableServer.Options()
        options.handshakeTimeout = 0.2
        options.maxConnections = 2
        let server = try LocalCableServer(options: options)
        let silent = try RawSocket(port: server.port)
        let second = try RawSocket(port: server.port)
        let third = try RawSocket(port: server.port)
        #expect(await third.waitForClose() == (nil, true))
        #expect(await silent.waitForClose() == (nil, true))
        #expect(await second.waitForClose() == (nil, true))
        #expect(server.snapshot.value.acceptedCount == 3)
    }

    @Test("drops a connection that lets more than maxOutboundBytes pile up unread")
    func outboundLimit() async throws {
        var options = LocalCableServer.Options()
        options.maxOutboundBytes = 64 * 1024
        let server = try LocalCableServer(options: options)
        let socket = try RawSocket(port: server.port)
        _ = await socket.upgrade()
        socket.sendText(#"{"command":"subscribe","identifier":"{\"channel\":\"A\"}"}"#)
        #expect(await server.wait { $0.connections.first?.subscriptions.count == 1 })
        let payload = JSONValue.string(String(repeating: "x", count: 60_000))
        for _ in 0..<400 where server.connectionCount.value == 1 {
            server.broadcast(payload, to: #"{"channel":"A"}"#)
        }
        #expect(server.connectionCount.value == 0)
    }

    @Test("keeps the newest requests and commands within the history limits")
    func historyLimits() async throws {
        var options = LocalCableServer.Options()
        options.historyLimit = 3
        options.historyByteLimit = 100
        let server = try LocalCableServer(options: options)
        var sockets: [RawSocket] = []
        for _ in 0..<4 {
            let socket = try RawSocket(port: server.port)
            _ = await socket.upgrade()
            sockets.append(socket)
        }
        #expect(await server.wait { $0.connections.count == 4 })
        #expect(server.requests.map(\.connection.rawValue) == [2, 3, 4])
        for n in 0..<5 { sockets[0].sendText(#"{"n":\#(n)}"#) }
        #expect(await server.wait { $0.commands.last?.text == #"{"n":4}"# })
        #expect(server.commands.map(\.text) == [#"{"n":2}"#, #"{"n":3}"#, #"{"n":4}"#])
        // 7 + 7 + 90 bytes pass the 100-byte limit: the oldest go until the rest fits.
        let long = String(repeating: "x", count: 90)
        sockets[0].sendText(long)
        #expect(await server.wait { $0.commands.last?.text == long })
        #expect(server.commands.map(\.text) == [#"{"n":4}"#, long])
        sockets[0].sendText(String(repeating: "y", count: 101))
        #expect(await server.wait { $0.commands.isEmpty })
    }

    @Test("random bytes before and after the upgrade never stop the server from serving")
    func randomBytes() async throws {
        var options = LocalCableServer.Options()
        options.closeTimeout = 0.2
        options.handshakeTimeout = 0.5
        let server = try LocalCableServer(options: options)
        var random = SeededRandom(seed: 42)
        for round in 0..<150 {
            let socket = try RawSocket(port: server.port, timeout: 0.3)
            let count = Int.random(in: 1...2048, using: &random)
            var garbage = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            if round % 2 == 0 { garbage += [13, 10, 13, 10] }  // a complete (bad) head: answered at once
            if round % 2 == 1 {
                _ = await socket.upgrade()
                _ = await socket.nextText()
                // Half the time, start with a valid masked header so the garbage lands in a payload.
                if round % 4 == 1 { socket.send(RawSocket.clientFrame(.text, Array(#"{"command":"#.utf8))) }
            }
            socket.send(garbage)
            _ = await socket.waitForClose()
        }
        let client = try Fixture.client(server)
        client.connect()
        #expect(await client.reaches(.connected))
        #expect(await server.connectionCount.first(within: 5) { $0 == 1 } == 1)
    }
}
