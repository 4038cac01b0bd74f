// Reconnect demo: prints every state change while the embedded server drops the connection, restarts,
// refuses connections for a while, and finally tells the client not to come back.
//
//     swift run ReconnectDemo

import CableReactive
import CableTesting
import ExampleSupport
import Foundation
import Signals

await runExample(timeout: 60) {
    let server = try LocalCableServer()
    defer { server.stop() }

    var options = CableOptions()
    options.minReconnectDelay = 0.2  // short, for the demo; the default is 1 s
    options.maxReconnectDelay = 1
    let client = try ActionCableClient(url: server.url, options: options)
    let room = try client.subscribe(["channel": "ChatChannel", "room": "demo"])

    // snippet:start states
    let stateLog = client.state.observe { state in
        switch state {
        case .disconnected: say("state: disconnected")
        case .connecting(let attempt): say("state: connecting (attempt \(attempt))")
        case .connected: say("state: connected")
        case .stopped(let reason):
            say("state: stopped (\(reason.kind), server reason: \(reason.serverReason ?? "none"))")
        case .closed: say("state: closed")
        }
    }
    let subscriptionLog = room.state.observe { state in
        say("subscription: \(state)")
    }
    let reconnectLog = room.lastReconnect.observe { reconnect in
        guard let reconnect else { return }
        say("reconnect: \(reconnect), may have missed messages: \(reconnect.mayHaveMissedMessages)")
    }
    // snippet:end
    defer {
        stateLog.cancel()
        subscriptionLog.cancel()
        reconnectLog.cancel()
    }

    client.connect()
    try await said("subscription: subscribed(confirmations: 1)")

    say("→ the server drops the TCP connection without a close frame")
    server.drop()
    try await said("subscription: subscribed(confirmations: 2)")

    say("→ the server restarts (disconnect, reconnect: true)")
    server.disconnect(reason: "server_restart", reconnect: true)
    try await said("subscription: subscribed(confirmations: 3)")

    say("→ the server refuses connections for a while")
    server.refuseConnections()
    let attempts = client.state.compactMap { state -> Int? in
        if case .connecting(let attempt) = state { return attempt }
        return nil
    }
    server.drop()
    // The first attempt number after the drop is the reconnect; a new one means that attempt was refused.
    _ = try await attempts.removeDuplicates().dropFirst().expect("a refused attempt") { _ in true }
    try server.acceptConnections()
    try await said("subscription: subscribed(confirmations: 4)")

    say("→ the server says goodbye (disconnect, reconnect: false)")
    server.disconnect(reason: "remote", reconnect: false)
    try await said("state: stopped (server_disconnect, server reason: remote)")
    client.close()
    try await said("state: closed")
    say("done")
}
