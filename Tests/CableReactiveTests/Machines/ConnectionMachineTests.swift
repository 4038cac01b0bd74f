import CableTesting
import Foundation
import Testing

@testable import CableReactive

@Suite("ConnectionMachine: handshake and gate")
struct ConnectionHandshakeTests {
    @Test("connect with no gate value stays disconnected and logs gate_waiting once")
    func waitsForGate() {
        var h = MachineHarness()
        let actions = h.send(.connect)
        #expect(actions.contains(.publish(.disconnected)))
        #expect(actions.contains { if case .log(let e) = $0 { e.name.description == "gate_waiting" } else { false } })
        #expect(h.phase == .gated)
        let opened = h.send(.gate(true))
        #expect(opened.contains(.publish(.connecting(attempt: 0))))
        #expect(opened.contains { if case .prepareRequest = $0 { true } else { false } })
    }

    @Test("stays connecting until the welcome, then connects and starts the session")
    func staysConnectingUntilWelcome() {
        var h = MachineHarness()
        let id = h.start()
        #expect(h.state == .connecting(attempt: 0))
        #expect(h.log.contains(.openTransport(id: id)))
        let noted = h.noteFrame(id)
        #expect(!noted)
        #expect(h.state == .connecting(attempt: 0))
        let actions = h.send(.welcome(id: id))
        #expect(h.state == .connected)
        #expect(actions.contains(.sessionStarted(id: id)))
        #expect(MachineHarness.delays(actions, .watchdog) == [15])
    }

    @Test("no welcome within staleTimeout fails the attempt; pings before the welcome do not extend it")
    func handshakeDeadline() {
        var h = MachineHarness()
        let id = h.start()
        #expect(MachineHarness.delays(h.log, .watchdog) == [15])
        h.advance(10)
        let noted = h.noteFrame(id)
        #expect(!noted)
        h.advance(5)
        let actions = h.send(.timerFired(.watchdog, id: id))
        #expect(actions.contains(.closeTransport(id: id)))
        #expect(h.state == .connecting(attempt: 1))
        #expect(MachineHarness.delays(actions, .backoff).count == 1)
    }

    @Test("after the welcome any frame resets the silence limit: last frame at 14 s drops at 29 s")
    func silenceLimit() {
        var h = MachineHarness()
        let id = h.welcomed()
        h.advance(14)
        let noted = h.noteFrame(id)
        #expect(noted)
        h.advance(1)
        let rescheduled = h.send(.timerFired(.watchdog, id: id))
        #expect(MachineHarness.delays(rescheduled, .watchdog) == [14])
        #expect(h.state == .connected)
        h.advance(14)
        let stale = h.send(.timerFired(.watchdog, id: id))
        #expect(stale.contains(.closeTransport(id: id)))
        #expect(stale.contains(.sessionEnded))
        // Healthy (29 s ≥ 10 s) and stale: a new attempt starts at once, at attempt 0.
        #expect(stale.contains { if case .prepareRequest = $0 { true } else { false } })
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test("a silence a hair under staleTimeout counts as stale instead of re-arming the watchdog for the same instant")
    func watchdogBelowClockResolution() {
        var h = MachineHarness()
        h.now = 1000
        let id = h.welcomed()
        h.advance(15 - 1e-12)
        let actions = h.send(.timerFired(.watchdog, id: id))
        #expect(MachineHarness.delays(actions, .watchdog).allSatisfy { $0 >= 1 })
        #expect(actions.contains(.closeTransport(id: id)))
    }

    @Test("pings alone keep a welcomed session alive")
    func pingsKeepAlive() {
        var h = MachineHarness()
        let id = h.welcomed()
        for _ in 0..<20 {
            h.advance(3)
            h.noteFrame(id)
            if h.now.truncatingRemainder(dividingBy: 15) < 3 { h.send(.timerFired(.watchdog, id: id)) }
        }
        #expect(h.state == .connected)
    }

    @Test("traffic counts only on the live session; isLive says which that is without noting the traffic")
    func trafficOnLiveSessionOnly() {
        var h = MachineHarness()
        let first = h.welcomed()
        #expect(h.machine.isLive(first))
        let onLive = h.noteFrame(first)
        #expect(onLive)
        h.send(.transportClosed(id: first, unauthorized: false))
        #expect(!h.machine.isLive(first))
        let afterClose = h.noteFrame(first)
        #expect(!afterClose)
        h.fireBackoff()
        let second = h.welcomed()
        let late = h.noteFrame(first)
        #expect(!late)  // a replaced attempt's late traffic
        h.advance(14)
        #expect(h.machine.isLive(second))
        h.advance(1)
        // 15 s of silence since the welcome: asking isLive did not count as traffic.
        let stale = h.send(.timerFired(.watchdog, id: second))
        #expect(stale.contains(.closeTransport(id: second)))
    }

    @Test("closing the gate cancels the attempt and disconnects; opening it connects at once")
    func gateCancels() {
        var h = MachineHarness()
        let id = h.start()
        let closed = h.send(.gate(false))
        #expect(closed.contains(.closeTransport(id: id)))
        #expect(closed.contains(.cancelTimer(.backoff)))
        #expect(h.state == .disconnected)
        let reopened = h.send(.gate(true))
        #expect(reopened.contains { if case .prepareRequest = $0 { true } else { false } })
        // Closing the gate is not a failure: the attempt count stays.
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test("a gate that closes and opens over and over never raises the attempt count or uses up the limit")
    func gateFlappingIsNotFailure() {
        var h = MachineHarness(maxReconnectAttempts: 0)
        let id = h.start()
        for _ in 0..<5 {
            h.send(.gate(false))
            #expect(h.state == .disconnected)
            h.send(.gate(true))
            #expect(h.state == .connecting(attempt: 0))
        }
        // Also a short welcomed session that the gate ends.
        h.prepareAndOpen()
        if case .opening(let opening) = h.phase { h.send(.welcome(id: opening)) }
        #expect(h.state == .connected)
        h.advance(2)
        h.send(.gate(false))
        h.send(.gate(true))
        #expect(h.state == .connecting(attempt: 0))
        #expect(h.machine.attempt == 0)
        _ = id
    }

    @Test("the gate keeps a failed streak's count, and a healthy session's end still resets it")
    func gateKeepsCount() {
        var h = MachineHarness()
        let first = h.start()
        h.send(.transportClosed(id: first, unauthorized: false))
        h.fireBackoff()
        h.prepareAndOpen()
        #expect(h.state == .connecting(attempt: 1))
        h.send(.gate(false))
        h.send(.gate(true))
        #expect(h.state == .connecting(attempt: 1))
        let id = h.prepareAndOpen()
        h.send(.welcome(id: id))
        h.advance(10)
        h.send(.gate(false))
        h.send(.gate(true))
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test("connect while waiting to retry starts the attempt at once, at the same attempt number")
    func retryNow() {
        var h = MachineHarness()
        let first = h.start()
        h.send(.transportClosed(id: first, unauthorized: false))
        #expect(h.state == .connecting(attempt: 1))
        guard case .backingOff(let timer) = h.phase else {
            Issue.record("not backing off: \(h.phase)")
            return
        }
        let actions = h.send(.connect)
        #expect(actions.contains(.cancelTimer(.backoff)))
        #expect(actions.contains { if case .prepareRequest = $0 { true } else { false } })
        #expect(h.state == .connecting(attempt: 1))
        // The cancelled backoff timer, should it still fire, starts nothing more.
        #expect(h.send(.timerFired(.backoff, id: timer)).isEmpty)
    }

    @Test("connect does nothing while an attempt or its onUnauthorized call is in flight, connected or gated")
    func connectElsewhereIsInert() {
        var h = MachineHarness()
        h.send(.gate(true))
        h.send(.connect)
        #expect(h.phase == .preparing(id: h.currentID ?? 0))
        #expect(h.send(.connect).isEmpty)  // preparing
        let id = h.prepareAndOpen()
        #expect(h.send(.connect).isEmpty)  // opening
        h.send(.welcome(id: id))
        #expect(h.send(.connect).isEmpty)  // connected
        h.send(.serverDisconnect(id: id, reason: "unauthorized", reconnect: false))
        guard case .refreshing = h.phase else {
            Issue.record("not refreshing: \(h.phase)")
            return
        }
        #expect(h.send(.connect).isEmpty)  // refreshing
        h.send(.gate(false))
        #expect(h.phase == .gated)
        #expect(h.send(.connect).isEmpty)  // gated
    }

    @Test("gate changes while stopped do nothing")
    func gateIgnoredWhenStopped() {
        var h = MachineHarness()
        let id = h.welcomed()
        h.send(.serverDisconnect(id: id, reason: "remote", reconnect: false))
        #expect(h.state == .stopped(reason: .server("remote")))
        #expect(h.send(.gate(false)).allSatisfy { if case .log = $0 { true } else { false } })
        #expect(h.send(.gate(true)).allSatisfy { if case .log = $0 { true } else { false } })
        #expect(h.state == .stopped(reason: .server("remote")))
    }

    @Test("disconnect and close end everything; close is terminal and later calls only warn")
    func disconnectAndClose() {
        var h = MachineHarness()
        let id = h.welcomed()
        let down = h.send(.disconnect)
        #expect(down.contains(.closeTransport(id: id)))
        #expect(down.contains(.sessionEnded))
        #expect(h.state == .disconnected)
        h.send(.connect)
        #expect(h.state == .connecting(attempt: 0))
        h.send(.close)
        #expect(h.state == .closed)
        let late = h.send(.connect)
        #expect(late.allSatisfy { if case .log(let e) = $0 { e.level == .warn } else { false } })
        #expect(h.send(.close).isEmpty)
    }
}

@Suite("ConnectionMachine: backoff")
struct ConnectionBackoffTests {
    @Test("consecutive failures back off 1, 2, 4, 8, 16, 30, 30 s, each ±25%")
    func exponentialWithCap() {
        var h = MachineHarness()
        h.start()
        var delays: [TimeInterval] = []
        for _ in 0..<7 {
            delays.append(h.failOpen() ?? -1)
            h.fireBackoff()
            h.prepareAndOpen()
        }
        let bases: [TimeInterval] = [1, 2, 4, 8, 16, 30, 30]
        for (delay, base) in zip(delays, bases) {
            #expect((base * 0.75...base * 1.25).contains(delay), "delay \(delay) for base \(base)")
        }
        #expect(h.state == .connecting(attempt: 7))
    }

    @Test("the jitter is spread: 200 seeds cover both halves of ±25%")
    func jitterSpreads() {
        var below = 0
        var above = 0
        for seed in 0..<200 {
            var random = SeededRandom(seed: UInt64(seed))
            let delay = Backoff(min: 1, max: 30).delay(afterFailures: 3, using: &random)
            #expect((3...5).contains(delay))
            if delay < 4 { below += 1 } else { above += 1 }
        }
        #expect(below > 50 && above > 50)
    }

    @Test(
        "maxReconnectAttempts N allows N + 1 tries, then stops with max_reconnect_attempts",
        arguments: [0, 1, 3])
    func attemptLimit(limit: Int) {
        var h = MachineHarness(maxReconnectAttempts: limit)
        h.start()
        var tries = 1
        while h.failOpen() != nil {
            h.fireBackoff()
            h.prepareAndOpen()
            tries += 1
        }
        #expect(tries == limit + 1)
        #expect(h.state == .stopped(reason: .attemptsExhausted))
        h.send(.connect)
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test("a drop 9 s after the welcome continues the backoff; 11 s restarts at attempt 0 within minReconnectDelay")
    func healthyResets() {
        for (lifetime, healthy) in [(9.0, false), (11.0, true)] {
            var h = MachineHarness()
            h.start()
            _ = h.failOpen()
            h.fireBackoff()
            _ = h.failOpen()
            h.fireBackoff()
            let id = h.welcomed()
            h.advance(lifetime)
            let actions = h.send(.transportClosed(id: id, unauthorized: false))
            let delay = MachineHarness.delays(actions, .backoff).first ?? -1
            if healthy {
                #expect(h.state == .connecting(attempt: 0))
                #expect((0...1).contains(delay))
            } else {
                #expect(h.state == .connecting(attempt: 3))
                #expect((3...5).contains(delay))
            }
        }
    }

    @Test("healthy drops of ten seeded clients spread inside minReconnectDelay")
    func herdSpread() {
        var delays: [TimeInterval] = []
        for seed in 0..<10 {
            var h = MachineHarness()
            h.random = SeededRandom(seed: UInt64(seed))
            let id = h.start()
            h.send(.welcome(id: id))
            h.advance(20)
            delays += MachineHarness.delays(h.send(.transportClosed(id: id, unauthorized: false)), .backoff)
        }
        #expect(delays.count == 10)
        #expect(delays.allSatisfy { (0...1).contains($0) })
        #expect(Set(delays.map { Int($0 * 10) }).count >= 5)
    }
}

@Suite("ConnectionMachine: server disconnects and authorization")
struct ServerDisconnectTests {
    @Test("actioncable-unsupported stops for good, closes the transport and logs the kind at WARN")
    func unsupportedProtocolStops() throws {
        var h = MachineHarness(maxReconnectAttempts: nil)
        let id = h.start()
        let actions = h.send(.unsupportedProtocol(id: id))
        #expect(h.state == .stopped(reason: .unsupportedProtocol))
        // The disconnect is recorded, before the state that follows it.
        let lost = try #require(
            actions.firstIndex { action in
                if case .lost(let disconnect) = action { return disconnect.kind == .unsupportedProtocol }
                return false
            })
        let stopped = try #require(actions.firstIndex(of: .publish(.stopped(reason: .unsupportedProtocol))))
        #expect(lost < stopped)
        #expect(actions.contains(.closeTransport(id: id)))
        #expect(actions.contains(.cancelTimer(.watchdog)))
        #expect(MachineHarness.delays(actions, .backoff).isEmpty)
        let warnings = actions.compactMap { action -> String? in
            guard case .log(let event) = action, event.level == .warn else { return nil }
            return event.render(host: "h")
        }
        #expect(warnings == ["stopped host=h kind=unsupported_protocol"])
        // Stale events of that attempt change nothing; connect() starts over at attempt 0.
        #expect(h.send(.welcome(id: id)).isEmpty)
        h.send(.connect)
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test(
        "a permanent transport failure stops at once, whatever maxReconnectAttempts says; others are retried",
        arguments: [
            (WebSocketError.Kind.certificate, true), (.insecureConnectionBlocked, true), (.tlsUnavailable, true),
            (.invalidURL, true), (.invalidProxy, true), (.proxyRejected(status: 407), true),
            (.proxyRejected(status: 401), true), (.proxyRejected(status: 403), true),
            (.proxyRejected(status: 502), false),
            (.tls, false), (.connectionRefused, false), (.networkUnavailable, false), (.dnsFailure, false),
            (.upgradeRejected(status: 404), false),
        ])
    func permanentFailureStops(kind: WebSocketError.Kind, permanent: Bool) {
        var h = MachineHarness(maxReconnectAttempts: nil)
        let id = h.start()
        let error = WebSocketError(kind, detail: "URLError -1202")
        let actions = h.send(.transportClosed(id: id, unauthorized: false, info: .failed(error)))
        if permanent {
            #expect(h.state == .stopped(reason: .permanentFailure(error)))
            #expect(MachineHarness.delays(actions, .backoff).isEmpty)
            guard case .stopped(let reason) = h.state else { return }
            #expect(reason.kind == .permanentFailure && reason.error?.kind == kind && reason.serverReason == nil)
            #expect(reason.description == "permanent_failure(\(kind))")
            h.send(.connect)  // the app fixed it (or the user trusts the network now): start over
            #expect(h.state == .connecting(attempt: 0))
        } else {
            #expect(h.state == .connecting(attempt: 1))
            #expect(MachineHarness.delays(actions, .backoff).count == 1)
        }
    }

    @Test("a welcome deadline that fires early is re-armed for the rest of staleTimeout, then fails the attempt")
    func earlyWelcomeDeadline() {
        var h = MachineHarness(staleTimeout: 15)
        let id = h.start()
        h.advance(4)  // e.g. the wall clock was set forward: the timer fires 11 s before its time
        let early = h.send(.timerFired(.watchdog, id: id))
        #expect(MachineHarness.delays(early, .watchdog) == [11])
        #expect(h.phase == .opening(id: id))
        h.advance(11)
        h.send(.timerFired(.watchdog, id: id))
        #expect(h.state == .connecting(attempt: 1))
    }

    @Test("a permanent failure of a replaced attempt is ignored")
    func stalePermanentFailure() {
        var h = MachineHarness()
        let first = h.start()
        h.send(.transportClosed(id: first, unauthorized: false))
        h.fireBackoff()
        #expect(h.prepareAndOpen() != first)
        let stale = h.send(
            .transportClosed(id: first, unauthorized: false, info: .failed(WebSocketError(.certificate))))
        #expect(stale.isEmpty)
        #expect(h.state == .connecting(attempt: 1))
    }

    @Test("an unsupported protocol from a replaced attempt is ignored")
    func staleUnsupportedProtocol() {
        var h = MachineHarness()
        let first = h.start()
        h.send(.transportClosed(id: first, unauthorized: false))
        h.fireBackoff()
        #expect(h.prepareAndOpen() != first)
        #expect(h.send(.unsupportedProtocol(id: first)).isEmpty)
        #expect(h.state == .connecting(attempt: 1))
    }

    @Test("a server reason that spells a client reason stays the server's")
    func serverReasonIsNotClientReason() {
        var h = MachineHarness()
        let id = h.welcomed()
        h.send(.serverDisconnect(id: id, reason: "max_reconnect_attempts", reconnect: false))
        #expect(h.state == .stopped(reason: .server("max_reconnect_attempts")))
        #expect(h.state != .stopped(reason: .attemptsExhausted))
        #expect(
            CableStopReason.server("max_reconnect_attempts").description
                == #"server_disconnect("max_reconnect_attempts")"#)
        #expect(CableStopReason.attemptsExhausted.description == "attempts_exhausted")
    }

    @Test("every stop is logged at WARN with its kind and never the server's text")
    func stopsAreWarnings() {
        var h = MachineHarness()
        let id = h.welcomed()
        let actions = h.send(.serverDisconnect(id: id, reason: "secret-\u{1F512}", reconnect: false))
        let lines = actions.compactMap { action -> String? in
            guard case .log(let event) = action, event.level == .warn else { return nil }
            return event.render(host: "h")
        }
        #expect(lines == ["stopped host=h kind=server_disconnect"])
    }

    @Test("the server_disconnect line names its fields: reason=remote reconnect=false, never flag=")
    func serverDisconnectLineSaysWhatItMeans() {
        var h = MachineHarness()
        let id = h.welcomed()
        let actions = h.send(.serverDisconnect(id: id, reason: "remote", reconnect: false))
        let lines = actions.compactMap { action -> String? in
            guard case .log(let event) = action else { return nil }
            let line = event.render(host: "h")
            return line.hasPrefix("server_disconnect ") ? line : nil
        }
        #expect(lines == ["server_disconnect host=h reason=remote reconnect=false"])
    }

    @Test("reconnect true reconnects with backoff; false or missing stops with the reason")
    func reconnectFlag() {
        var h = MachineHarness()
        var id = h.welcomed()
        h.send(.serverDisconnect(id: id, reason: "server_restart", reconnect: true))
        #expect(h.state == .connecting(attempt: 1))
        h.fireBackoff()
        id = h.welcomed()
        h.send(.serverDisconnect(id: id, reason: nil, reconnect: nil))
        #expect(h.state == .stopped(reason: .server(nil)))
        h.send(.connect)
        id = h.welcomed()
        h.send(.serverDisconnect(id: id, reason: "remote", reconnect: false))
        #expect(h.state == .stopped(reason: .server("remote")))
    }

    @Test("unauthorized with a refreshing handler reconnects at once at the same attempt, uncounted")
    func refreshedUnauthorized() {
        var h = MachineHarness(maxReconnectAttempts: 0)
        let id = h.start()
        let actions = h.send(.serverDisconnect(id: id, reason: "unauthorized", reconnect: false))
        guard case .refreshing(let hook, _) = h.phase else {
            Issue.record("expected refreshing, got \(h.phase)")
            return
        }
        #expect(actions.contains(.callUnauthorized(id: hook)))
        let refreshed = h.send(.unauthorizedAnswered(id: hook, refreshed: true))
        #expect(refreshed.contains { if case .prepareRequest = $0 { true } else { false } })
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test("a declined refresh stops with the reason; connect restarts at attempt 0")
    func declinedRefresh() {
        var h = MachineHarness()
        let id = h.start()
        h.send(.serverDisconnect(id: id, reason: "token_expired", reconnect: false))
        guard case .refreshing(let hook, _) = h.phase else { return recordFailure("not refreshing") }
        h.send(.unauthorizedAnswered(id: hook, refreshed: false))
        #expect(h.state == .stopped(reason: .unauthorized(serverReason: "token_expired")))
        h.send(.connect)
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test("a throwing handler is a failed attempt with backoff; with no retries left it stops")
    func throwingHandler() {
        var h = MachineHarness()
        var id = h.start()
        h.send(.serverDisconnect(id: id, reason: "unauthorized", reconnect: false))
        guard case .refreshing(let hook, _) = h.phase else { return recordFailure("not refreshing") }
        let failed = h.send(.unauthorizedAnswered(id: hook, refreshed: nil))
        #expect(h.state == .connecting(attempt: 1))
        #expect(MachineHarness.delays(failed, .backoff).count == 1)

        var limited = MachineHarness(maxReconnectAttempts: 0)
        id = limited.start()
        limited.send(.serverDisconnect(id: id, reason: "unauthorized", reconnect: false))
        guard case .refreshing(let hook2, _) = limited.phase else { return recordFailure("not refreshing") }
        limited.send(.unauthorizedAnswered(id: hook2, refreshed: nil))
        #expect(limited.state == .stopped(reason: .attemptsExhausted))
    }

    @Test("a handler that never answers times out after staleTimeout as a failed attempt")
    func handlerTimeout() {
        var h = MachineHarness()
        let id = h.start()
        h.send(.serverDisconnect(id: id, reason: "unauthorized", reconnect: false))
        guard case .refreshing(let hook, _) = h.phase else { return recordFailure("not refreshing") }
        h.advance(15)
        h.send(.timerFired(.watchdog, id: hook))
        #expect(h.state == .connecting(attempt: 1))
        #expect(h.send(.unauthorizedAnswered(id: hook, refreshed: true)).isEmpty)
    }

    @Test("a second unauthorized in a row stops without calling the handler")
    func secondUnauthorizedStops() {
        var h = MachineHarness()
        var id = h.start()
        h.send(.serverDisconnect(id: id, reason: "unauthorized", reconnect: false))
        guard case .refreshing(let hook, _) = h.phase else { return recordFailure("not refreshing") }
        h.send(.unauthorizedAnswered(id: hook, refreshed: true))
        id = h.prepareAndOpen()
        let second = h.send(.serverDisconnect(id: id, reason: "unauthorized", reconnect: false))
        #expect(!second.contains { if case .callUnauthorized = $0 { true } else { false } })
        #expect(h.state == .stopped(reason: .unauthorized(serverReason: "unauthorized")))
    }

    @Test("an unhealthy welcomed session between unauthorizeds still stops; a healthy one resets the streak")
    func streakAndHealth() {
        for (lifetime, stops) in [(5.0, true), (12.0, false)] {
            var h = MachineHarness()
            var id = h.start()
            h.send(.serverDisconnect(id: id, reason: "unauthorized", reconnect: false))
            guard case .refreshing(let hook, _) = h.phase else { return recordFailure("not refreshing") }
            h.send(.unauthorizedAnswered(id: hook, refreshed: true))
            id = h.welcomed()
            h.advance(lifetime)
            h.send(.transportClosed(id: id, unauthorized: false))
            h.fireBackoff()
            id = h.prepareAndOpen()
            h.send(.serverDisconnect(id: id, reason: "unauthorized", reconnect: false))
            if stops {
                #expect(h.state == .stopped(reason: .unauthorized(serverReason: "unauthorized")))
            } else {
                guard case .refreshing = h.phase else { return recordFailure("expected a second refresh") }
            }
        }
    }

    @Test("an open failure, a gate close or an early server restart between unauthorizeds resets the streak")
    func streakResets() {
        for reset in 0..<3 {
            var h = MachineHarness()
            var id = h.start()
            h.send(.serverDisconnect(id: id, reason: "unauthorized", reconnect: false))
            guard case .refreshing(let hook, _) = h.phase else { return recordFailure("not refreshing") }
            h.send(.unauthorizedAnswered(id: hook, refreshed: true))
            id = h.prepareAndOpen()
            switch reset {
            case 0:
                h.send(.transportClosed(id: id, unauthorized: false))
                h.fireBackoff()
            case 1:
                h.send(.gate(false))
                h.send(.gate(true))
            default:
                h.send(.welcome(id: id))
                h.advance(2)
                h.send(.serverDisconnect(id: id, reason: "server_restart", reconnect: true))
                h.fireBackoff()
            }
            id = h.prepareAndOpen()
            h.send(.serverDisconnect(id: id, reason: "unauthorized", reconnect: false))
            guard case .refreshing = h.phase else { return recordFailure("reset \(reset): expected a refresh") }
        }
    }

    @Test("an upgrade answered 401 or 403 counts as unauthorized")
    func httpUnauthorized() {
        var h = MachineHarness()
        let id = h.start()
        let actions = h.send(.transportClosed(id: id, unauthorized: true))
        #expect(actions.contains { if case .callUnauthorized = $0 { true } else { false } })
    }

    @Test("events for a replaced attempt are ignored")
    func staleEventsIgnored() {
        var h = MachineHarness()
        let old = h.start()
        _ = h.failOpen()
        h.fireBackoff()
        h.prepareAndOpen()
        #expect(h.send(.welcome(id: old)).isEmpty)
        #expect(h.send(.transportClosed(id: old, unauthorized: false)).isEmpty)
        #expect(h.send(.serverDisconnect(id: old, reason: "x", reconnect: false)).isEmpty)
        #expect(h.state == .connecting(attempt: 1))
    }
}
