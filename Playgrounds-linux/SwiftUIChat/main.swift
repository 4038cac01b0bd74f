// The README's SwiftUI app without the view: its view model against an embedded LocalCableServer, printing what
// the screen would show as the user logs in, sends, leaves the screen and comes back, and the network drops.
//
//     swift run SwiftUIChat

import CableReactive
import CableTesting
import ExampleSupport
import Foundation
import Signals

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@available(iOSApplicationExtension, unavailable)
@available(tvOSApplicationExtension, unavailable)
@available(visionOSApplicationExtension, unavailable)
@available(macCatalystApplicationExtension, unavailable)
@MainActor
func showScreen() async throws {
    let server = try makeChatServer()
    defer { server.stop() }
    let loggedIn = MutableStateValue(false)
    let client = try makeCableClient(url: server.url(query: "user=swiftui"), loggedIn: loggedIn.readOnly)
    defer { client.close() }
    let model = try ChatViewModel(client: client, room: "lobby")
    var screen = Task { await model.follow() }  // the view's .task
    say("status: \(model.status.value)")

    loggedIn.value = true
    try await until("confirmation") { model.canSend }
    say("status: \(model.status.value), can send: \(model.canSend)")

    _ = model.send("Hello from the view model")
    try await until("the echo") { model.lines.count == 1 }
    say("shown: \(model.lines.map { "\($0.user): \($0.text)" })")

    screen.cancel()  // the user leaves the screen; a message arrives meanwhile
    await screen.value
    server.broadcast(["user": "ada", "text": "while you were away"], to: #"{"channel":"ChatChannel","room":"lobby"}"#)
    try await Task.sleep(nanoseconds: 100_000_000)
    screen = Task { await model.follow() }  // back on the screen: the held message comes first
    try await until("the held message") { model.lines.count == 2 }
    say("shown after coming back: \(model.lines.last.map { "\($0.user): \($0.text)" } ?? "")")

    server.drop()  // the network drops
    try await until("the banner") { model.banner.value != nil }
    say("banner: \(model.banner.value ?? "")")
    try await until("the reconnect") { model.canSend && model.mayHaveMissedMessages }
    say(
        "reconnected, banner: \(model.banner.value ?? "hidden"), may have missed messages: \(model.mayHaveMissedMessages)"
    )
    screen.cancel()
}

// Top-level code cannot be marked unavailable in app extensions, as showScreen is; it needs no mark, since an
// executable is never built for, or linked into, an app extension.
await runExample {
    guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { throw ExampleError("needs Observation") }
    try await showScreen()
    say("done")
}
