// Typed channel: one declaration of a channel's params, message type and actions; messages decoded into a Swift
// type, actions sent as Codable values.
//
//     swift run TypedChannel

import CableReactive
import CableTesting
import ExampleSupport
import Foundation

// snippet:start typed
/// The server's ChatChannel, for one room: its params, what it broadcasts, and what it can be asked to do.
struct ChatRoom: CableChannel {
    static let channel = "ChatChannel"
    let room: String  // the params: {"channel":"ChatChannel","room":"swift"}

    struct Message: Decodable, Sendable {
        let user: String
        let room: String
        let text: String
    }

    struct Speak: CableAction {
        var action: String { "speak" }
        let text: String
    }
}

extension TypedSubscription<ChatRoom> {
    /// `room.speak("hi")`: whether the command went out, as `perform` says.
    @discardableResult
    func speak(_ text: String) -> Bool { perform(ChatRoom.Speak(text: text)) }
}
// snippet:end

await runExample {
    let server = try makeChatServer()
    defer { server.stop() }
    let client = try ActionCableClient(url: server.url(query: "user=typed"))
    defer { client.close() }

    // snippet:start typed-use
    let room = try client.subscribe(ChatRoom(room: "swift"))  // a TypedSubscription<ChatRoom>
    let lines = room.messages  // ChatRoom.Message; messages that don't decode are skipped and counted
    client.connect()
    // snippet:end

    try await room.state.subscribed()
    say("subscribed as \(room.identifier)")
    for text in ["typed hello", "typed goodbye"] {
        guard room.speak(text) else { throw ExampleError("speak returned false") }
    }
    var count = 0
    for await line in lines {
        say("\(line.user) in \(line.room): \(line.text)")
        count += 1
        if count == 2 { break }
    }
    say("skipped: \(lines.undecodableCount)")
    say("done")
}
