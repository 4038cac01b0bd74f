// Gated connect: the client connects only while the user is logged in, the network is up and the app is in
// the foreground, and disconnects as soon as any of them turns false.
//
//     swift run GatedConnect

import CableReactive
import CableTesting
import ExampleSupport
import Foundation
import Signals

await runExample {
    let server = try LocalCableServer()
    defer { server.stop() }

    // snippet:start gate
    let loggedIn = MutableStateValue(false)
    let online = MutableStateValue(true)
    let foreground = MutableStateValue(true)
    let canConnect = combineLatest(loggedIn, online, foreground).map { $0 && $1 && $2 }

    let client = try ActionCableClient(url: server.url, canConnect: canConnect)
    client.connect()  // waits for the gate: stays .disconnected while it is false
    // snippet:end

    let printer = client.state.observe { state in say("state: \(state)") }
    defer { printer.cancel() }

    func step(_ what: String, _ change: () -> Void, expect expected: CableState) async throws {
        say("→ \(what)")
        change()
        _ = try await client.state.expect("\(expected)") { $0 == expected }
    }
    try await step("log in", { loggedIn.value = true }, expect: .connected)
    try await step("go offline", { online.value = false }, expect: .disconnected)
    try await step("back online", { online.value = true }, expect: .connected)
    try await step("app goes to the background", { foreground.value = false }, expect: .disconnected)
    try await step("app comes back", { foreground.value = true }, expect: .connected)
    try await step("log out", { loggedIn.value = false }, expect: .disconnected)
    client.close()
    say("done")
}
