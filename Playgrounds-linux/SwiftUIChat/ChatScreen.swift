// The README's SwiftUI app: the view and its preview. Apple platforms only; the rest is ChatViewModel.swift.

#if canImport(SwiftUI)
    import CableReactive
    import CableReactivePreview
    import SwiftUI

    // snippet:start swiftui-view
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    struct ChatScreen: View {
        let model: ChatViewModel
        @State private var draft = ""

        var body: some View {
            VStack {
                if let banner = model.banner.value { Text(banner).font(.footnote) }
                List(model.lines) { line in Text("\(line.user): \(line.text)") }
                HStack {
                    TextField("Message", text: $draft)
                    Button("Send") { if model.send(draft) { draft = "" } }.disabled(!model.canSend)
                }
            }
            .task { await model.follow() }
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    #Preview {
        if let model = try? ChatViewModel(client: previewCable().client, room: "lobby") { ChatScreen(model: model) }
    }
// snippet:end
#endif
