// The README's SwiftUI app, the part that is not a view: the channel, the client with its gate, and the
// @Observable view model. Compiled (and run, by main.swift) on Linux; ChatScreen.swift is the Apple-only view.

import CableReactive
import Foundation
import Observation
import Signals

// snippet:start swiftui-channel
/// The server's ChatChannel for one room: params, messages and actions in one place.
struct ChatChannel: CableChannel {
    static let channel = "ChatChannel"
    let room: String

    struct Message: Decodable, Sendable, Identifiable {
        let id = UUID()
        let user: String
        let text: String
        private enum CodingKeys: String, CodingKey { case user, text }
    }

    struct Speak: CableAction {
        var action: String { "speak" }
        let text: String
    }
}

extension TypedSubscription<ChatChannel> {
    @discardableResult
    func speak(_ text: String) -> Bool { perform(ChatChannel.Speak(text: text)) }
}
// snippet:end

// snippet:start swiftui-client
/// The app's one client: connects while logged in, online and in the foreground. Not for app extensions, which
/// have no foreground to watch (`appInForeground` is unavailable there).
@available(iOSApplicationExtension, unavailable)
@available(tvOSApplicationExtension, unavailable)
@available(visionOSApplicationExtension, unavailable)
@available(macCatalystApplicationExtension, unavailable)
func makeCableClient(url: URL, loggedIn: StateValue<Bool>) throws -> ActionCableClient {
    let canConnect = combineLatest(loggedIn, CablePlatform.networkAvailable, CablePlatform.appInForeground)
        .map { $0 && $1 && $2 }
    return try ActionCableClient(url: url, canConnect: canConnect)
}
// snippet:end

// snippet:start swiftui-model
/// What the chat screen shows. It owns the client: releasing the model closes it and ends every observation.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor
@Observable
final class ChatViewModel {
    private(set) var lines: [ChatChannel.Message] = []
    /// Set when a reconnect may have lost broadcasts (always with plain Action Cable): reload the history.
    private(set) var mayHaveMissedMessages = false
    let status: StateMirror<CableState>
    let banner: StateMirror<String?>  // why the connection was lost, while it is
    let roomState: StateMirror<SubscriptionState>
    @ObservationIgnored private let client: ActionCableClient
    @ObservationIgnored private let room: TypedSubscription<ChatChannel>
    @ObservationIgnored private var reconnects: SignalObservation?

    init(client: ActionCableClient, room name: String) throws {
        self.client = client
        room = try client.subscribe(ChatChannel(room: name))
        status = StateMirror(client.state)
        banner = StateMirror(combineLatest(client.state, client.lastDisconnect).map(bannerText), initial: nil)
        roomState = StateMirror(room.state)
        reconnects = room.lastReconnect.observe(on: .main) { [weak self] reconnect in
            if reconnect?.mayHaveMissedMessages == true { self?.mayHaveMissedMessages = true }
        }
        client.connect()
    }

    var canSend: Bool { status.value.isConnected && roomState.value.isSubscribed }

    /// The screen's `.task`: cancelled when the screen goes, started again when it comes back. Messages that
    /// arrive in between are held for the next run (the newest `messageBufferSize` of them), so none is lost.
    func follow() async {
        for await line in room.messages { lines.append(line) }
    }

    func send(_ text: String) -> Bool { room.speak(text) }
}
// snippet:end
