import CableReactive
import CableTesting
import Foundation
import Signals
import Testing

/// The README's "Testing your app" code, run as tests (Scripts/readme-snippets keeps the README equal to
/// the regions between the snippet markers).
@Suite("README: testing an app with CableTesting")
struct ReadmeExampleTests {
    @Test("an app's chat model against LocalCableServer")
    func localServer() async throws {
        // snippet:start testing-server
        let server = try LocalCableServer()  // a free loopback port; stopped when released
        server.subscriptionRule = { params, _ in params["room"] == "secret" ? .reject : .confirm }
        server.onPerform("speak") { call in call.broadcast(["text": call.data["text"] ?? ""]) }

        let client = try ActionCableClient(url: server.url)
        let lobby = try client.subscribe(["channel": "ChatChannel", "room": "lobby"])
        let secret = try client.subscribe(["channel": "ChatChannel", "room": "secret"])
        client.connect()

        #expect(await lobby.state.first(within: 5) { $0 == .subscribed(confirmations: 1) } != nil)
        #expect(await secret.state.first(within: 5) { $0 == .rejected } != nil)
        #expect(lobby.perform("speak", ["text": "hi"]))
        #expect(await lobby.messages.first(within: 5) { _ in true } == ["text": "hi"])

        server.drop()  // a network fault: the client reconnects and resubscribes
        #expect(await lobby.state.first(within: 10) { $0 == .subscribed(confirmations: 2) } != nil)
        client.close()
        // snippet:end
    }

    @Test("the same client, deterministic: a fake transport and a manual clock")
    func fakeTransport() throws {
        let url = try #require(URL(string: "wss://example.com/cable"))
        // snippet:start testing-fake
        let transport = FakeTransport()
        let scheduler = ManualScheduler()
        var options = CableOptions()
        options.staleTimeout = 15
        let client = try ActionCableClient(url: url, options: options, transport: transport, scheduler: scheduler)
        client.connect()
        scheduler.flush()  // run the work the client handed to its scheduler, on this thread

        let connection = try #require(transport.last)
        connection.open()
        connection.receive(#"{"type":"welcome"}"#)
        scheduler.flush()
        #expect(client.state.value == .connected)

        scheduler.advance(by: 15)  // 15 s of silence: stale; the client reconnects at once
        scheduler.flush()
        #expect(transport.connections.count == 2)
        #expect(client.state.value == .connecting(attempt: 0))  // a stale session is not a failed attempt
        client.close()
        // snippet:end
    }
}
