import Dispatch
import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// An Action Cable client: one WebSocket, many channel subscriptions, automatic reconnection.
///
/// ```swift
/// let client = try ActionCableClient(url: URL(string: "wss://example.com/cable")!) { request in
///     request.origin = "https://example.com"
///     request.setHeader("Authorization", "Bearer \(try await tokens.current())")
/// }
/// let room = try client.subscribe(["channel": "ChatChannel", "room": "lobby"])
/// client.connect()
/// for await message in room.messages { print(message) }
/// ```
///
/// Behaviour:
/// - ``state`` stays ``CableState/connecting(attempt:)`` until the server's welcome; then subscriptions are
///   (re)sent, and re-sent with backoff (5, 10, 20, 30 s ±25%) until confirmed or rejected.
/// - A lost connection is retried with exponential backoff (``CableOptions/minReconnectDelay`` doubling up
///   to ``CableOptions/maxReconnectDelay``, ±25%). A session that was healthy for 10 s comes back after a
///   random delay in [0, minReconnectDelay], or at once if it went stale.
/// - ``CableOptions/staleTimeout`` bounds the wait for the welcome and any silence after it.
/// - A server `disconnect` with `reconnect: false` stops (``CableState/stopped(reason:)``); `unauthorized`
///   or `token_expired` (or an HTTP 401/403 upgrade answer) calls `onUnauthorized` once per streak.
/// - `canConnect` gates everything: while it is false (or has no value yet) the client is
///   ``CableState/disconnected``; when it turns true the client connects at once.
/// - The network (``CablePlatform/networkPath`` unless `network` says otherwise): while the path has no route no
///   attempt starts; a live connection rides out up to 2 s of no route (paths flap in handovers), and is then
///   closed until the route is back, when the client connects at once. A path change that may have broken the
///   live connection (an interface gone, a VPN up, a return from no route), a return to the foreground
///   (`foreground`), a wake from sleep and ``networkChanged()`` each make the client check it: it sends a
///   WebSocket ping (every server must answer one), and to AnyCable also `{"command":"ping"}`, and the
///   connection has 1.5 s to send anything. (Over a transport of the app's own, which cannot ping, Rails has until
///   its next ping is a second overdue.) One that fails is replaced at once, at attempt 0
///   (``CableDisconnect/Kind/checkFailed``); one that answers is kept.
///
/// Threading: every method is thread-safe, and operations apply in call order. ``state`` and each
/// subscription's state change on the callback queue; hooks run in their own tasks; nothing you provide
/// runs on the network thread or under the client's lock.
///
/// Lifetime: keep the client. Releasing it closes it (as ``close()``). Subscriptions do not keep it alive.
public final class ActionCableClient: Sendable {
    let engine: ClientEngine

    /// The connection state. An observer that names no queue gets every value on the callback queue, the current
    /// one first (it is not called inside `observe`); `observe(on:)` gets them on its queue.
    public var state: StateValue<CableState> { engine.views.state }

    /// Why the last session was lost or the last attempt failed; `nil` until one is. Published on the callback
    /// queue, before the state that follows it (`connecting` to retry, or `stopped`). The app's own
    /// ``disconnect()``, ``close()`` and a closed `canConnect` gate are not recorded. See ``CableDisconnect``.
    ///
    /// It is history, not a status: a healthy reconnect does not clear it (it still says why the last session
    /// was lost). A banner shows it only while ``state`` is not ``CableState/connected``:
    ///
    /// ```swift
    /// let banner = combineLatest(client.state, client.lastDisconnect).map { state, last in
    ///     state.isConnected ? nil : last.map { "Reconnecting (\($0.kind))" }
    /// }
    /// ```
    public var lastDisconnect: StateValue<CableDisconnect?> { engine.views.lastDisconnect }

    /// While ``CableState/connecting(attempt:)`` waits to retry (rather than running an attempt): which attempt
    /// comes next and when; `nil` otherwise. Published on the callback queue. See ``CableRetry``.
    public var nextAttempt: StateValue<CableRetry?> { engine.views.nextAttempt }

    /// The live session: the wire protocol the server chose, whether AnyCable restored it (the subscriptions
    /// it listed were not subscribed again; see ``ChannelSubscription/lastReconnect``), and its `sid`. Set
    /// when the welcome arrives, `nil` while there is no live session. Changes arrive on the client's
    /// callback queue.
    ///
    /// ```swift
    /// let watch = client.session.observe(on: .main) { session in
    ///     guard let session else { return }
    ///     print(session.wireProtocol, session.restored ? "restored" : "fresh")
    /// }
    /// ```
    public var session: StateValue<CableSession?> { engine.views.session }

    /// Creates a client; it does not connect until ``connect()``.
    ///
    /// - Parameters:
    ///   - url: the cable endpoint, `ws` or `wss` with a host, e.g. `wss://example.com/cable`. An `http` or
    ///     `https` URL is taken as `ws` or `wss`, as the Rails JS client does (`https://example.com/cable`).
    ///   - options: timing and buffer options; see ``CableOptions``.
    ///   - canConnect: a gate; the client connects only while it is `true`. Combine app conditions with
    ///     `combineLatest` from Signals, e.g. logged in && in the foreground. Turning it false disconnects at once.
    ///   - network: the network path the client follows (see Behaviour above): the system's monitor by default;
    ///     on Linux a state your code keeps from the network manager (`nil`: no answer yet, counted as usable).
    ///   - foreground: whether the app is in the foreground; when it turns `true` after `false`, a live
    ///     connection is checked. Pass ``CablePlatform/appInForeground`` if the app keeps its connection in the
    ///     background (with `appInForeground` in `canConnect` the client is disconnected there anyway).
    ///   - transport: the WebSocket implementation; the platform default if omitted.
    ///   - scheduler: the clock and timers; inject a manual one in tests.
    ///   - random: the source of jitter.
    ///   - callbackQueue: a serial queue where state changes are published and message observers run;
    ///     if omitted, the scheduler's `perform(_:)` (a serial queue per `DispatchScheduler`).
    ///   - logger: this client's logger; if omitted, the process-wide ``CableLog/logger``. Lines carry
    ///     ``CableOptions/logLabel`` when set, so two clients' lines can be told apart.
    ///   - onRequest: edits the upgrade request before every attempt (Origin, tokens, cookies); see
    ///     ``CableRequest``. It runs in a task of its own, so it may await a token refresh. Throwing, or
    ///     leaving a header that cannot be sent (``CableRequest/invalidHeaderNames``), fails the attempt,
    ///     which is retried with backoff.
    ///   - onUnauthorized: called when the server rejects our credentials; return `true` after refreshing
    ///     them to reconnect at once, `false` to stop. Throwing counts as a failed attempt.
    /// - Throws: ``CableError`` `invalidURL` or `invalidOption`.
    public init<Gate: Signal>(
        url: URL,
        options: CableOptions = CableOptions(),
        canConnect: Gate = AnySignal.just(true),
        network: StateValue<NetworkPath?> = CablePlatform.networkPath,
        foreground: StateValue<Bool>? = nil,
        transport: (any WebSocketTransport)? = nil,
        scheduler: any CableScheduler = DispatchScheduler(),
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        callbackQueue: DispatchQueue? = nil,
        logger: CableLogger? = nil,
        onRequest: (@Sendable (inout CableRequest) async throws -> Void)? = nil,
        onUnauthorized: (@Sendable () async throws -> Bool)? = nil
    ) throws(CableError) where Gate.Element == Bool {
        let url = try Self.webSocketURL(url)
        try options.validate()
        engine = ClientEngine(
            url: url,
            options: options,
            transport: transport ?? defaultTransport(),
            scheduler: scheduler,
            random: random,
            callbacks: callbackQueue.map(CallbackExecutor.init) ?? CallbackExecutor(scheduler),
            logger: logger,
            onRequest: onRequest,
            onUnauthorized: onUnauthorized
        )
        engine.startInputs(gate: canConnect, network: network, foreground: foreground)
    }

    deinit { engine.close() }

    /// `url` with a `ws` or `wss` scheme (`http` and `https` are mapped to them); it must have a host.
    static func webSocketURL(_ url: URL) throws(CableError) -> URL {
        let schemes = ["ws": "ws", "wss": "wss", "http": "ws", "https": "wss"]
        guard let scheme = url.scheme.flatMap({ schemes[$0.lowercased()] }), let host = url.host, !host.isEmpty,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { throw CableError.invalidURL() }
        components.scheme = scheme
        guard let mapped = components.url else { throw CableError.invalidURL() }
        return mapped
    }

    /// Starts connecting (once `canConnect` is true). From ``CableState/stopped(reason:)`` it starts over
    /// at attempt 0. While waiting to retry (``CableState/connecting(attempt:)`` between attempts) it starts the
    /// next attempt at once, at the same attempt number: the action of a "retry now" button. Does nothing while
    /// an attempt is in flight or connected, or while `canConnect` is false; logs a WARN after ``close()``.
    public func connect() {
        engine.handle(.machine(.connect))
    }

    /// Tells the client that the network changed, so that it checks the live connection now rather than waiting for
    /// ``CableOptions/staleTimeout`` of silence: for a Linux service that follows its network manager, or an app
    /// with a network signal of its own. A connection that fails the check is replaced at once, at attempt 0; one
    /// that answers is kept; without a live connection this does nothing. (The system's path changes are
    /// followed without it, through the `network` input.)
    ///
    /// ```swift
    /// networkManager.onChange = { client.networkChanged() }
    /// ```
    public func networkChanged() {
        engine.networkChanged()
    }

    /// Closes the connection and stops retrying; subscriptions stay and are re-sent on the next
    /// ``connect()``.
    public func disconnect() {
        engine.handle(.machine(.disconnect))
    }

    /// Closes the client for good: the connection, timers and hooks are released, every subscription becomes
    /// ``SubscriptionState/unsubscribed`` and its messages finish. Idempotent; later calls do nothing.
    public func close() {
        engine.close()
    }

    /// Subscribes to a channel. `params` must be an object with a string `"channel"`.
    ///
    /// Allowed before ``connect()``; the subscribe goes out after every welcome. Subscribing again with params
    /// equal to a live subscription's returns another handle on it: the server sees one `subscribe`, and one
    /// `unsubscribe` once the last handle is unsubscribed or released. After ``close()`` this returns an
    /// ``SubscriptionState/unsubscribed`` handle.
    ///
    /// - Throws: ``CableError`` `missingChannel` or `unencodableData`.
    public func subscribe(_ params: JSONValue) throws(CableError) -> ChannelSubscription {
        try subscribe(params, since: nil)
    }

    /// Subscribes and asks the server to replay what it broadcast since `date` before the live messages
    /// (AnyCable's `history` in the first `subscribe`, anycable-client's `historyTimestamp`): for a screen that
    /// shows what it saw until `date` and wants the rest without a refetch. AnyCable keeps a few minutes of
    /// history per stream (its `history_ttl`); Rails ignores the request, and then nothing is replayed.
    ///
    /// Replayed and live messages come out once each, in stream order. Only the first `subscribe` of a new
    /// subscription carries the request (re-sent with it until confirmed); later reconnects replay from the
    /// stream positions seen (see ``ChannelSubscription/lastReconnect``). A handle that joins a live
    /// subscription with equal params gets no replay.
    ///
    /// ```swift
    /// let room = try client.subscribe(["channel": "ChatChannel", "room": "lobby"], historySince: lastSeen)
    /// ```
    ///
    /// - Throws: ``CableError`` `missingChannel` or `unencodableData`.
    public func subscribe(_ params: JSONValue, historySince date: Date) throws(CableError) -> ChannelSubscription {
        try subscribe(params, since: Int(date.timeIntervalSince1970.rounded(.down)))
    }

    /// Subscribes and resumes from stream positions the app kept (``ChannelSubscription/streamPositions``, from
    /// an earlier launch, say): on AnyCable's extended protocol, once the server confirms, the client asks for
    /// what each stream broadcast after its position (AnyCable's `history`), and delivers it once, in stream
    /// order, before the live messages past it. When AnyCable's history no longer reaches back that far, what
    /// came between is lost and the live messages follow. Rails and plain sessions replay nothing. A handle
    /// that joins a live subscription with equal params keeps that subscription's positions.
    ///
    /// ```swift
    /// let room = try client.subscribe(["channel": "ChatChannel", "room": "lobby"], resumingFrom: saved)
    /// ```
    ///
    /// - Throws: ``CableError`` `missingChannel` or `unencodableData`.
    public func subscribe(_ params: JSONValue, resumingFrom positions: [StreamPosition]) throws(CableError)
        -> ChannelSubscription
    {
        try subscribe(params, since: nil, positions: positions)
    }

    private func subscribe(
        _ params: JSONValue, since: Int?, positions: [StreamPosition] = []
    ) throws(CableError) -> ChannelSubscription {
        let identifier = try CableProtocol.identifier(for: params)
        guard let (route, sink) = engine.subscribe(identifier: identifier, historySince: since, resumingFrom: positions)
        else {
            return closedHandle(identifier: identifier)
        }
        return ChannelSubscription(lease: SubscriptionLease(route: route, sinkID: sink.id), sink: sink)
    }

    /// An ended handle with a context of its own, which leads to no engine (the client is closed).
    private func closedHandle(identifier: String) -> ChannelSubscription {
        let sink = HandleSink(id: 0, bufferSize: 1, state: .unsubscribed)
        sink.messages.finish()
        let context = SubscriptionContext(
            bufferSize: 1, log: engine.log, callbacks: engine.callbacks, coders: engine.subscriptions.coders)
        let route = DeliveryRoute(serial: 0, identifier: identifier, context: context, sinks: [sink])
        return ChannelSubscription(lease: SubscriptionLease(route: route, sinkID: sink.id), sink: sink)
    }

    /// Subscribes to an AnyCable signed stream by its signed name, with no channel class (AnyCable's
    /// `$pubsub` channel, anycable-client's `streamFromSigned`). The name comes from your backend (Rails'
    /// `signed_stream_name`, `AnyCable::Streams.signed`) and is opaque here. The handle is like any other:
    /// state, messages, shared handles for equal names, history and restore on the extended protocol. A
    /// name whose signature the server does not accept is ``SubscriptionState/rejected``. A stream has no
    /// channel to call, so ``ChannelSubscription/perform(_:_:)-(String,JSONValue)`` returns `false`;
    /// ``ChannelSubscription/whisper(_:)-(JSONValue)`` and ``ChannelSubscription/presence`` work where the
    /// server enables them.
    ///
    /// ```swift
    /// let feed = client.stream(signed: signedName)      // from your API: AnyCable::Streams.signed("chat/42")
    /// for await message in feed.messages { print(message) }
    /// ```
    ///
    /// For Turbo Streams (Hotwire), subscribe to `Turbo::StreamsChannel` with the `signed_stream_name` Rails
    /// renders, and read its HTML: `try client.subscribe(["channel": "Turbo::StreamsChannel",
    /// "signed_stream_name": .string(name)]).messages(as: String.self)`.
    public func stream(signed signedName: String, historySince date: Date? = nil) -> ChannelSubscription {
        stream(["channel": "$pubsub", "signed_stream_name": .string(signedName)], since: date)
    }

    /// Subscribes to an AnyCable public stream by its name (`$pubsub` with `stream_name`, anycable-client's
    /// `streamFrom`), which the server accepts only when it runs with `--public_streams`; otherwise the handle
    /// is ``SubscriptionState/rejected``. Anyone who knows the name can read it (and, with whisper, write to
    /// its subscribers): use ``stream(signed:historySince:)`` for anything private. Otherwise as that method.
    ///
    /// ```swift
    /// let lobby = client.stream(named: "lobby")
    /// lobby.whisper(["typing": true])  // public streams always allow whisper
    /// ```
    public func stream(named name: String, historySince date: Date? = nil) -> ChannelSubscription {
        stream(["channel": "$pubsub", "stream_name": .string(name)], since: date)
    }

    /// Subscribes to an AnyCable signed stream, resuming from positions kept from an earlier launch: as
    /// ``subscribe(_:resumingFrom:)`` for a channel (on a session that replays, the streams after `positions` are
    /// asked for once the server confirms; ``ChannelSubscription/lastReconnect`` says how the replay went).
    ///
    /// ```swift
    /// let feed = client.stream(signed: signedName, resumingFrom: savedPositions)
    /// ```
    public func stream(signed signedName: String, resumingFrom positions: [StreamPosition]) -> ChannelSubscription {
        stream(["channel": "$pubsub", "signed_stream_name": .string(signedName)], since: nil, positions: positions)
    }

    /// Subscribes to an AnyCable public stream, resuming from positions kept from an earlier launch; see
    /// ``stream(signed:resumingFrom:)``.
    ///
    /// ```swift
    /// let lobby = client.stream(named: "lobby", resumingFrom: savedPositions)
    /// ```
    public func stream(named name: String, resumingFrom positions: [StreamPosition]) -> ChannelSubscription {
        stream(["channel": "$pubsub", "stream_name": .string(name)], since: nil, positions: positions)
    }

    /// A `$pubsub` subscription: its params are strings, which always encode.
    private func stream(_ params: JSONValue, since date: Date?, positions: [StreamPosition] = []) -> ChannelSubscription
    {
        let since = date.map { Int($0.timeIntervalSince1970.rounded(.down)) }
        do {
            return try subscribe(params, since: since, positions: positions)
        } catch {
            // Unreachable: the params hold a string channel and strings only. An ended handle, not a crash.
            return closedHandle(identifier: (try? params.jsonText()) ?? "")
        }
    }

    /// Subscribes with params built from variables, without wrapping each value; see ``subscribe(_:)-(JSONValue)``.
    ///
    /// ```swift
    /// let roomID = 42
    /// let room = try client.subscribe(["channel": "RoomChannel", "room_id": roomID])
    /// ```
    ///
    /// Each value is encoded to JSON on its own, with the client's coders (``CableOptions/coding``), so the
    /// identifier is the one the literal form `["channel": "RoomChannel", "room_id": 42]` gives, and a `Date`
    /// goes out as ISO 8601 (`"2026-12-02T00:52:17.123Z"`) by default. A `nil` Optional value is sent as
    /// `null`.
    ///
    /// - Throws: ``CableError`` `missingChannel`, or `unencodableData` when a value does not encode (its
    ///   ``CableError/codingPath`` starts with the member's name).
    public func subscribe(_ params: [String: any Encodable & Sendable]) throws(CableError) -> ChannelSubscription {
        try subscribe(JSONValue.object(JSONValue.encodingEach(params, encoder: engine.subscriptions.coders.encoder)))
    }

    /// Subscribes with `Encodable` params, encoded with the client's coders (``CableOptions/coding``: ISO 8601
    /// dates by default); see ``subscribe(_:)-(JSONValue)``. The identifier is their JSON, compact with sorted
    /// keys, whatever order the type encodes them in.
    ///
    /// ```swift
    /// struct Room: Encodable { let channel = "RoomChannel"; let roomID: Int; let since: Date }
    /// let room = try client.subscribe(Room(roomID: 42, since: Date(timeIntervalSince1970: 0)))
    /// print(room.identifier)
    /// // Prints: {"channel":"RoomChannel","roomID":42,"since":"1970-01-01T00:00:00.000Z"}
    /// ```
    ///
    /// - Throws: ``CableError`` `missingChannel`, or `unencodableData` when `params` does not encode (its
    ///   ``CableError/codingPath`` and description say where and why).
    public func subscribe(_ params: some Encodable) throws(CableError) -> ChannelSubscription {
        let value: JSONValue
        do {
            value = try JSONValue(encoding: params, encoder: engine.subscriptions.coders.encoder)
        } catch {
            throw CableError.unencodableData(error)
        }
        return try subscribe(value)
    }
}

extension ActionCableClient {
    /// Creates a client with no gate: it connects whenever asked. See the designated initializer.
    public convenience init(
        url: URL,
        options: CableOptions = CableOptions(),
        transport: (any WebSocketTransport)? = nil,
        scheduler: any CableScheduler = DispatchScheduler(),
        random: any RandomNumberGenerator & Sendable = SystemRandomNumberGenerator(),
        callbackQueue: DispatchQueue? = nil,
        logger: CableLogger? = nil,
        onRequest: (@Sendable (inout CableRequest) async throws -> Void)? = nil,
        onUnauthorized: (@Sendable () async throws -> Bool)? = nil
    ) throws(CableError) {
        try self.init(
            url: url, options: options, canConnect: AnySignal.just(true), transport: transport, scheduler: scheduler,
            random: random, callbackQueue: callbackQueue, logger: logger, onRequest: onRequest,
            onUnauthorized: onUnauthorized)
    }
}
