// Typed channel: Codable parameters, Codable `perform` data, and messages decoded into a Swift type.
//
//     swift run TypedChannel

import CableReactive
import CableTesting
import ExampleSupport
import Foundation

// snippet:start typed
struct ChatRoom: Encodable {
    let channel = "ChatChannel"
    let room: String
}

struct Speak: Encodable {
    let text: String
}

struct ChatLine: Decodable, Sendable {
    let user: String
    let room: String
    let text: String
}
// snippet:end

await runExample {
    let server = try makeChatServer()
    defer { server.stop() }
    let client = try ActionCableClient(url: server.url(query: "user=typed"))
    defer { client.close() }

    // snippet:start typed-use
    let room = try client.subscribe(ChatRoom(room: "swift"))
    let lines = room.messages(as: ChatLine.self)  // messages that don't decode are skipped (DEBUG log)
    client.connect()
    // snippet:end

    try await room.state.subscribed()
    say("subscribed as \(room.identifier)")
    for text in ["typed hello", "typed goodbye"] {
        guard room.perform("speak", Speak(text: text)) else { throw ExampleError("perform returned false") }
    }
    var count = 0
    for await line in lines {
        say("\(line.user) in \(line.room): \(line.text)")
        count += 1
        if count == 2 { break }
    }
    say("done")
}
