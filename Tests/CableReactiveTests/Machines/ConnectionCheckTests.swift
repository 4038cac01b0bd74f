import CableTesting
import Foundation
import Testing

@testable import CableReactive

/// The connection machine's checks (a path change, a return to the foreground, a wake) and its network input:
/// every rule on the virtual clock.
@Suite("ConnectionMachine checks and network")
struct ConnectionCheckTests {
    typealias Action = ConnectionMachine.Action

    static func isPrepare(_ action: Action) -> Bool {
        if case .prepareRequest = action { return true }
        return false
    }

    static func lost(_ actions: [Action]) -> [CableDisconnect.Kind] {
        actions.compactMap { action in
            if case .lost(let disconnect) = action { return disconnect.kind }
            return nil
        }
    }

    @Test(
        "a check with no probe waits until the server's next ping is a second overdue; silence then replaces the connection at attempt 0, with no backoff"
    )
    func silentConnectionIsReplaced() {
        var h = MachineHarness()
        let id = h.welcomed()
        h.advance(1)
        h.noteFrame(id)  // a ping at 1 s
        h.advance(0.5)
        let check = h.send(.check(.network))
        #expect(MachineHarness.delays(check, .check) == [3.5])  // 1 + 3 (ping interval) + 1 (grace) − 1.5
        #expect(!check.contains(.probe(id: id)))  // Rails: nothing to probe with
        h.advance(3.5)
        let due = h.send(.timerFired(.check, id: id))
        #expect(Self.lost(due) == [.checkFailed])
        #expect(due.contains(.closeTransport(id: id)))
        #expect(due.contains(.sessionEnded))
        #expect(due.contains(where: Self.isPrepare))
        #expect(MachineHarness.delays(due, .backoff).isEmpty)
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test("a frame before the check's deadline keeps the connection")
    func answeringConnectionIsKept() {
        var h = MachineHarness()
        let id = h.welcomed()
        h.send(.check(.network))
        h.advance(2.9)
        h.noteFrame(id)
        h.advance(1.1)
        let due = h.send(.timerFired(.check, id: id))
        #expect(!due.contains(.closeTransport(id: id)))
        #expect(h.phase == .connected(id: id, since: 0))
    }

    @Test("a connection already silent for longer than a ping interval and its grace fails the check at once")
    func alreadyOverdue() {
        var h = MachineHarness()
        let id = h.welcomed()
        h.advance(4.5)
        let check = h.send(.check(.foreground))
        #expect(Self.lost(check) == [.checkFailed])
        #expect(check.contains(.closeTransport(id: id)))
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test("the ping interval is measured: pings every 5 s give a check until 6 s after the last frame")
    func measuredPingInterval() {
        var h = MachineHarness()
        let id = h.welcomed()
        for _ in 0..<3 {
            h.advance(5)
            _ = h.machine.notePing(id: id, now: h.now)
        }
        h.advance(1)
        let check = h.send(.check(.network))
        #expect(MachineHarness.delays(check, .check) == [5])  // 5 + 1 − 1
    }

    @Test("an AnyCable session (a sid in its welcome) is probed; once it has answered, its checks allow only 1.5 s")
    func probe() {
        var h = MachineHarness()
        h.start()
        guard case .opening(let id) = h.phase else { return recordFailure("not opening") }
        h.send(.welcome(id: id, probes: .unproven))
        let first = h.send(.check(.network))
        #expect(first.contains(.probe(id: id)))
        #expect(MachineHarness.delays(first, .check) == [4])  // not answered yet: the ping rule decides
        h.advance(0.05)
        h.noteFrame(id)
        h.send(.probeAnswered(id: id))
        h.advance(3.85)
        h.send(.timerFired(.check, id: id))
        _ = h.machine.notePing(id: id, now: h.now)  // a ping at 3.9 s
        h.advance(0.1)
        let second = h.send(.check(.network))
        #expect(second.contains(.probe(id: id)))
        #expect(MachineHarness.delays(second, .check) == [1.5])
        h.advance(1.5)
        let due = h.send(.timerFired(.check, id: id))
        #expect(Self.lost(due) == [.checkFailed])
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test("one check at a time: a second trigger while the first waits adds nothing; after a frame a new one starts")
    func oneCheckAtATime() {
        var h = MachineHarness()
        let id = h.welcomed()
        h.send(.check(.network))
        let again = h.send(.check(.foreground))
        #expect(again.isEmpty)
        h.advance(1)
        h.noteFrame(id)
        let fresh = h.send(.check(.wake))
        #expect(MachineHarness.delays(fresh, .check) == [4])
    }

    @Test("without a live session a check does nothing: an attempt or a backoff is already on its way")
    func noSessionNoCheck() {
        var h = MachineHarness()
        h.start()
        #expect(h.send(.check(.network)).isEmpty)
        _ = h.failOpen()
        #expect(h.send(.check(.network)).isEmpty)
    }

    @Test("a failed check resets the attempt count of a young session too: it was working until the change")
    func attemptCountResets() {
        var h = MachineHarness()
        h.start()
        for _ in 0..<3 {
            _ = h.failOpen()
            h.advance(30)
            h.fireBackoff()
        }
        let id = h.welcomed()
        #expect(h.machine.attempt == 3)
        h.advance(5)
        h.send(.check(.network))
        #expect(h.machine.attempt == 0)
        #expect(h.currentID != id)
    }

    @Test(
        "a wake the watchdog notices (it runs 2 s or more late) checks the connection, though frames came at the wake")
    func wake() {
        var h = MachineHarness()
        let id = h.welcomed()  // watchdog due at 15
        h.advance(20)
        h.noteFrame(id)  // what the kernel kept, read at the wake
        let fired = h.send(.timerFired(.watchdog, id: id))
        #expect(MachineHarness.delays(fired, .watchdog) == [15])
        #expect(MachineHarness.delays(fired, .check) == [4])
        #expect(fired.contains(.log(LogEvent(level: .info, name: "check", fields: [.trigger("wake"), .attempt(0)]))))
        h.advance(4)
        #expect(Self.lost(h.send(.timerFired(.check, id: id))) == [.checkFailed])
    }

    @Test("a watchdog on time is no wake")
    func onTimeWatchdog() {
        var h = MachineHarness()
        let id = h.welcomed()
        h.advance(10)
        h.noteFrame(id)
        h.advance(5)
        let fired = h.send(.timerFired(.watchdog, id: id))
        #expect(MachineHarness.delays(fired, .check).isEmpty)
    }

    // MARK: the network

    @Test("a path change that may have broken the connection checks it; one that cannot does not")
    func pathChange() {
        var h = MachineHarness()
        let id = h.welcomed()
        #expect(h.send(.network(usable: true, mayHaveBroken: false)).isEmpty)
        let broken = h.send(.network(usable: true, mayHaveBroken: true))
        #expect(MachineHarness.delays(broken, .check) == [4])
        _ = id
    }

    @Test("a flap shorter than 2 s keeps the live connection and checks it when the route is back")
    func briefFlap() {
        var h = MachineHarness()
        let id = h.welcomed()
        let lost = h.send(.network(usable: false, mayHaveBroken: false))
        #expect(MachineHarness.delays(lost, .networkGrace) == [2])
        #expect(!lost.contains(.closeTransport(id: id)))
        h.advance(1)
        let back = h.send(.network(usable: true, mayHaveBroken: true))
        #expect(back.contains(.cancelTimer(.networkGrace)))
        #expect(MachineHarness.delays(back, .check) == [3])
        #expect(h.phase == .connected(id: id, since: 0))
        // The cancelled grace timer, should it fire anyway, does nothing.
        h.advance(1)
        #expect(!h.send(.timerFired(.networkGrace, id: id)).contains(.closeTransport(id: id)))
    }

    @Test("no route for 2 s closes the connection without recording a loss; the route's return connects at once")
    func longOutage() {
        var h = MachineHarness()
        let id = h.welcomed()
        h.send(.network(usable: false, mayHaveBroken: false))
        h.advance(2)
        let ended = h.send(.timerFired(.networkGrace, id: id))
        #expect(ended.contains(.closeTransport(id: id)))
        #expect(Self.lost(ended).isEmpty)
        #expect(h.phase == .gated)
        #expect(h.state == .disconnected)
        h.advance(60)
        let back = h.send(.network(usable: true, mayHaveBroken: true))
        #expect(back.contains(where: Self.isPrepare))
        #expect(h.state == .connecting(attempt: 0))
    }

    @Test("while there is no route no attempt starts: a due backoff waits for the route, which starts it at once")
    func attemptsWaitForTheRoute() {
        var h = MachineHarness()
        h.start()
        _ = h.failOpen()
        h.send(.network(usable: false, mayHaveBroken: false))
        h.advance(30)
        h.fireBackoff()
        #expect(h.phase == .gated)
        #expect(h.state == .disconnected)
        let back = h.send(.network(usable: true, mayHaveBroken: false))
        #expect(back.contains(where: Self.isPrepare))
        #expect(h.state == .connecting(attempt: 1))
    }

    @Test("the route's return during a backoff retries now instead of at the backoff's end")
    func routeBackDuringBackoff() {
        var h = MachineHarness()
        h.start()
        _ = h.failOpen()
        h.send(.network(usable: false, mayHaveBroken: false))
        let back = h.send(.network(usable: true, mayHaveBroken: false))
        #expect(back.contains(.cancelTimer(.backoff)))
        #expect(back.contains(where: Self.isPrepare))
    }

    @Test("connect() with no route waits for one; an attempt in flight when the route goes goes on")
    func connectWithoutRoute() {
        var h = MachineHarness()
        h.send(.gate(true))
        h.send(.network(usable: false, mayHaveBroken: false))
        h.send(.connect)
        #expect(h.phase == .gated)
        h.send(.network(usable: true, mayHaveBroken: false))
        let id = h.prepareAndOpen()
        h.send(.network(usable: false, mayHaveBroken: false))
        #expect(h.phase == .opening(id: id))
    }
}
