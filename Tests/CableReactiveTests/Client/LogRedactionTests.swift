import CableReactive
import CableTesting
import Dispatch
import Foundation
import Signals
import Testing

@Suite("Logging", .serialized)
struct LogRedactionTests {
    @Test("no log line contains secrets from the URL, headers, cookies, params, payloads, reasons or errors")
    func noSecretsInLogs() async throws {
        let sentinels = (0..<12).map { "S3CR3T\($0)X" }
        let lines = Locked<[String]>([])
        let previous = CableLog.logger
        CableLog.logger = CableLogger(minimumLevel: .debug) { level, line in
            lines.withLock { $0.append("\(level) \(line)") }
        }
        defer { CableLog.logger = previous }

        let url = try #require(
            URL(
                string:
                    "wss://user\(sentinels[0]):pw\(sentinels[1])@cable.test:8443/cable/\(sentinels[2])?token=\(sentinels[3])"
            ))
        struct Boom: Error { let text: String }
        let fake = FakeTransport()
        let scheduler = ManualScheduler()
        let attempts = Locked(0)
        let client = try ActionCableClient(
            url: url, transport: fake, scheduler: scheduler,
            onRequest: { request in
                request.setHeader("Authorization", "Bearer \(sentinels[4])")
                request.setHeader("Cookie", "token=\(sentinels[5])")
                let n = attempts.withLock { n -> Int in
                    n += 1
                    return n
                }
                if n == 2 { throw Boom(text: sentinels[6]) }
            },
            onUnauthorized: { throw Boom(text: sentinels[7]) })
        let room = try client.subscribe(["channel": "ChatChannel", "secret": .string(sentinels[8])])
        client.connect()
        for _ in 0..<100_000 where fake.connections.isEmpty { await Task.yield() }
        let connection = try #require(fake.last)
        connection.open()
        connection.receive(#"{"type":"welcome"}"#)
        connection.receive(#"{"identifier":\#(ClientHarness.quoted(room.identifier)),"type":"confirm_subscription"}"#)
        for n in 0..<300 {
            connection.receive(
                #"{"identifier":\#(ClientHarness.quoted(room.identifier)),"message":{"p":"\#(sentinels[9])\#(n)"}}"#)
        }
        connection.receive(#"{"identifier":"{\"channel\":\"\#(sentinels[10])\"}","message":1}"#)
        connection.receive("not json \(sentinels[10])")
        connection.receive(#"{"type":"disconnect","reason":"\#(sentinels[11])","reconnect":true}"#)
        scheduler.advance(by: 1.25)
        scheduler.flush()
        client.close()
        scheduler.flush()

        let logged = lines.withLock { $0 }
        #expect(logged.count > 5)
        for line in logged {
            for sentinel in sentinels { #expect(!line.contains(sentinel), "\(line)") }
            #expect(!line.contains("/cable"), "\(line)")
        }
        #expect(logged.contains { $0.contains("host=cable.test:8443") })
        #expect(logged.contains { $0.hasPrefix("WARN buffer_overflow") })
        #expect(logged.contains { $0.contains("reason=other") })
    }

    @Test(
        "delays print with three decimals, without Foundation's formatter",
        arguments: [
            (0, "0.000"), (1.25, "1.250"), (0.0005, "0.001"), (0.0004, "0.000"), (-0.02, "-0.020"), (12.3456, "12.346"),
            (30, "30.000"), (Double.infinity, "inf"), (1e20, "1e+20"),
        ] as [(Double, String)])
    func threePlaces(value: Double, text: String) {
        #expect(DecimalText.threePlaces(value) == text)
    }

    @Test("a message that does not decode logs its key path at DEBUG, and never a value")
    func decodeFailureKeyPath() async throws {
        struct Line: Decodable, Sendable { let user: String }
        let lines = Locked<[String]>([])
        let previous = CableLog.logger
        CableLog.logger = CableLogger(minimumLevel: .debug) { level, line in
            lines.withLock { $0.append("\(level) \(line)") }
        }
        defer { CableLog.logger = previous }
        let h = try ClientHarness()
        let room = try h.client.subscribe(["channel": "ChatChannel"])
        let connection = try #require(h.connected())
        var typed = room.messages(as: Line.self).makeAsyncIterator()
        connection.receive(ClientHarness.message(room.identifier, #"{"user":7,"note":"S3CR3T"}"#))
        connection.receive(ClientHarness.message(room.identifier, #"{"user":"ok"}"#))
        #expect(await typed.next()?.user == "ok")
        let logged = lines.withLock { $0 }
        #expect(logged.contains { $0.hasPrefix("DEBUG decode_failed") && $0.contains("path=user") }, "\(logged)")
        #expect(!logged.contains { $0.contains("S3CR3T") || $0.contains("=7") })
        h.client.close()
    }

    @Test("a client's own logger gets only its lines, labelled; the process-wide logger gets the others")
    func perClientLoggerAndLabel() throws {
        let chat = Locked<[String]>([])
        let global = Locked<[String]>([])
        let previous = CableLog.logger
        CableLog.logger = CableLogger(minimumLevel: .debug) { _, line in global.withLock { $0.append(line) } }
        defer { CableLog.logger = previous }
        var options = CableOptions()
        options.logLabel = "chat main=x"  // reduced to safe characters
        let ownFake = FakeTransport()
        let own = try ActionCableClient(
            url: ClientHarness.url, options: options, transport: ownFake, scheduler: ManualScheduler(),
            logger: CableLogger(minimumLevel: .debug) { _, line in chat.withLock { $0.append(line) } })
        let otherFake = FakeTransport()
        let other = try ActionCableClient(url: ClientHarness.url, transport: otherFake, scheduler: ManualScheduler())
        own.connect()
        other.connect()
        own.close()
        other.close()
        let ownLines = chat.withLock { $0 }
        let globalLines = global.withLock { $0 }
        #expect(!ownLines.isEmpty && ownLines.allSatisfy { $0.contains(" client=chat?main?x ") }, "\(ownLines)")
        #expect(!globalLines.isEmpty && globalLines.allSatisfy { !$0.contains("client=") }, "\(globalLines)")
    }

    @Test("the default logger is silent")
    func silentByDefault() {
        #expect(CableLogger.none.minimumLevel == .error)
    }
}
