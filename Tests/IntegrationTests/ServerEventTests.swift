import CableReactive
import Foundation
import Signals
import Testing

extension IntegrationTests {
    /// What the server does to a session: reject, restart, disconnect, close, die.
    @Suite struct ServerEvents {
        @Test func rejectedSubscription() async throws {
            let client = try makeClient(try Env.railsURL(), query: "token=tok-\(unique("reject"))")
            defer { client.close() }
            let rejected = try client.subscribe(["channel": "RejectChannel"])
            let chat = try client.subscribe(["channel": "ChatChannel"])  // no room → rejected too
            client.connect()
            try await waitFor(rejected.state, 5, "RejectChannel rejected") { $0 == .rejected }
            try await waitFor(chat.state, 5, "ChatChannel without room rejected") { $0 == .rejected }
            #expect(!rejected.perform("anything"))
            // the connection is unaffected
            _ = try await echo(try await echoSubscription(client))
            #expect(client.state.value == .connected)
        }

        /// `ActionCable.server.restart` → `server_restart`, reconnect true → back, confirmed a second time.
        @Test func serverRestart() async throws {
            let client = try makeClient(try Env.railsURL(), query: "token=tok-\(unique("restart"))")
            defer { client.close() }
            client.connect()
            let subscription = try await echoSubscription(client)
            let states = Recorder(client.state)
            try await HTTP.post(try Env.control() + "/restart")
            try await waitFor(subscription.state, 10, "confirmed again") { $0 == .subscribed(confirmations: 2) }
            #expect(states.values.contains { isConnecting($0) })
            #expect(client.state.value == .connected)
            _ = try await echo(subscription)
        }

        /// Two handles and two loops on one stream: Rails sees one subscription, each loop gets every answer,
        /// and after `ActionCable.server.restart` both handles are confirmed again and go on receiving.
        @Test func sharedHandlesThroughRestart() async throws {
            let client = try makeClient(try Env.railsURL(), query: "token=tok-\(unique("shared"))")
            defer { client.close() }
            client.connect()
            let stream = unique("shared")
            let first = try await echoSubscription(client, stream: stream)
            let second = try client.subscribe(["channel": "EchoChannel", "stream": .string(stream)])
            #expect(second.state.value == .subscribed(confirmations: 1), "it joins the confirmed subscription")
            let started = Locked(0)
            let loops = [first, second].map { subscription in
                Task { () -> [String] in
                    var ids: [String] = []
                    var iterator = subscription.messages.makeAsyncIterator()
                    started.withLock { $0 += 1 }
                    while ids.count < 2, let message = await iterator.next() {
                        if let id = message["id"]?.stringValue { ids.append(id) }
                    }
                    return ids
                }
            }
            try await eventually(5, "both loops started") { started.withLock { $0 } == 2 }
            let before = try await echo(first)
            try await HTTP.post(try Env.control() + "/restart")
            for handle in [first, second] {
                try await waitFor(handle.state, 10, "confirmed again") { $0 == .subscribed(confirmations: 2) }
            }
            let after = try await echo(second)
            let expected = [before["id"]?.stringValue, after["id"]?.stringValue].compactMap { $0 }
            for loop in loops {
                let ids = try await within(10, "both answers in each loop") { await loop.value }
                #expect(ids == expected)
            }
        }

        /// Rails 6.1's remote disconnect closes without a frame → reconnect and resubscribe.
        @Test func remoteDisconnect() async throws {
            let user = unique("remote")
            let client = try makeClient(try Env.railsURL(), query: "token=tok-\(user)")
            defer { client.close() }
            client.connect()
            let subscription = try await echoSubscription(client)
            let answer = try await HTTP.post(try Env.control() + "/disconnect?user=\(user)")
            #expect(answer["ok"]?.boolValue == true)
            try await waitFor(subscription.state, 10, "confirmed again") { $0 == .subscribed(confirmations: 2) }
            _ = try await echo(subscription)
            #expect(try await connectionCount(try Env.control(), user: user) == 1)
        }

        /// A disconnect frame with reconnect false stops the client with the server's reason.
        @Test func serverCloseWithoutReconnect() async throws {
            let user = unique("close")
            let client = try makeClient(try Env.railsURL(), query: "token=tok-\(user)")
            defer { client.close() }
            client.connect()
            let subscription = try await echoSubscription(client)
            try await HTTP.post(try Env.control() + "/close?user=\(user)&reason=maintenance&reconnect=false")
            try await waitFor(client.state, 5, "stopped") { $0 == .stopped(reason: .server("maintenance")) }
            #expect(subscription.state.value == .pending)
            #expect(try await connectionCount(try Env.control(), user: user) == 0)
        }

        /// The `kick` action (the channel calls `connection.close(reason:, reconnect: false)`).
        @Test func kickWithoutReconnect() async throws {
            let client = try makeClient(try Env.railsURL(), query: "token=tok-\(unique("kick"))")
            defer { client.close() }
            client.connect()
            let subscription = try await echoSubscription(client)
            #expect(subscription.perform("kick", ["reason": "kicked_out", "reconnect": false]))
            try await waitFor(client.state, 5, "stopped") { $0 == .stopped(reason: .server("kicked_out")) }
        }

        /// kick with reconnect true (and a reason) is a normal session loss: reconnect, resubscribe.
        @Test func kickWithReconnect() async throws {
            let client = try makeClient(try Env.railsURL(), query: "token=tok-\(unique("kick"))")
            defer { client.close() }
            client.connect()
            let subscription = try await echoSubscription(client)
            #expect(subscription.perform("kick", ["reason": "rebalance", "reconnect": true]))
            try await waitFor(subscription.state, 10, "confirmed again") { $0 == .subscribed(confirmations: 2) }
        }

        /// SIGKILL: no close frame, no FIN from Rails' side before the kernel's; a new puma on the same port
        /// takes the client back.
        @Test func killedPumaComesBack() async throws {
            let server = try await RailsServer.start(["--env", "CABLE_BEAT_INTERVAL=1"])
            defer { server.stop() }
            let client = try makeClient(server.cableURL, query: "token=tok-\(unique("kill"))")
            defer { client.close() }
            client.connect()
            let subscription = try await echoSubscription(client)
            try await server.kill()
            try await waitFor(client.state, 5, "connection lost") { isConnecting($0) }
            try await waitFor(client.state, 10, "retrying against a dead port") { isConnecting($0, atLeast: 1) }
            let second = try await server.restarted()
            defer { second.stop() }
            try await waitFor(subscription.state, 10, "confirmed on the new puma") {
                $0 == .subscribed(confirmations: 2)
            }
            _ = try await echo(subscription)
        }
    }
}
