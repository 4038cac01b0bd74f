import CableReactive
import Foundation
import Signals
import Testing

/// The `observe(on: .main)` examples of the doc comments (`CableDisconnect`, `CableRetry`, `CableMessages`,
/// `Signal.observe(on:)`), as written there, in the `@MainActor` view model they describe: compiling is the test.
@MainActor
final class DocExampleModel {
    private(set) var banner = ""
    private(set) var retryText = ""
    private(set) var unread = 0
    private var token: SignalObservation?
    private var countdown: SignalObservation?
    private var badge: SignalObservation?

    init(client: ActionCableClient, room: ChannelSubscription) {
        token = client.lastDisconnect.observe(on: .main) { [weak self] last in
            guard let self, let last else { return }
            switch last.kind {
            case .failed where last.httpStatus == 404: banner = "Server refused the connection (check the Origin)"
            case .failed, .welcomeTimeout: banner = "Can't reach the server"
            case .stale: banner = "Connection lost; reconnecting"
            case .serverDisconnect:
                banner = last.serverReason == "server_restart" ? "Server restarting" : "Disconnected"
            default: banner = "Reconnecting"
            }
        }
        countdown = client.nextAttempt.observe(on: .main) { [weak self] next in  // in a @MainActor view model
            self?.retryText = next.map { "Retrying in \(Int($0.startsAt.timeIntervalSinceNow.rounded(.up))) s" } ?? ""
        }
        badge = room.messages.observe(on: .main) { [weak self] _ in self?.unread += 1 }
    }
}

@Suite("Doc comment examples")
struct DocExampleTests {
    @Test("the doc comments' main-actor observers compile in a @MainActor model")
    @MainActor
    func compiles() throws {
        let client = try ActionCableClient(url: URL(string: "ws://cable.test/cable")!)
        let model = DocExampleModel(client: client, room: try client.subscribe(["channel": "ChatChannel"]))
        #expect(model.unread == 0)
        client.close()
    }
}
