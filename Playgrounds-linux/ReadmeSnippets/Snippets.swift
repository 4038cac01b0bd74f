// The README's code, compiled with the package (Scripts/readme-snippets checks that the README shows
// exactly these regions). Nothing here runs; the runnable examples are the other Playgrounds-linux targets.

import CableReactive
import Foundation
import Signals

/// Authentication through `onRequest`, which edits the upgrade request before every attempt.
func authenticationExamples(url: URL, token: @escaping @Sendable () async -> String) throws -> [ActionCableClient] {
    // snippet:start auth-origin
    let withOrigin = try ActionCableClient(url: url) { request in
        request.origin = "https://app.example.com"
    }
    // snippet:end

    // snippet:start auth-header
    let withHeader = try ActionCableClient(url: url) { request in
        request.setHeader("Authorization", "Bearer \(await token())")
    }
    // snippet:end

    // snippet:start auth-query
    let withQuery = try ActionCableClient(url: url) { request in
        request.setQueryItem("token", await token())
    }
    // snippet:end

    // snippet:start auth-cookie
    let withCookie = try ActionCableClient(url: url) { request in
        request.addCookie("_session", await token())
    }
    // snippet:end
    return [withOrigin, withHeader, withQuery, withCookie]
}

/// TLS: an extra CA and pinned keys, with the same options on both transports.
func tlsExample(url: URL, caFile: String) throws -> ActionCableClient {
    // snippet:start tls
    // The key of the server's certificate and a backup key (see CertificatePin for computing one).
    let pins: Set<CertificatePin> = [
        try CertificatePin("sha256/E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhww="),
        try CertificatePin("sha256/TFw3D/LvWoPsMWcp2SCpqDcihiyo1Vhdz4STPaWYRS8="),
    ]
    #if canImport(Darwin)
        let transport = URLSessionTransport(tlsCAFilePath: caFile, tlsPins: pins)
    #else
        let transport = SocketTransport(options: .init(tlsCAFilePath: caFile, tlsPins: pins))
    #endif
    let client = try ActionCableClient(url: url, transport: transport)
    // A refused certificate stops the client: .stopped(reason: .permanentFailure(error)), error.kind == .certificate
    // snippet:end
    return client
}

/// The Linux transport's connect step: Happy Eyeballs and one deadline for the whole attempt.
#if os(Linux)
    func networksExample(url: URL) throws -> ActionCableClient {
        // snippet:start networks
        var options = SocketTransport.Options()
        options.connectTimeout = 10  // name resolution, TCP, TLS and the upgrade, together
        options.connectionAttemptDelay = 0.1  // race the next address after 100 ms instead of 250 ms
        let client = try ActionCableClient(url: url, transport: SocketTransport(options: options))
        // snippet:end
        return client
    }

    func proxyExample(url: URL) throws -> [ActionCableClient] {
        // snippet:start proxy
        // A proxy the app configures: credentials, and hosts reached without it (curl's no_proxy syntax).
        let corporate = try SocketTransport.HTTPProxy(
            url: "http://alice:s3cret@proxy.corp:3128", bypass: ".corp, 10.0.0.0/8")
        let behindProxy = try ActionCableClient(
            url: url, transport: SocketTransport(options: .init(proxy: .http(corporate))))

        // Or what https_proxy (wss://), http_proxy (ws://), all_proxy and no_proxy say, read at every attempt.
        let likeCurl = try ActionCableClient(url: url, transport: SocketTransport(options: .init(proxy: .environment)))

        // A proxy that refuses the tunnel: lastDisconnect.value?.error?.kind == .proxyRejected(status: 407);
        // 407, 401 and 403 stop the client, 502 and the like are retried.
        // snippet:end
        return [behindProxy, likeCurl]
    }
#endif

/// The Apple transport's session configuration.
#if canImport(Darwin)
    func sessionConfigurationExample(url: URL) throws -> ActionCableClient {
        // snippet:start url-session-configuration
        // Default: .ephemeral, nothing shared with the app's other requests. To send the cookies the app's
        // login stored in the shared cookie store, make the sessions from .default instead:
        let client = try ActionCableClient(url: url, transport: URLSessionTransport(configuration: .default))
        // snippet:end
        return client
    }
#endif

/// What `perform` returns.
func performExample(chat: ChannelSubscription) {
    // snippet:start perform
    if chat.perform("speak", ["text": "Hello"]) {
        // Queued on the live connection, in call order.
    } else {
        // Not subscribed on a live connection right now: nothing was queued, and nothing will be sent
        // later. Keep the draft and offer to send it again when `chat.state` is `.subscribed`.
    }
    // snippet:end
}

/// The options.
func optionsExample(url: URL) throws -> ActionCableClient {
    // snippet:start options
    var options = CableOptions()
    options.staleTimeout = 15  // welcome deadline, and the longest silence after it
    options.minReconnectDelay = 1  // first backoff step; doubles up to the maximum, ±25% jitter
    options.maxReconnectDelay = 30
    options.maxReconnectAttempts = nil  // unlimited; N allows N + 1 tries, then .stopped(reason: .attemptsExhausted)
    options.messageBufferSize = 128  // per consumer of a subscription; the oldest message is dropped when full
    options.subscribeRetryDelays = [5, 10, 20, 30]  // re-sends of an unanswered subscribe; the last step repeats
    options.unsubscribeDelay = 0.3  // a released subscription waits this long for a new handle on equal params
    options.maxOutgoingMessageSize = 64 << 10  // a bigger perform or whisper returns false (AnyCable's limit)
    options.logLabel = "chat"  // log lines carry client=chat
    options.coding = CableCoding(dates: .iso8601, keys: .asDeclared)  // params, perform data, messages(as:)
    let client = try ActionCableClient(url: url, options: options)  // throws CableError for invalid values

    // Or name only what differs from the defaults:
    let brief = try ActionCableClient(url: url, options: CableOptions(staleTimeout: 30, maxReconnectAttempts: 5))
    // snippet:end
    brief.close()
    return client
}

/// Logging.
func loggingExample(crashReporter: @escaping @Sendable (String) -> Void) {
    // snippet:start logging
    CableLog.logger = .platform  // os.Logger on Apple platforms, standard error on Linux; INFO and up
    CableLog.logger = CableLogger(minimumLevel: .warn) { level, line in
        crashReporter("\(level) \(line)")  // lines never hold headers, URL paths, queries or payloads
    }
    CableLog.logger = .none  // the default: silent
    // snippet:end
}

/// A client with its own logger and label.
func clientLoggerExample(url: URL, reporter: @escaping @Sendable (String) -> Void) throws -> ActionCableClient {
    // snippet:start client-logger
    var options = CableOptions()
    options.logLabel = "chat"  // lines read `connected host=example.com client=chat attempt=0`
    let client = try ActionCableClient(
        url: url, options: options,
        logger: CableLogger(minimumLevel: .info) { level, line in reporter("\(level) \(line)") })
    // snippet:end
    return client
}

/// Dropped messages.
func dropsExample(chat: ChannelSubscription) {
    // snippet:start drops
    let dropped = chat.messages.droppedCount  // messages lost because the buffer was full
    // snippet:end
    _ = dropped
}

/// A retry countdown.
func nextAttemptExample(client: ActionCableClient, show: @escaping @Sendable (String) -> Void) -> SignalObservation {
    // snippet:start next-attempt
    let countdown = client.nextAttempt.observe(on: .main) { next in
        // nil while an attempt runs (or connected, stopped, ...); set while waiting to retry
        guard let next else { return show("") }
        show("Retrying in \(Int(next.startsAt.timeIntervalSinceNow.rounded(.up))) s")  // client.connect(): now
    }
    // snippet:end
    return countdown
}

/// Params and data from variables.
func variablesExample(client: ActionCableClient, roomID: Int, body: String) throws {
    // snippet:start variables
    let room = try client.subscribe(["channel": "RoomChannel", "room_id": roomID])  // no .int(roomID) needed
    room.perform("speak", ["body": body, "count": 1])  // same identifier and frame as the literal forms
    // snippet:end
}

/// Typed messages and payloads with the client's coders.
func codersExample(url: URL) throws -> ActionCableClient {
    // snippet:start coders
    struct Message: Decodable, Sendable {
        let userName: String  // user_name on the wire
        let sentAt: Date  // "2026-12-02T00:52:17.123Z"
    }
    struct Speak: Encodable {
        let text: String
        let replyTo: Int?  // left out when nil
    }
    var options = CableOptions(staleTimeout: 30)
    options.coding.keys = .snakeCase
    let client = try ActionCableClient(url: url, options: options)
    let room = try client.subscribe(["channel": "ChatChannel"])

    let messages = room.messages(as: Message.self)  // messages.undecodableCount: how many were skipped
    room.perform("speak", Speak(text: "hi", replyTo: 7))  // {"action":"speak","reply_to":7,"text":"hi"}
    // snippet:end
    _ = messages
    return client
}

/// AnyCable's extended protocol: session recovery after a reconnect.
func anyCableExample(url: URL, reload: @escaping @Sendable () -> Void) throws -> (ActionCableClient, SignalObservation)
{
    // snippet:start anycable-ext
    var options = CableOptions()
    options.wireProtocol = .anyCableExtended  // plain Action Cable against Rails, which does not know it
    let client = try ActionCableClient(url: url, options: options)
    let room = try client.subscribe(["channel": "ChatChannel", "room": "lobby"])
    let watch = room.lastReconnect.observe { reconnect in
        // .recovering, then .recovered: AnyCable replayed what was missed, in order; nothing to do.
        // .resubscribed, .restored with nothing to replay from, .recoveredWithGaps or .historyRejected: reload.
        if let reconnect, reconnect.mayHaveMissedMessages { reload() }
    }
    client.connect()
    // snippet:end
    return (client, watch)
}

/// A first subscribe that asks AnyCable for what was broadcast since a time.
func historySinceExample(client: ActionCableClient, lastSeen: Date) throws -> ChannelSubscription {
    // snippet:start history-since
    // Replays what the room broadcast since lastSeen (AnyCable keeps a few minutes), then the live messages.
    let room = try client.subscribe(["channel": "ChatChannel", "room": "lobby"], historySince: lastSeen)
    // snippet:end
    return room
}

/// The gate from what the platform knows (the network monitor, the app's lifecycle) and the app's own login.
/// `CablePlatform.appInForeground` is unavailable in app extensions, so code that reads it is marked the same way
/// (Xcode can require it of code in a Swift package; see the README).
@available(iOSApplicationExtension, unavailable)
@available(tvOSApplicationExtension, unavailable)
@available(visionOSApplicationExtension, unavailable)
@available(macCatalystApplicationExtension, unavailable)
func platformGateExample(url: URL) throws -> (ActionCableClient, MutableStateValue<Bool>) {
    // snippet:start platform-gate
    let loggedIn = MutableStateValue(false)
    let canConnect = combineLatest(loggedIn, CablePlatform.appInForeground).map { $0 && $1 }

    let client = try ActionCableClient(url: url, canConnect: canConnect)  // follows CablePlatform.networkPath too
    client.connect()  // connects once logged in and in the foreground; disconnects when either turns false
    // snippet:end
    return (client, loggedIn)
}

/// A client that keeps its connection in the background, checked when the app comes back; so marked as above.
@available(iOSApplicationExtension, unavailable)
@available(tvOSApplicationExtension, unavailable)
@available(visionOSApplicationExtension, unavailable)
@available(macCatalystApplicationExtension, unavailable)
func foregroundCheckExample(url: URL, loggedIn: MutableStateValue<Bool>) throws -> ActionCableClient {
    // snippet:start foreground-check
    // A call or audio app keeps its connection in the background; it is checked when the app comes back.
    let client = try ActionCableClient(url: url, canConnect: loggedIn, foreground: CablePlatform.appInForeground)
    // snippet:end
    return client
}

/// A Linux service that tells the client what its network manager sees.
func networkServiceExample(url: URL) throws -> ActionCableClient {
    // snippet:start network-service
    let path = MutableStateValue<NetworkPath?>(nil)  // nil: no answer yet, counted as usable
    let service = try ActionCableClient(url: url, network: path.readOnly)
    service.connect()
    // From the network manager's callbacks:
    path.value = NetworkPath(status: .satisfied, interfaces: [NetworkInterface(name: "eth0", kind: .wiredEthernet)])
    path.value = NetworkPath(status: .satisfied, interfaces: [NetworkInterface(name: "wlan0", kind: .wifi)])  // checked
    service.networkChanged()  // or just: something changed (a new route, a resumed VM); check now
    // snippet:end
    return service
}

/// AnyCable's token as a subprotocol, out of URLs and logs.
func anyCableTokenExample(url: URL, token: @escaping @Sendable () async -> String) throws -> ActionCableClient {
    // snippet:start auth-anycable-token
    let client = try ActionCableClient(url: url) { request in
        request.anyCableToken = await token()  // Sec-WebSocket-Protocol: anycable-token.<token>, actioncable-v1-json…
    }
    // snippet:end
    return client
}

/// A network input that refuses Low Data Mode and cellular; with the foreground input, so marked as above.
@available(iOSApplicationExtension, unavailable)
@available(tvOSApplicationExtension, unavailable)
@available(visionOSApplicationExtension, unavailable)
@available(macCatalystApplicationExtension, unavailable)
func unmeteredGateExample(url: URL, loggedIn: MutableStateValue<Bool>) throws -> ActionCableClient {
    // snippet:start platform-gate-unmetered
    // Wi-Fi or Ethernet only: not in Low Data Mode, not on cellular or a personal hotspot.
    let unmetered = CablePlatform.networkAvailable(NetworkUsability(allowsConstrained: false, allowsExpensive: false))
    let canConnect = combineLatest(loggedIn, unmetered, CablePlatform.appInForeground).map { $0 && $1 && $2 }
    // snippet:end
    return try ActionCableClient(url: url, canConnect: canConnect)
}

/// Gate inputs that change together, kept in one state.
func sessionGateExample(url: URL) throws -> ActionCableClient {
    // snippet:start gate-together
    struct Session: Equatable {
        var loggedIn = false
        var accountReady = false
    }
    let session = MutableStateValue(Session())
    let canConnect = combineLatest(session.map { $0.loggedIn && $0.accountReady }, CablePlatform.networkAvailable)
        .map { $0 && $1 }
    let client = try ActionCableClient(url: url, canConnect: canConnect)
    // One update, one value: the gate never sees the new login with the old account.
    session.update {
        $0.loggedIn = true
        $0.accountReady = true
    }
    // snippet:end
    return client
}

/// AnyCable's pub/sub streams: signed and public, with no channel class.
func streamsExample(client: ActionCableClient, signedName: String) -> [ChannelSubscription] {
    // snippet:start anycable-streams
    // The signed name comes from your backend: AnyCable::Streams.signed("chat/42"), or Rails' signed_stream_name.
    let chat = client.stream(signed: signedName)
    // A public stream: only if AnyCable runs with --public_streams; otherwise the handle is .rejected.
    let lobby = client.stream(named: "lobby")
    Task {
        for await message in chat.messages { print(message) }  // like any subscription's messages
    }
    // snippet:end
    return [chat, lobby]
}

/// Turbo Streams (Hotwire): the HTML Rails broadcasts, as strings.
func turboExample(client: ActionCableClient, signedStreamName: String, apply: @escaping @Sendable (String) -> Void)
    throws -> ChannelSubscription
{
    // snippet:start turbo-streams
    // signedStreamName: what `turbo_stream_from @room` renders in the page's
    // <turbo-cable-stream-source signed-stream-name="…">, or Turbo::StreamsChannel.signed_stream_name(@room).
    let stream = try client.subscribe([
        "channel": "Turbo::StreamsChannel", "signed_stream_name": .string(signedStreamName),
    ])
    Task {
        // <turbo-stream action="append" target="messages"><template>…</template></turbo-stream>
        for await html in stream.messages(as: String.self) { apply(html) }
    }
    // snippet:end
    return stream
}

/// Whisper: client-to-client messages that the server relays without the application.
func whisperExample(room: ChannelSubscription, me: String) {
    // snippet:start whisper
    struct Typing: Codable, Sendable { let user: String }
    // true: sent on the live connection; false: not subscribed there (nothing is queued offline).
    // Nothing tells you whether anyone received it, and the server may have whisper off for this stream.
    let sent = room.whisper(Typing(user: me))
    // The others get it on their messages, with no stream position: never in history or a replay.
    let typing = room.messages(as: Typing.self)
    // snippet:end
    _ = (sent, typing)
}

// snippet:start presence
/// Who is in the room, for a SwiftUI list.
@MainActor final class RoomPresenceModel {
    private(set) var online: [PresenceMember] = []
    private(set) var lastEvent: PresenceEvent?
    private var watches: [SignalObservation] = []

    func start(_ room: ChannelSubscription, userID: String, name: String) throws {
        // Kept by the client: joined again after every reconnect, until leave() or unsubscribe.
        try room.presence.join(id: userID, info: ["name": .string(name)])
        watches = [
            // nil until the server answers, and again after a disconnect (missed events are not replayed).
            room.presence.members.observe(on: .main) { [weak self] members in
                self?.online = (members ?? [:]).values.sorted { $0.id < $1.id }
            },
            room.presence.events.observe(on: .main) { [weak self] event in self?.lastEvent = event },
        ]
    }

    func refresh(_ room: ChannelSubscription) async {
        // A server without presence on this stream never answers: info() times out instead of hanging.
        if let members = try? await room.presence.info(timeout: 5) {
            online = members.values.sorted { $0.id < $1.id }
        }
    }

    func stop(_ room: ChannelSubscription) {
        room.presence.leave()
        watches = []
    }
}
// snippet:end

/// The live session: what the server chose and whether AnyCable restored it.
func sessionExample(client: ActionCableClient) -> SignalObservation {
    // snippet:start session
    let watch = client.session.observe(on: .main) { session in
        guard let session else { return }  // nil while there is no live session
        print(session.wireProtocol, session.restored ? "restored" : "fresh")  // the sid stays out of logs
    }
    // snippet:end
    return watch
}

/// Stream positions: per message, and kept across launches.
func positionsExample(client: ActionCableClient, saved: Data?) throws -> (ChannelSubscription, Data) {
    // snippet:start stream-positions
    let params: JSONValue = ["channel": "ChatChannel", "room": "lobby"]
    let kept = try saved.map { try JSONDecoder().decode([StreamPosition].self, from: $0) } ?? []
    // On the extended protocol, once confirmed, AnyCable replays what came after the kept positions.
    let room = try client.subscribe(params, resumingFrom: kept)  // or stream(signed:resumingFrom:), stream(named:…)
    // lastReconnect says how it went: .recovering, then .recovered, .recoveredWithGaps or .historyRejected.
    Task {
        // Each message with the stream it came from (nil: Rails, or a whisper). Apps that never ask pay nothing.
        for await message in room.messagesWithPositions.values {
            print(message.position?.stream ?? "-", message.value)
        }
    }
    let toSave = try JSONEncoder().encode(room.streamPositions)  // the last position per stream
    // snippet:end
    return (room, toSave)
}

/// Signals for view models: zip pairs each question with its answer, in order.
@MainActor
func zipExample(asked: AnySignal<String>, bot: ChannelSubscription) -> SignalObservation {
    // snippet:start signals-zip
    struct Answer: Decodable, Sendable { let text: String }
    // Each question asked of the bot, paired with its answer: zip matches the n-th of each, in order, and holds
    // a question until its answer comes (under the observer's BufferingPolicy).
    let exchanges = zip(asked, bot.messages(as: Answer.self)).map { question, answer in
        "\(question) → \(answer.text)"
    }
    let watch = exchanges.observe(on: .main) { print($0) }
    // snippet:end
    return watch
}
