// The view model of Playgrounds-linux/PreviewDemo, and (on Apple platforms) its SwiftUI screen with a #Preview:
// the same model runs against the app's client and against a CablePreview's.

import CableReactive
import CableReactivePreview
import Observation
import Signals

// snippet:start preview-model
/// A chat room's view model. It is given its client: the app's, or a preview's (`CablePreview(...).client`).
/// (iOS 17 for `@Observable`, as for `#Preview`; an `ObservableObject` works the same way.)
@available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
@MainActor
@Observable
final class RoomModel {
    private(set) var state: CableState = .disconnected
    private(set) var lastDisconnect: CableDisconnect?
    private(set) var lines: [String] = []
    @ObservationIgnored private let client: ActionCableClient
    @ObservationIgnored private let room: ChannelSubscription
    @ObservationIgnored private var observations: [SignalObservation] = []

    init(client: ActionCableClient) throws {
        self.client = client
        room = try client.subscribe(["channel": "ChatChannel", "room": "lobby"])
        // Observers without a queue run on the client's callback queue: the main queue, for a client made with
        // `callbackQueue: .main` and for a preview's.
        observations = [
            client.state.observe { [weak self] state in MainActor.assumeIsolated { self?.state = state } },
            client.lastDisconnect.observe { [weak self] lost in
                MainActor.assumeIsolated { self?.lastDisconnect = lost }
            },
            room.messages.observe { [weak self] message in
                let line = "\(message["user"]?.stringValue ?? "?"): \(message["text"]?.stringValue ?? "")"
                MainActor.assumeIsolated { self?.lines.append(line) }
            },
        ]
        client.connect()
    }

    var banner: String {
        switch state {
        case .connected: "Live"
        case .connecting(let attempt) where attempt > 0: "Reconnecting…"
        case .stopped: "Offline"
        default: "Connecting…"
        }
    }

    @discardableResult
    func say(_ text: String) -> Bool {
        room.perform("speak", ["text": .string(text)])
    }
}
// snippet:end

#if canImport(SwiftUI)
    import SwiftUI

    // snippet:start preview-swiftui
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    struct RoomScreen: View {
        let model: RoomModel  // @Observable: the screen follows what the model reads

        var body: some View {
            VStack(alignment: .leading) {
                Text(model.banner)
                ForEach(Array(model.lines.enumerated()), id: \.offset) { Text($0.element) }
            }
        }
    }

    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    extension RoomScreen {
        /// The screen on a preview's client: the model's own code runs, against the preview's script.
        @MainActor
        static func on(_ preview: CablePreview) -> some View {
            do {
                return AnyView(RoomScreen(model: try RoomModel(client: preview.client)))
            } catch {
                return AnyView(Text("\(error)"))
            }
        }
    }

    // The preview's queue runs on the main queue as the canvas appears: "Live", and two lines.
    @available(iOS 17, macOS 14, tvOS 17, watchOS 10, *)
    #Preview("Chat, live") {
        RoomScreen.on(
            CablePreview(channels: [
                "ChatChannel": .confirm(messages: [["user": "ada", "text": "hi"], ["user": "grace", "text": "hello"]])
            ]))
    }
// snippet:end
#endif
