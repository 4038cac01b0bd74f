import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

@Suite("Gate inputs set together, and state conveniences")
struct GateAndStateConveniencesTests {
    @Test("a CableRetry prints its attempt and delay, not a struct dump or the wall-clock time")
    func retryDescription() {
        let retry = CableRetry(attempt: 3, delay: 2, startsAt: Date(timeIntervalSince1970: 1_700_000_000))
        #expect(retry.description == "attempt 3 in 2.0s")
        #expect("\(Optional(retry) ?? retry)" == "attempt 3 in 2.0s")
    }

    /// What the app keeps of its session: the inputs that change together live in one state.
    struct Session: Equatable, Sendable {
        var loggedIn = true
        var accountReady = false
        var canConnect: Bool { loggedIn && accountReady }
    }

    @Test("inputs set one after the other open the gate for a moment in between, and the client connects")
    func separateInputsFlicker() throws {
        let loggedIn = MutableStateValue(true)
        let accountReady = MutableStateValue(false)
        let h = try ClientHarness(gate: combineLatest(loggedIn, accountReady).map { $0 && $1 })
        h.client.connect()
        #expect(h.fake.connections.isEmpty)
        accountReady.value = true  // the new account is ready...
        loggedIn.value = false  // ...but the user logged out: the gate was true in between
        #expect(h.fake.connections.count == 1)
        #expect(h.state == .disconnected)
        h.client.close()
    }

    @Test("inputs kept in one state and changed with update never open the gate in between")
    func oneStateUpdatesAtomically() throws {
        let session = MutableStateValue(Session())
        let h = try ClientHarness(gate: session.map(\.canConnect).eraseToAnySignal())
        h.client.connect()
        session.update { session in
            session.accountReady = true
            session.loggedIn = false
        }
        #expect(h.fake.connections.isEmpty)
        #expect(h.state == .disconnected)
        session.update { $0.loggedIn = true }
        #expect(h.fake.connections.count == 1)
        h.client.close()
    }

    @Test("isConnected, stopReason and isSubscribed read states without a case pattern")
    func conveniences() {
        #expect(CableState.connected.isConnected)
        #expect(!CableState.connecting(attempt: 0).isConnected)
        #expect(CableState.stopped(reason: .attemptsExhausted).stopReason?.kind == .attemptsExhausted)
        #expect(CableState.stopped(reason: .server("bye")).stopReason?.serverReason == "bye")
        #expect(CableState.connected.stopReason == nil)
        #expect(CableState.closed.stopReason == nil)
        #expect(SubscriptionState.subscribed(confirmations: 1).isSubscribed)
        #expect(SubscriptionState.subscribed(confirmations: 3).isSubscribed)
        for state in [SubscriptionState.pending, .rejected, .unsubscribed] { #expect(!state.isSubscribed) }
    }
}
