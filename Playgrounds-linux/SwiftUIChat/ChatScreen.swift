// The README's SwiftUI app: the view and its preview. Apple platforms only; the rest is ChatViewModel.swift.
//
// Neither needs a macro plugin, so `swift build` and `swift test` work on a Mac with only the Command Line Tools:
// the preview is a PreviewProvider (iOS 13), not `#Preview` (whose plugin only Xcode.app ships), and the draft is
// a `State` stored as itself, since from the 27 SDKs the `@State` attribute is a macro of Xcode.app's as well.

#if canImport(SwiftUI)
    import CableReactive
    import CableReactivePreview
    import SwiftUI

    // snippet:start swiftui-view
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    struct ChatScreen: View {
        let model: ChatViewModel
        private var draft = State(wrappedValue: "")  // `@State private var draft = ""`, with no macro

        init(model: ChatViewModel) { self.model = model }

        var body: some View {
            VStack {
                if let banner = model.banner.value { Text(banner).font(.footnote) }
                List(model.lines) { line in Text("\(line.user): \(line.text)") }
                HStack {
                    TextField("Message", text: draft.projectedValue)
                    Button("Send") { if model.send(draft.wrappedValue) { draft.wrappedValue = "" } }
                        .disabled(!model.canSend)
                }
            }
            .task { await model.follow() }
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    struct ChatScreen_Previews: PreviewProvider {
        static var previews: some View {
            Group {
                if let model = try? ChatViewModel(client: previewCable().client, room: "lobby") {
                    ChatScreen(model: model)
                }
            }
        }
    }
// snippet:end
#endif
