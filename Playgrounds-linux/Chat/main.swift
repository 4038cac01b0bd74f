// Chat: join a room, say three things, read them back.
//
//     swift run Chat                                    # against an embedded LocalCableServer
//     swift run Chat --url ws://127.0.0.1:3000/cable    # against a real server with a ChatChannel
//     swift run Chat --url "ws://127.0.0.1:$PORT/cable?token=tok-alice"   # the Rails fixture (Scripts/rails-server)
//     swift run Chat --room ops --name alice
//
// The embedded server answers `speak` like the Rails fixture's ChatChannel (Tests/Fixtures/rails): it
// broadcasts {"user", "room", "text"} to everyone in the room.

import CableReactive
import CableTesting
import ExampleSupport
import Foundation

await runExample {
    let embedded = argument("--url") == nil ? try makeChatServer() : nil
    let name = argument("--name") ?? "swift"
    guard let url = argument("--url").flatMap(URL.init(string:)) ?? embedded?.url(query: "user=\(name)") else {
        throw ExampleError("--url needs a ws:// or wss:// URL")
    }
    say(embedded == nil ? "server: \(url.host ?? "?")" : "server: embedded LocalCableServer on port \(url.port ?? 0)")
    let room = argument("--room") ?? "lobby"

    // snippet:start quick-start
    let client = try ActionCableClient(url: url)
    let chat = try client.subscribe(["channel": "ChatChannel", "room": room])
    client.connect()

    // After a reconnect: did we miss broadcasts? (plain Action Cable: yes, always; AnyCable: only if it
    // could not replay them). The one rule for "reload what you show".
    let reload = chat.lastReconnect.observe { reconnect in
        if reconnect?.mayHaveMissedMessages == true { print("reconnected: reload the room's history") }
    }

    let reader = Task {
        var seen = 0
        for await message in chat.messages {
            print(message["user"]?.stringValue ?? "?", "says", message["text"]?.stringValue ?? "")
            seen += 1
            if seen == 3 { break }
        }
    }
    // snippet:end

    do {
        try await chat.state.subscribed()
    } catch {
        throw ExampleError("\(error); the client is \(client.state.value), the subscription \(chat.state.value)")
    }
    say("subscribed to \(room)")
    for text in ["Hello!", "Unicode works: héllo wörld ✓", "Bye."] {
        guard chat.perform("speak", ["text": text]) else { throw ExampleError("perform returned false") }
    }
    await reader.value
    reload.cancel()
    client.close()
    embedded?.stop()
    say("done")
}
