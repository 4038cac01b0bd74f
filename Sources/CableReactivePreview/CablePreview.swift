import CableReactive
import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// A real `ActionCableClient` connected to a scripted Action Cable server in memory, for SwiftUI previews and
/// view-model tests. It needs no network, no server and no real time.
///
/// Hand ``client`` to the view model. Its own code then runs unchanged: it subscribes, connects, observes
/// and performs. The preview server answers from the script.
///
/// ```swift
/// let preview = CablePreview(channels: [
///     "ChatChannel": .confirm(
///         messages: [["user": "ada", "text": "hi"]],
///         replies: ["speak": { data in ["user": "me", "text": data["text"] ?? ""] }]),
///     "AdminChannel": .reject,
/// ])
/// let model = ChatModel(client: preview.client)  // subscribes to ChatChannel and connects, as in the app
///
/// // In a @MainActor test:
/// model.start()
/// preview.flush()  // the welcome, the confirmation, "hi", and every observer of the model, in order
/// preview.send(["user": "bob", "text": "yo"], to: "ChatChannel")
/// model.say("hello")  // perform("speak", ...): recorded, and answered by the reply rule
/// preview.flush()
/// #expect(preview.performed.map(\.action) == ["speak"])
/// preview.drop()  // the network fails: lastDisconnect, then connecting(attempt: 1)
/// preview.flush()
/// preview.advance(by: 1)  // the retry (delays have no jitter here): connected, confirmed again
/// ```
///
/// The server:
/// - accepts each connection at once and sends the welcome (while ``acceptsConnections`` is true);
/// - answers each `subscribe` as the script says: ``Channel/confirm(messages:replies:)`` confirms and then sends
///   the channel's messages, on every connection (as a Rails channel that transmits from `subscribed`);
///   ``Channel/reject`` rejects; ``Channel/unanswered`` never answers. `subscriptionRule` decides first, from the
///   params; then `channels`, by the params' `"channel"`; then `otherChannels`;
/// - records every `perform` in ``performed`` and answers it with the channel's reply for that action, if any;
/// - sends ``send(_:to:)`` messages, drops the connection (``drop()``) or says goodbye
///   (``serverDisconnect(reason:reconnect:)``) when told;
/// - pings every 3 s of virtual time, so that ``advance(by:)`` never makes a quiet connection look stale;
/// - speaks plain Action Cable (`actioncable-v1-json`), whatever `CableOptions.wireProtocol` says.
///
/// Time: the client's clock stands still. Its timers (the welcome and stale deadlines, reconnect backoff,
/// subscribe re-sends) wait for ``advance(by:)``. A preview left open for an hour never goes stale, and a
/// "reconnecting" state stays on screen until you advance. Delays have no jitter: a retry waits its nominal
/// delay (1 s, 2 s, 4 s, ... with the default options).
///
/// Threading: everything runs on the main queue, the main actor's executor (in an app, the main thread), one
/// piece at a time, in the order it was queued. That is the observers of what the client publishes
/// (`ActionCableClient.state`, `ActionCableClient.lastDisconnect`, `ActionCableClient.nextAttempt`, each
/// subscription's state; the values themselves are written at once, so `state.value` already reads them),
/// every message observer without a queue of its own, and every event of the server. It runs at the next turn of the
/// main queue (in a SwiftUI preview, right away), or at once when a `@MainActor` test calls ``flush()``. So
/// observers may assume the main actor (`MainActor.assumeIsolated`), and a test checks the view model after
/// each step without waiting. An observer given a queue (`observe(on: .main)`) and a `for await` loop run as
/// with any client: on that queue, or on the loop's task; a test awaits them. Every method except ``flush()``
/// and ``advance(by:)`` may be called from any thread. What it asks of the server waits in the same queue,
/// behind everything queued before it, and applies to the connection that is open when its turn comes.
///
/// Where it lives: in its own product, CableReactivePreview, which an app target may link. It has no socket, no
/// thread and no timer, and needs only CableReactive and Signals (on Linux, FoundationEssentials). It is not in
/// CableTesting, which brings `LocalCableServer`'s sockets and threads and full Foundation. Nor is it in
/// CableReactive: dead-code stripping keeps a Swift class that nothing uses (its metadata record stays, and its
/// vtable keeps its methods; so it is on Linux), and every app would carry it, previews or not.
///
/// Lifetime: the client keeps the preview's server and clock, and the preview keeps its client. So the view
/// model may hold only ``client``. Releasing the client closes it, as always.
public final class CablePreview: Sendable {
    /// How the preview server answers a subscription: confirm (with messages and replies), reject, or never.
    public struct Channel: Sendable {
        enum Answer: Sendable {
            case confirm
            case reject
            case unanswered
        }

        let answer: Answer
        let messages: [JSONValue]
        let replies: [String: @Sendable (JSONValue) -> JSONValue?]

        /// Confirms the subscription, then sends `messages` to it, in order, after every confirmation.
        ///
        /// ```swift
        /// .confirm(
        ///     messages: [["user": "ada", "text": "hi"]],
        ///     replies: ["speak": { data in ["user": "me", "text": data["text"] ?? ""] }])
        /// ```
        ///
        /// - Parameters:
        ///   - messages: what the channel transmits once it has confirmed, as a Rails channel does from
        ///     `subscribed`.
        ///   - replies: by action, what the channel sends back to the subscription after a `perform` of that
        ///     action: the message built from the perform's data (without `"action"`), or `nil` for none. Each
        ///     reply runs on the main actor in the preview's queue, under no lock.
        public static func confirm(
            messages: [JSONValue] = [],
            replies: [String: @Sendable (_ data: JSONValue) -> JSONValue?] = [:]
        ) -> Channel {
            Channel(answer: .confirm, messages: messages, replies: replies)
        }

        /// Rejects the subscription (again after every reconnect): `SubscriptionState.rejected`.
        public static var reject: Channel { Channel(answer: .reject, messages: [], replies: [:]) }

        /// Never answers, as Rails does for a channel it does not know. The subscription stays
        /// `SubscriptionState.pending`, and the client's re-sends wait for ``CablePreview/advance(by:)``.
        public static var unanswered: Channel { Channel(answer: .unanswered, messages: [], replies: [:]) }
    }

    /// One `perform` that reached the preview server.
    public struct Performed: Sendable, Hashable, CustomStringConvertible {
        /// The subscription's channel name, such as `ChatChannel`.
        public let channel: String
        /// The subscription's params, such as `{"channel":"ChatChannel","room":"lobby"}`.
        public let params: JSONValue
        /// The action, such as `speak`.
        public let action: String
        /// The data sent with the action, without its `"action"` member.
        public let data: JSONValue

        /// A perform of `action` with `data` on a subscription to `channel`; `params` default to
        /// `["channel": channel]`. For comparing with ``CablePreview/performed``:
        ///
        /// ```swift
        /// #expect(preview.performed == [.init(channel: "ChatChannel", action: "speak", data: ["text": "hello"])])
        /// ```
        public init(channel: String, params: JSONValue? = nil, action: String, data: JSONValue = [:]) {
            self.channel = channel
            self.params = params ?? ["channel": .string(channel)]
            self.action = action
            self.data = data
        }

        /// For example `speak {"text":"hello"} on {"channel":"ChatChannel"}`.
        public var description: String { "\(action) \(data) on \(params)" }
    }

    /// The client, connected to the preview server. It is a real `ActionCableClient`: it does not connect
    /// until `ActionCableClient.connect()`, and it behaves as it would against a server.
    public let client: ActionCableClient

    private let server: PreviewServer
    private let queue: PreviewScheduler

    /// The preview's virtual time, for the view model's own time operators (`debounce`, `throttle`, `delay`,
    /// `timeout`): their timers then wait for ``advance(by:)`` like the client's, so one call moves both, and
    /// what they emit runs on the main actor inside ``advance(by:)``.
    ///
    /// ```swift
    /// let model = try RoomsViewModel(client: preview.client, me: "me", rooms: ["lobby"], scheduler: preview.scheduler)
    /// preview.client.connect()
    /// preview.send(["typing": "bob"], toParams: ["channel": "ChatChannel", "room": "lobby"])  // a whisper
    /// preview.flush()
    /// #expect(model.typing == "bob is typing…")
    /// preview.advance(by: 3)  // the model's debounce and the client's timers, in deadline order
    /// #expect(model.typing == nil)
    /// ```
    public var scheduler: some SignalScheduler { queue }

    /// A preview server with the given script, and its client.
    ///
    /// ```swift
    /// let preview = CablePreview(
    ///     channels: ["ChatChannel": .confirm(messages: [["text": "hi"]])],
    ///     subscriptionRule: { params in params["room"] == "secret" ? .reject : nil })
    /// ```
    ///
    /// - Parameters:
    ///   - channels: how to answer a subscribe, by the params' `"channel"`.
    ///   - otherChannels: how to answer a channel that neither `subscriptionRule` nor `channels` decides. The
    ///     default confirms it, without messages.
    ///   - subscriptionRule: decides first, from the subscription's params; `nil` leaves the subscription to
    ///     `channels`. It runs on the main actor in the preview's queue, under no lock.
    ///   - options: the client's options. Its timing options apply in virtual time.
    ///   - canConnect: the client's gate, as in `ActionCableClient`'s initializer.
    ///   - logger: the client's logger; if omitted, the process-wide `CableLog.logger`. Its lines name the host
    ///     `preview.invalid`.
    /// - Precondition: `options` are valid (see `CableOptions`); invalid ones are a programming error here.
    public init<Gate: Signal>(
        channels: [String: Channel] = [:],
        otherChannels: Channel = .confirm(),
        subscriptionRule: (@Sendable (_ params: JSONValue) -> Channel?)? = nil,
        options: CableOptions = CableOptions(),
        canConnect: Gate = AnySignal.just(true),
        logger: CableLogger? = nil
    ) where Gate.Element == Bool {
        let scheduler = PreviewScheduler()
        let server = PreviewServer(
            script: PreviewServer.Script(channels: channels, otherChannels: otherChannels, rule: subscriptionRule),
            scheduler: scheduler)
        queue = scheduler
        self.server = server
        do throws(CableError) {
            // The `.invalid` top-level domain is reserved (RFC 2606): it names no host, and none is looked up.
            guard let url = URL(string: "ws://preview.invalid/cable") else { preconditionFailure("a constant URL") }
            client = try ActionCableClient(
                url: url, options: options, canConnect: canConnect, transport: server, scheduler: scheduler,
                random: NoJitter(), logger: logger)
        } catch {
            preconditionFailure("API misuse: CablePreview with invalid options: \(error)")
        }
    }

    /// Every `perform` that reached the server, oldest first. A perform is recorded as soon as
    /// `ChannelSubscription.perform(_:_:)` returns `true`; one that returned `false` never
    /// left the client.
    public var performed: [Performed] { server.performed }

    /// Whether the server accepts new connections; `true` at first. While it is `false`, every attempt fails as
    /// a refused connection (`WebSocketError.Kind.connectionRefused`), so the client backs off
    /// and retries in virtual time: the states of an app that is offline. The connection already open stays.
    public var acceptsConnections: Bool {
        get { server.acceptsConnections }
        set { server.acceptsConnections = newValue }
    }

    /// Sends `message` to every subscription to `channel` confirmed on the open connection, in its turn.
    ///
    /// ```swift
    /// preview.send(["user": "bob", "text": "yo"], to: "ChatChannel")
    /// ```
    public func send(_ message: JSONValue, to channel: String) {
        server.broadcast(message) { $0["channel"]?.stringValue == channel }
    }

    /// Sends `message` to the subscription with exactly these params, if it is confirmed on the open connection,
    /// in its turn.
    ///
    /// ```swift
    /// preview.send(["text": "yo"], toParams: ["channel": "ChatChannel", "room": "lobby"])
    /// ```
    public func send(_ message: JSONValue, toParams params: JSONValue) {
        server.broadcast(message) { $0 == params }
    }

    /// The network fails under the open connection, in its turn: it ends without a close frame
    /// (`WebSocketError.Kind.abnormalClosure`). The client records it in
    /// `ActionCableClient.lastDisconnect` and retries after its backoff, in virtual time
    /// (``advance(by:)``), or at once on `ActionCableClient.connect()`.
    public func drop() {
        server.end(with: [.closed(.failed(WebSocketError(.abnormalClosure, detail: "dropped by the preview")))])
    }

    /// The server ends the open connection, in its turn: it sends a `disconnect` frame with `reason` and
    /// `reconnect`, then closes normally, as Rails does. With `reconnect: false` the client stops
    /// (`CableState.stopped(reason:)`, `CableStopReason.server(_:)`). A `reason` of `"unauthorized"` or
    /// `"token_expired"` is the client's unauthorized case: with no `onUnauthorized` hook, the preview client
    /// stops (`CableStopReason.Kind.unauthorized`).
    public func serverDisconnect(reason: String? = nil, reconnect: Bool = true) {
        var frame: [String: JSONValue] = ["type": "disconnect", "reconnect": .bool(reconnect)]
        if let reason { frame["reason"] = .string(reason) }
        let text = (try? JSONValue.object(frame).jsonText()) ?? #"{"type":"disconnect"}"#  // strings and a bool
        server.end(with: [.text(text), .closed(.closed(code: .normalClosure, reason: ""))])
    }

    /// Runs everything queued, now, on the main actor: the server's events, the client's publications and the
    /// observers they call, including what those queue in turn, until nothing is left. Called from inside
    /// something the preview is running (an observer), it returns at once. The outer run then goes on with
    /// the rest.
    @MainActor
    public func flush() {
        queue.drain()
    }

    /// Moves the preview's clock forward by `seconds`. The timers that fall due run in deadline order, and
    /// everything queued runs before the first and after each: backoff retries, subscribe re-sends, the
    /// server's pings, and the stale watchdog.
    ///
    /// ```swift
    /// preview.drop()
    /// preview.flush()  // connecting(attempt: 1), the next attempt 1 s away
    /// preview.advance(by: 1)  // connected again
    /// ```
    ///
    /// - Precondition: not called from inside something the preview is running (an observer).
    @MainActor
    public func advance(by seconds: TimeInterval) {
        precondition(queue.advance(by: seconds), "API misuse: CablePreview.advance(by:) inside a callback it runs")
    }
}

/// Jitter that is always zero: each draw is the middle of its range, so a backoff of 1 s ±25% waits 1 s.
private struct NoJitter: RandomNumberGenerator, Sendable {
    func next() -> UInt64 { 1 << 63 }
}
