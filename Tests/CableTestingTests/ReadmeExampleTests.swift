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

    @Test("two views of one room: a shared subscription, several consumers, and what keeps it alive")
    func sharedRoom() async throws {
        let server = try LocalCableServer()
        server.onPerform("speak") { call in call.broadcast(["text": call.data["text"] ?? ""]) }
        let client = try ActionCableClient(url: server.url)
        let params: JSONValue = ["channel": "ChatChannel", "room": "lobby"]
        // snippet:start consumers
        let list = try client.subscribe(params)  // the room's message list
        let unread = MutableStateValue(0)
        // A badge elsewhere in the app: the same params give another handle on the same server subscription.
        // The observation alone keeps it alive; the subscription ends when `badge` is released.
        let badge = try client.subscribe(params).messages.observe { _ in unread.update { $0 += 1 } }
        let reader = Task {
            for await message in list.messages {  // a loop and an observer: each gets every message
                print("list:", message["text"]?.stringValue ?? "")
                break
            }
        }
        client.connect()
        // snippet:end
        #expect(await list.state.first(within: 5) { $0 == .subscribed(confirmations: 1) } != nil)
        #expect(list.perform("speak", ["text": "hi"]))
        await reader.value
        #expect(await unread.first(within: 5) { $0 == 1 } != nil)
        #expect(server.commands.filter { $0.command == "subscribe" }.count == 1, "one server subscription")
        badge.cancel()
        client.close()
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

    @Test("AnyCable's streams, whisper and presence against LocalCableServer")
    func anyCableServer() async throws {
        // snippet:start testing-anycable
        var options = LocalCableServer.Options()
        var pubSub = LocalCableServer.PubSub(secret: "s3Krit")  // your AnyCable streams secret, or any
        pubSub.publicStreams = true
        pubSub.presenceTTL = 0.5  // AnyCable's 15 s, shortened for the test
        options.pubSub = pubSub
        let server = try LocalCableServer(options: options)

        let ada = try ActionCableClient(url: server.url)
        let bob = try ActionCableClient(url: server.url)
        let signed = LocalCableServer.signedStreamName("chat/42", secret: "s3Krit")  // AnyCable's algorithm
        let adaRoom = ada.stream(signed: signed)
        let bobRoom = bob.stream(signed: signed)
        let adaLobby = ada.stream(named: "lobby")
        let bobLobby = bob.stream(named: "lobby")
        try adaLobby.presence.join(id: "ada")
        try bobLobby.presence.join(id: "bob")
        ada.connect()
        bob.connect()

        #expect(await adaRoom.state.first(within: 5) { $0 == .subscribed(confirmations: 1) } != nil)
        #expect(await bobRoom.state.first(within: 5) { $0 == .subscribed(confirmations: 1) } != nil)
        server.broadcast(["text": "hi"], toStream: "chat/42")
        #expect(await bobRoom.messages.first(within: 5) { _ in true } == ["text": "hi"])

        #expect(await adaLobby.presence.members.first(within: 5) { $0?.count == 2 } != nil)
        #expect(adaLobby.whisper(["typing": "ada"]))  // public streams always relay whispers
        #expect(await bobLobby.messages.first(within: 5) { _ in true } == ["typing": "ada"])

        bob.close()  // bob's presence lingers for the TTL, then ada sees him leave
        #expect(await adaLobby.presence.members.first(within: 5) { $0?.keys.sorted() == ["ada"] } != nil)
        ada.close()
        // snippet:end
    }
}
