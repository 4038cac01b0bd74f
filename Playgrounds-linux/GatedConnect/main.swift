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

    // The printer runs on the client's callback queue; each step waits until it has shown the state the step
    // expects, so the lines below come out in one order.
    let (shown, show) = AsyncStream.makeStream(of: CableState.self)
    let printer = client.state.observe { state in
        say("state: \(state)")
        show.yield(state)
    }
    defer { printer.cancel() }
    var printed = shown.makeAsyncIterator()
    func shows(_ expected: CableState) async throws {
        while let state = await printed.next() {
            if state == expected { return }
        }
        throw ExampleError("the printer stopped before \(expected)")
    }

    func step(_ what: String, _ change: () -> Void, expect expected: CableState) async throws {
        say("→ \(what)")
        change()
        try await shows(expected)
    }
    try await shows(.disconnected)
    try await step("log in", { loggedIn.value = true }, expect: .connected)
    try await step("go offline", { online.value = false }, expect: .disconnected)
    try await step("back online", { online.value = true }, expect: .connected)
    try await step("app goes to the background", { foreground.value = false }, expect: .disconnected)
    try await step("app comes back", { foreground.value = true }, expect: .connected)
    try await step("log out", { loggedIn.value = false }, expect: .disconnected)
    client.close()
    say("done")
}
