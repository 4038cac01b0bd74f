// Seamless versus lossy reconnects: two clients read the same numbered stream while the embedded server
// (speaking AnyCable's extended protocol, with reliable streams) drops every connection in the middle of a
// burst. The extended client gets its session restored and the missed numbers replayed, each once and in
// order; the plain Action Cable client is subscribed again and shows the gap.
//
//     swift run SeamlessReconnect

import CableReactive
import CableTesting
import ExampleSupport
import Foundation
import Signals

await runExample(timeout: 60) {
    var serverOptions = LocalCableServer.Options()
    serverOptions.reliableStreams = LocalCableServer.ReliableStreams()  // AnyCable's defaults: 100 per stream
    let server = try LocalCableServer(options: serverOptions)
    defer { server.stop() }
    let total = 50

    /// A client with `wire`, its subscription, and the numbers it received.
    func reader(_ wire: CableWireProtocol) throws -> (ActionCableClient, ChannelSubscription, Locked<[Int]>) {
        var options = CableOptions()
        options.wireProtocol = wire
        options.minReconnectDelay = 0.2
        options.maxReconnectDelay = 0.5
        let client = try ActionCableClient(url: server.url, options: options)
        return (client, try client.subscribe(["channel": "TickerChannel"]), Locked([]))
    }
    let (extendedClient, extended, extendedNumbers) = try reader(.anyCableExtended)
    let (plainClient, plain, plainNumbers) = try reader(.actionCable)
    defer {
        extendedClient.close()
        plainClient.close()
    }

    let watches = [
        extended.messages.observe { message in extendedNumbers.withLock { $0.append(message["n"]?.intValue ?? 0) } },
        plain.messages.observe { message in plainNumbers.withLock { $0.append(message["n"]?.intValue ?? 0) } },
        extended.lastReconnect.observe { reconnect in
            if let reconnect {
                say("extended: reconnect \(reconnect), may have missed messages: \(reconnect.mayHaveMissedMessages)")
            }
        },
        plain.lastReconnect.observe { reconnect in
            if let reconnect {
                say("plain: reconnect \(reconnect), may have missed messages: \(reconnect.mayHaveMissedMessages)")
            }
        },
    ]

    extendedClient.connect()
    plainClient.connect()
    _ = await extended.state.first(within: 10) { $0 == .subscribed(confirmations: 1) }
    _ = await plain.state.first(within: 10) { $0 == .subscribed(confirmations: 1) }
    say("both subscribed; broadcasting \(total) numbers, dropping every connection after 20")
    for n in 1...total {
        server.broadcast(["n": .int(n)], to: extended.identifier)
        if n == 20 { server.drop() }
        try await Task.sleep(nanoseconds: 10_000_000)  // (sleep(for:) needs macOS 13 / iOS 16)
    }
    try await said("extended: reconnect recovered, may have missed messages: false")
    _ = await plain.state.first(within: 10) { $0 == .subscribed(confirmations: 2) }
    try await Task.sleep(nanoseconds: 300_000_000)  // let the last broadcasts arrive

    let seamless = extendedNumbers.withLock { $0 }
    let lossy = plainNumbers.withLock { $0 }
    say("extended: \(seamless.count) of \(total), in order: \(seamless == Array(1...total))")
    let missing = Set(1...total).subtracting(lossy).sorted()
    say("plain: \(lossy.count) of \(total), missing \(missing.count)")
    withExtendedLifetime(watches) {}
    say("done")
}
