// The README's SwiftUI app: the scripted cable that its preview and its view-model test run against.

import CableReactive
import CableReactivePreview

// snippet:start swiftui-preview
/// A cable for previews and tests: no socket, no server, no real time.
func previewCable() -> CablePreview {
    CablePreview(channels: [
        "ChatChannel": .confirm(
            messages: [["user": "ada", "text": "Hi!"], ["user": "bob", "text": "Hello, Ada"]],
            replies: ["speak": { data in ["user": "me", "text": data["text"] ?? ""] }])
    ])
}
// snippet:end
