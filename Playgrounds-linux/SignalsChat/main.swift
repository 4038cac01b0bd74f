// Signals for view models: two people in a chat with two rooms, each screen a RoomsViewModel against one
// embedded LocalCableServer. Prints what the screens show as ada types (throttled whispers, bob's typing
// indicator hiding after 3 s), picks another room (switchToLatest), sends (delivered, or no answer within 5 s),
// and the network drops (a banner only once connecting has lasted 1 s).
//
//     swift run SignalsChat

import CableReactive
import CableTesting
import ExampleSupport
import Foundation
import Signals

/// A ChatChannel that broadcasts `speak` to the room (except a text its filter drops) and relays whispers, as
/// Rails' `stream_from room, whisper: true` or AnyCable does.
func makeRoomsServer() throws -> LocalCableServer {
    var options = LocalCableServer.Options()
    var pubSub = LocalCableServer.PubSub(secret: "unused")
    pubSub.whisperChannels = ["ChatChannel"]
    options.pubSub = pubSub
    let server = try LocalCableServer(options: options)
    server.onPerform("speak") { call in
        let text = call.data["text"]?.stringValue ?? ""
        guard !text.contains("spam") else { return }  // the server's filter: nothing comes back
        let user = call.request.queryValue("user") ?? "anonymous"
        call.broadcast(["user": .string(user), "text": .string(text)])
    }
    return server
}

func shown(_ lines: [Line]) -> String { "\(lines.map { "\($0.user): \($0.text)" })" }

@MainActor
func showRooms() async throws {
    let server = try makeRoomsServer()
    defer { server.stop() }
    let ada = try ActionCableClient(url: server.url(query: "user=ada"))
    let bob = try ActionCableClient(url: server.url(query: "user=bob"))
    defer {
        ada.close()
        bob.close()
    }
    let adaScreen = try RoomsViewModel(client: ada, me: "ada", rooms: ["lobby", "swift"])
    let bobScreen = try RoomsViewModel(client: bob, me: "bob", rooms: ["lobby", "swift"])
    ada.connect()
    bob.connect()
    try await until("both subscribed") { adaScreen.canSend && bobScreen.canSend }
    say("both in \(adaScreen.selectedRoom.value), can send: true")

    say("bob sends: \(await bobScreen.send("hi from bob"))")
    try await until("bob's line on ada's screen") { adaScreen.lines.count == 1 }
    say("ada sees in lobby: \(shown(adaScreen.lines))")

    say("→ ada types 5 keys")
    for _ in 0..<5 { adaScreen.keystroke() }
    try await until("the typing indicator") { bobScreen.typing != nil }
    say("bob sees: \(bobScreen.typing ?? "")")
    try await until("the indicator to hide") { bobScreen.typing == nil }
    let whispers = server.commands.filter { $0.command == "whisper" }.count
    say("bob sees: indicator hidden after 3 s of quiet; ada's 5 keys sent \(whispers) whispers")

    say("→ ada picks swift")
    adaScreen.selectedRoom.value = "swift"
    try await until("swift subscribed") { adaScreen.canSend && adaScreen.lines.isEmpty }
    say("bob sends in lobby: \(await bobScreen.send("still in lobby"))")
    bobScreen.selectedRoom.value = "swift"
    try await until("bob in swift") { bobScreen.canSend }
    say("bob sends in swift: \(await bobScreen.send("hello swift"))")
    try await until("bob's line in swift") { adaScreen.lines.count == 1 }
    say("ada sees in swift: \(shown(adaScreen.lines))")
    say("→ ada goes back to lobby")
    adaScreen.selectedRoom.value = "lobby"
    try await until("lobby's held line") { adaScreen.lines.count == 1 }
    say("ada sees in lobby, held while away: \(shown(adaScreen.lines))")

    say("ada sends: \(await adaScreen.send("hello from ada"))")
    say("ada sends what the server's filter drops: \(await adaScreen.send("buy spam"))")

    say("→ the connection drops and comes back at once")
    var bannerShown = false
    server.drop()
    try await until("the reconnect") {
        bannerShown = bannerShown || adaScreen.banner != nil
        return ada.state.value == .connected
    }
    try await Task.sleep(nanoseconds: 1_200_000_000)
    bannerShown = bannerShown || adaScreen.banner != nil
    say("banner shown: \(bannerShown)")

    say("→ the server refuses connections for a while")
    server.refuseConnections()
    server.drop()
    try await until("the banner") { adaScreen.banner != nil }
    say("banner: \(adaScreen.banner ?? "")")
    try server.acceptConnections()
    try await until("the reconnect") { ada.state.value == .connected }
    try await until("the banner to go") { adaScreen.banner == nil }
    say("reconnected, banner: hidden")
}

await runExample(timeout: 50) {
    try await showRooms()
    say("done")
}
