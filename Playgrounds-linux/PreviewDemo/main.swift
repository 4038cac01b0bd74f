// A chat room's view model driven by a CablePreview: no socket, no server, no real time. Each step runs the
// preview's queue with flush(), as a @MainActor test does; the lines printed are what the screen would show.
// (The test suite runs the same flows with #expect: Tests/CableReactiveTests/Preview/.)

import CableReactive
import CableReactivePreview
import Signals

@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
func show(_ model: RoomModel, _ step: String) {
    print("\(step): \(model.banner) \(model.state) lines=\(model.lines)")
}

@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
func demo() throws {
    // snippet:start preview-demo
    let preview = CablePreview(channels: [
        "ChatChannel": .confirm(
            messages: [["user": "ada", "text": "hi"]],  // sent after each confirmation
            replies: ["speak": { data in ["user": "me", "text": data["text"] ?? ""] }])  // answers perform("speak")
    ])
    let model = try RoomModel(client: preview.client)  // subscribes and connects, as in the app
    preview.flush()  // the welcome, the confirmation, "hi", and the model's observers, in order
    show(model, "connected")

    preview.send(["user": "bob", "text": "yo"], to: "ChatChannel")  // the server pushes a message
    model.say("hello")  // recorded in preview.performed, and answered by the reply rule
    preview.flush()
    show(model, "chatting")
    print("performed: \(preview.performed)")

    preview.drop()  // the network fails: the banner says "Reconnecting…" until time moves
    preview.flush()
    show(model, "dropped")
    print("lost: \(model.lastDisconnect.map(String.init(describing:)) ?? "nothing")")
    preview.advance(by: 1)  // virtual time: the retry, 1 s later (a preview has no jitter)
    show(model, "back")

    preview.serverDisconnect(reason: "maintenance", reconnect: false)  // the server says goodbye
    preview.flush()
    show(model, "stopped")
    // snippet:end
}

if #available(iOS 17, macOS 14, tvOS 17, watchOS 10, *) {
    try demo()
}

// Without flush(): whenever the main actor waits, the main queue runs the preview's queue, as in a SwiftUI preview.
let untouched = CablePreview()
untouched.client.connect()
let reached = await untouched.client.state.first { $0 == .connected }
print("without flush: \(reached.map(String.init(describing:)) ?? "never")")
print("done")
