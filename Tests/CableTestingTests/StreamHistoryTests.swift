import CableReactive
import Testing

@testable import CableTesting

/// LocalCableServer's reliable-stream state on its own: AnyCable's memory-broker rules for replays, and the
/// session cache's bounds.
@Suite("StreamHistory")
struct StreamHistoryTests {
    static func history(limit: Int = 3, ttl: Double = 10) -> StreamHistory {
        var settings = LocalCableServer.ReliableStreams()
        settings.historyLimit = limit
        settings.sessionTTL = ttl
        return StreamHistory(settings: settings)
    }

    @Test("offsets start at 1; a replay needs the current epoch and an offset inside the window")
    func replayWindow() {
        var history = Self.history(limit: 3)
        for n in 1...5 { #expect(history.append(.int(n), to: "s") == n) }  // keeps 3, 4, 5
        #expect(history.entries(of: "s", after: 3, epoch: "e1")?.map(\.offset) == [4, 5])
        #expect(history.entries(of: "s", after: 5, epoch: "e1")?.isEmpty == true)
        #expect(history.entries(of: "s", after: 2, epoch: "e1") == nil, "2 fell out of the window")
        #expect(history.entries(of: "s", after: 6, epoch: "e1") == nil, "past the latest")
        #expect(history.entries(of: "s", after: 4, epoch: "e0") == nil, "another epoch")
        #expect(history.entries(of: "other", after: 0, epoch: "e1") == nil, "no such stream")
        history.resetEpoch()
        #expect(history.epoch == "e2")
        #expect(history.append(.int(9), to: "s") == 1)
    }

    @Test("sessions restore until their TTL after the connection ended; expired ones are forgotten")
    func sessions() {
        var history = Self.history(ttl: 10)
        let id = history.newSessionID(now: 0)
        history.update(id, subscriptions: [ServerSubscription(identifier: "a", params: ["channel": "A"])])
        #expect(history.restorable(id, now: 100)?.map(\.identifier) == ["a"], "live: no expiry")
        history.ended(id, now: 1_000_000_000)
        #expect(history.restorable(id, now: 5_000_000_000) != nil)
        #expect(history.restorable(id, now: 11_000_000_000) == nil)
        let next = history.newSessionID(now: 11_000_000_000)
        #expect(next != id)
        #expect(history.restorable(id, now: 0) == nil, "purged, not merely expired")
    }
}
