import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

@Suite("lastReconnect: one value per reconnect")
struct ReconnectNewsTests {
    @Test("every reconnect publishes lastReconnect, also when its outcome equals the last one's")
    func everyReconnectIsPublished() throws {
        let h = try ClientHarness()
        let room = try h.client.subscribe(["channel": "ChatChannel"])
        let seen = Locked<[SubscriptionReconnect?]>([])
        let token = room.lastReconnect.observe { value in seen.withLock { $0.append(value) } }
        var connection = try #require(h.connected())
        connection.receive(ClientHarness.confirm(room.identifier))
        for _ in 1...3 {
            connection.fail()
            h.client.connect()  // "retry now": the waiting attempt starts at once
            connection = try #require(h.welcome())
            connection.receive(ClientHarness.confirm(room.identifier))
        }
        _ = h.state
        #expect(seen.withLock { $0 } == [nil, .resubscribed, .resubscribed, .resubscribed])
        token.cancel()
        h.client.close()
    }
}
