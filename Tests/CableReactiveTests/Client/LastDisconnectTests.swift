import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

@testable import CableReactive

/// `lastDisconnect`: why the last session was lost or the last attempt failed, as a typed value.
@Suite("ActionCableClient: lastDisconnect")
struct LastDisconnectTests {
    static func last(_ h: ClientHarness) -> CableDisconnect? {
        h.scheduler.flush()
        return h.client.lastDisconnect.value
    }

    @Test("a server disconnect records its reason and reconnect flag, on a welcomed session")
    func serverDisconnect() throws {
        let h = try ClientHarness()
        let connection = try #require(h.connected())
        #expect(Self.last(h) == nil)
        connection.receive(#"{"type":"disconnect","reason":"server_restart","reconnect":true}"#)
        let last = try #require(Self.last(h))
        #expect(last.kind == .serverDisconnect)
        #expect(last.serverReason == "server_restart" && last.reconnect == true)
        #expect(last.wasConnected && last.attempt == 0)
        connection.finishClose()  // the transport's own end after the disconnect adds nothing
        #expect(Self.last(h) == last)
    }

    @Test("an upgrade refused with an HTTP status is a failed attempt with that status (a wrong Origin: 404)")
    func refusedUpgrade() throws {
        let h = try ClientHarness()
        h.client.connect()
        let connection = try #require(h.fake.last)
        connection.fail(WebSocketError(.upgradeRejected(status: 404)))
        let last = try #require(Self.last(h))
        #expect(last.kind == .failed && last.httpStatus == 404)
        #expect(!last.wasConnected && last.attempt == 0)
        #expect(h.state == .connecting(attempt: 1))
    }

    @Test("a server that chose actioncable-unsupported is recorded before the client stops")
    func unsupportedProtocol() throws {
        let h = try ClientHarness()
        // What the observers of both, on the callback queue, are told, in order.
        let seen = Locked<[String]>([])
        let tokens = [
            h.client.lastDisconnect.observe { last in
                seen.withLock { $0.append("last \(last?.kind.description ?? "nil")") }
            },
            h.client.state.observe { state in seen.withLock { $0.append("state \(state)") } },
        ]
        h.client.connect()
        let connection = try #require(h.fake.last)
        connection.open(subprotocol: "actioncable-unsupported")
        let last = try #require(Self.last(h))
        #expect(last.kind == .unsupportedProtocol && last.kind.description == "unsupported_protocol")
        #expect(!last.wasConnected && last.attempt == 0 && last.error == nil)
        #expect(h.state == .stopped(reason: .unsupportedProtocol))
        // Published before the stop, as every disconnect is published before the state that follows it.
        h.scheduler.flush()
        let told = seen.withLock { $0 }
        let lost = try #require(told.firstIndex(of: "last unsupported_protocol"))
        let stopped = try #require(told.firstIndex(of: "state stopped(reason: unsupported_protocol)"))
        #expect(lost < stopped)
        connection.finishClose()  // the transport's own end adds nothing
        #expect(Self.last(h) == last)
        withExtendedLifetime(tokens) {}
    }

    @Test("a close frame records its code; a drop without one records the transport error")
    func closeAndDrop() throws {
        let h = try ClientHarness()
        let first = try #require(h.connected())
        first.serverClose(code: WebSocketCloseCode(rawValue: 4001))
        #expect(Self.last(h)?.kind == .closed)
        #expect(Self.last(h)?.closeCode?.rawValue == 4001)
        h.scheduler.advance(by: 1.25)
        let second = try #require(h.welcome())
        second.fail()
        #expect(Self.last(h)?.kind == .failed)
        #expect(Self.last(h)?.error?.kind == .abnormalClosure)
    }

    @Test("staleness and a missing welcome are told apart")
    func staleAndWelcomeTimeout() throws {
        var options = CableOptions()
        options.staleTimeout = 10
        let h = try ClientHarness(options: options)
        _ = try #require(h.connected())
        h.scheduler.advance(by: 10)
        #expect(Self.last(h)?.kind == .stale)
        #expect(Self.last(h)?.wasConnected == true)
        let reopened = try #require(h.fake.last)
        reopened.open()  // opened, never welcomed
        h.scheduler.advance(by: 10)
        #expect(Self.last(h)?.kind == .welcomeTimeout)
        #expect(Self.last(h)?.wasConnected == false)
    }

    @Test("an onRequest that throws is recorded as request_failed")
    func requestFailed() async throws {
        struct NoToken: Error {}
        let h = try ClientHarness(onRequest: { _ in throw NoToken() })
        h.client.connect()
        #expect(await h.eventually { h.client.lastDisconnect.value?.kind == .requestFailed })
    }

    @Test("the app's own disconnect, close and a closed gate record nothing")
    func appActionsRecordNothing() throws {
        let gate = MutableStateValue(true)
        let h = try ClientHarness(gate: gate.eraseToAnySignal())
        _ = try #require(h.connected())
        gate.value = false
        gate.value = true
        _ = h.welcome()
        h.client.disconnect()
        h.client.connect()
        _ = h.welcome()
        h.client.close()
        #expect(Self.last(h) == nil)
    }

    @Test("each loss is published, even one equal to the last")
    func everyLossIsPublished() throws {
        var options = CableOptions()
        options.staleTimeout = 10
        let h = try ClientHarness(options: options)
        let seen = Locked<[CableDisconnect?]>([])
        let token = h.client.lastDisconnect.observe { value in seen.withLock { $0.append(value) } }
        _ = try #require(h.connected())
        for _ in 0..<2 {
            h.scheduler.advance(by: 10)  // a healthy session goes stale: attempt 0 again, at once
            _ = h.welcome()
        }
        h.scheduler.flush()
        let losses = seen.withLock { $0 }.compactMap { $0 }
        #expect(losses.count == 2)
        #expect(losses.first == losses.last, "two equal records, both published")
        #expect(losses.first?.kind == .stale && losses.first?.attempt == 0)
        token.cancel()
    }

    @Test("nextAttempt is set exactly while the client waits to retry, with the backoff it asked for")
    func nextAttempt() throws {
        let h = try ClientHarness()
        func next() -> CableRetry? {
            h.scheduler.flush()
            return h.client.nextAttempt.value
        }
        h.client.connect()
        #expect(next() == nil, "an attempt in flight is not a wait")
        let first = try #require(h.fake.last)
        first.fail()
        let waiting = try #require(next())
        #expect(h.state == .connecting(attempt: 1) && waiting.attempt == 1)
        #expect(h.scheduler.pendingDelays.contains(waiting.delay), "the delay is the timer's")
        #expect(waiting.startsAt.timeIntervalSinceNow <= waiting.delay)
        h.client.connect()  // retry now
        #expect(next() == nil)
        try #require(h.fake.last).fail()
        let second = try #require(next())
        #expect(second.attempt == 2)
        h.scheduler.advance(by: second.delay)  // the timer fires: the attempt runs
        #expect(next() == nil)
        _ = h.welcome()
        #expect(next() == nil)
        try #require(h.fake.last).fail()
        #expect(next() != nil)
        h.client.disconnect()  // the app's own: no wait any more
        #expect(next() == nil)
    }
}
