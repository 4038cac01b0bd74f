import CableReactive
import Foundation

extension LocalCableServer {
    /// How a ``LocalCableServer`` listens and behaves. The defaults mimic a Rails server.
    ///
    /// | option | default | meaning |
    /// |---|---|---|
    /// | ``port`` | 0 | the loopback port; 0 picks a free one |
    /// | ``path`` | `/cable` | the mount path; upgrades elsewhere get 404 |
    /// | ``subprotocols`` | `actioncable-v1-json`, `actioncable-unsupported` | the first one the client offers is chosen |
    /// | ``pingInterval`` | 3 s | seconds between pings to welcomed connections; `nil` sends none |
    /// | ``welcome`` | `.immediately` | when new connections get their welcome |
    /// | ``includesSessionID`` | false | adds `"sid"` (the connection's number) to the welcome |
    /// | ``reliableStreams`` | `nil` | AnyCable's extended protocol: stream positions and history, resumable sessions |
    /// | ``pubSub`` | `nil` | AnyCable's `$pubsub` signed and public streams, Turbo Streams, whisper and presence |
    /// | ``identifierSpelling`` | `nil` | echo identifiers byte for byte (Rails), or re-encode them like a parsing server |
    /// | ``maxRequestHeadSize`` | 16 KiB | a larger upgrade request gets 431 |
    /// | ``maxMessageSize`` | 1 MiB | a larger frame or message is closed with 1009 |
    /// | ``maxOutboundBytes`` | 16 MiB | a connection that lets more pile up unsent is dropped |
    /// | ``maxConnections`` | 256 | connections beyond it are closed as soon as they are accepted |
    /// | ``maxBufferedCommands`` | 1024 | commands held before the welcome; more closes the connection (1008) |
    /// | ``historyLimit`` | 1000 | requests and commands kept in ``Snapshot`` (the oldest go first) |
    /// | ``historyByteLimit`` | 16 MiB | the most text the recorded commands may hold together |
    /// | ``handshakeTimeout`` | 10 s | time a new socket has to send its upgrade request |
    /// | ``closeTimeout`` | 1 s | time a closing connection has to finish before its socket is closed |
    ///
    /// ```swift
    /// var options = LocalCableServer.Options()
    /// options.pingInterval = 0.1
    /// options.welcome = .after(0.5)
    /// let server = try LocalCableServer(options: options)
    /// ```
    public struct Options: Sendable {
        /// The TCP port on 127.0.0.1; 0 (the default) lets the system pick a free one (see ``LocalCableServer/port``).
        public var port: UInt16 = 0
        /// The path the cable is mounted at; it must start with `/` and hold only URL path characters.
        public var path = "/cable"
        /// The subprotocols the server knows. It chooses the first one the client offers that is in this list,
        /// like Rails, and sends no `Sec-WebSocket-Protocol` when none matches (the upgrade still succeeds).
        public var subprotocols = ["actioncable-v1-json", "actioncable-unsupported"]
        /// Seconds between `{"type":"ping","message":<unix time>}` frames, sent from one timer to every welcomed
        /// connection (so the first ping after a welcome comes 0 to `pingInterval` seconds later, as in Rails).
        /// `nil` disables pings.
        public var pingInterval: TimeInterval? = 3
        /// When a new connection is welcomed; changeable later through ``LocalCableServer/welcome``.
        public var welcome = WelcomePolicy.immediately
        /// Whether the welcome carries `"sid"`, the connection's number as a string (as AnyCable sends a session id).
        public var includesSessionID = false
        /// AnyCable's reliable streams and resumable sessions (`nil`, the default: off). When set, the server
        /// also knows `actioncable-v1-ext-json`; every broadcast carries `stream_id` (the identifier), `epoch`
        /// and `offset` and is kept for replay (the newest ``ReliableStreams/historyLimit`` per stream); a
        /// `history` request is answered with the broadcasts after an offset and `confirm_history`, or with
        /// `reject_history` when they are gone or the epoch changed (``LocalCableServer/resetStreamEpoch()``);
        /// and an extended connection's welcome carries a session id that the next connection may present
        /// (`X-AnyCable-Restore-SID`, or `?sid=`) within ``ReliableStreams/sessionTTL`` to get its
        /// subscriptions back without subscribing (`"restored":true,"restored_ids":[…]`).
        public var reliableStreams: ReliableStreams?
        /// AnyCable's pub/sub streams, whisper and presence (`nil`, the default: off, a Rails server). When set,
        /// `$pubsub` subscriptions with a `signed_stream_name` (verified with ``PubSub/secret``) or a
        /// `stream_name` (with ``PubSub/publicStreams``) and `Turbo::StreamsChannel` subscriptions (with
        /// ``PubSub/turboStreams``) are confirmed or rejected by the server itself, without
        /// ``LocalCableServer/subscriptionRule``, and get ``LocalCableServer/broadcast(_:toStream:)``; `whisper`,
        /// `join`, `leave` and `presence` commands work where ``PubSub`` enables them. See ``PubSub`` for the rules.
        ///
        /// ```swift
        /// options.pubSub = LocalCableServer.PubSub(secret: "s3Krit")
        /// ```
        public var pubSub: PubSub?
        /// How the server writes identifiers back in confirmations, rejections and messages. `nil` (the default)
        /// echoes each one byte for byte, as Rails and AnyCable do. A spelling makes the server behave like one
        /// that parses identifiers and encodes them again, so an app can test that its client still routes them:
        ///
        /// ```swift
        /// options.identifierSpelling = [.escapedNonASCII, .escapedSlash, .spaced, .reversedKeys]
        /// ```
        ///
        /// The server still knows each subscription by the identifier the client sent (``ConnectionInfo``,
        /// ``LocalCableServer/broadcast(_:to:)``); only what it writes changes.
        public var identifierSpelling: IdentifierSpelling?
        /// The largest upgrade request head, in bytes.
        public var maxRequestHeadSize = 16_384
        /// The largest frame and the largest message a client may send, in bytes (125 to 1 GiB).
        public var maxMessageSize = 1 << 20
        /// The most bytes waiting to be written to one connection; beyond it the connection is dropped.
        public var maxOutboundBytes = 16 << 20
        /// The most connections open at once (including those still sending their upgrade request).
        public var maxConnections = 256
        /// The most commands a connection may send before its welcome; they are held and run after it.
        public var maxBufferedCommands = 1024
        /// How many requests and commands ``Snapshot`` keeps.
        public var historyLimit = 1000
        /// The most bytes of message text ``Snapshot/commands`` keeps; beyond it the oldest commands go first.
        public var historyByteLimit = 16 << 20
        /// Seconds a new socket has to send a complete upgrade request before it is closed.
        public var handshakeTimeout: TimeInterval = 10
        /// Seconds a closing connection (after a close frame or an HTTP error) has before its socket is closed.
        public var closeTimeout: TimeInterval = 1

        /// The defaults.
        public init() {}

        /// Checks every option; ``LocalCableServer/init(options:)`` calls it.
        ///
        /// - Throws: ``LocalCableServerError`` of kind ``LocalCableServerError/Kind/invalidOption`` naming the option.
        public func validate() throws(LocalCableServerError) {
            func check(_ ok: Bool, _ name: String) throws(LocalCableServerError) {
                if !ok { throw LocalCableServerError(.invalidOption, detail: name) }
            }
            let pathCharacters = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "?#"))
            try check(
                path.hasPrefix("/") && path.unicodeScalars.allSatisfy { $0.isASCII && pathCharacters.contains($0) },
                "path")
            try check(subprotocols.allSatisfy(CableRequest.isToken), "subprotocols")
            try check(pingInterval.map { $0.isFinite && $0 > 0 } ?? true, "pingInterval")
            try check(welcome.isValid, "welcome")
            try check(maxRequestHeadSize >= 256, "maxRequestHeadSize")
            // A frame header may announce up to this much, and the decoder reserves it: keep it allocatable.
            try check((125...(1 << 30)).contains(maxMessageSize), "maxMessageSize")
            try check(maxOutboundBytes >= 1024, "maxOutboundBytes")
            try check(maxConnections >= 1, "maxConnections")
            try check(maxBufferedCommands >= 0, "maxBufferedCommands")
            try check(historyLimit >= 0, "historyLimit")
            try check(historyByteLimit >= 0, "historyByteLimit")
            try check(handshakeTimeout.isFinite && handshakeTimeout > 0, "handshakeTimeout")
            try check(closeTimeout.isFinite && closeTimeout > 0, "closeTimeout")
            if let reliableStreams {
                try check(reliableStreams.historyLimit >= 1, "reliableStreams.historyLimit")
                try check(
                    reliableStreams.sessionTTL.isFinite && reliableStreams.sessionTTL >= 0, "reliableStreams.sessionTTL"
                )
            }
            if let pubSub {
                try check(pubSub.presenceTTL.isFinite && pubSub.presenceTTL >= 0, "pubSub.presenceTTL")
            }
        }
    }

    /// AnyCable's pub/sub streams, whisper and presence (see ``Options/pubSub``), as AnyCable 1.6 with a broker
    /// gives them to clients. Rules and sources: AnyCable's streams controller, node and memory broker.
    ///
    /// | setting | default | meaning (AnyCable's flag) |
    /// |---|---|---|
    /// | ``secret`` | – | the streams secret signed names are verified with (`--streams_secret`) |
    /// | ``publicStreams`` | false | `$pubsub` with a plain `stream_name` is confirmed (`--public_streams`) |
    /// | ``signedWhisper`` | false | whisper on signed `$pubsub` streams (`--streams_whisper`) |
    /// | ``signedPresence`` | true | presence on signed `$pubsub` streams (`--streams_presence`) |
    /// | ``turboStreams`` | true | `Turbo::StreamsChannel` is verified with the same secret (`--turbo_streams`) |
    /// | ``presenceTTL`` | 15 s | how long an ended connection stays present (`--presence_ttl`) |
    /// | ``whisperChannels`` | [] | channel classes whose subscriptions whisper (Rails' `stream_from …, whisper: true`) |
    /// | ``presenceChannels`` | [] | channel classes whose subscriptions track presence (Rails' `join_presence`) |
    ///
    /// **Subscriptions.** `{"channel":"$pubsub","signed_stream_name":"…"}` is confirmed when the name verifies
    /// (``LocalCableServer/signedStreamName(_:secret:)``), `{"channel":"$pubsub","stream_name":"…"}` when
    /// ``publicStreams`` is on; with both names the signed one counts. A bad signature, a payload that is not a
    /// JSON string, no name, a name that is not a string, or a public stream while they are off get
    /// `reject_subscription`. `Turbo::StreamsChannel` needs a verified `signed_stream_name` likewise (with
    /// ``turboStreams`` off it is an ordinary channel). The stream of these subscriptions is the plain name; that
    /// of any other subscription is its identifier. A `message` (perform) on them is recorded and goes nowhere.
    ///
    /// **Whisper** `{"command":"whisper","identifier":…,"data":<any JSON>}` is enabled on public `$pubsub` streams,
    /// on signed ones with ``signedWhisper`` and on ``whisperChannels``; never on Turbo. Every other connection
    /// subscribed to the stream receives `{"identifier":<its identifier>,"message":<data>}` (no `type`, no stream
    /// position, never kept for history; missing or null `data` arrives as the string `"null"`); the sender's
    /// connection receives nothing. There is never a reply.
    ///
    /// **Presence** is enabled on public `$pubsub` streams, on signed ones with ``signedPresence`` and on
    /// ``presenceChannels``; elsewhere `join`, `leave` and `presence` get no reply at all.
    /// - `{"command":"join","identifier":…,"presence":{"id":"u1","info":…}}` (or a `subscribe` with a `presence`
    ///   member, which joins right after `confirm_subscription`): when `u1` is new in the stream, every subscriber
    ///   of the stream, the joining one included, gets
    ///   `{"type":"presence","identifier":…,"message":{"type":"join","id":"u1","info":…}}` (no `info` when null).
    ///   An id already present (from any connection) only has its info replaced; a connection holds one id per
    ///   stream, so a join with another id is ignored. A `presence` member that is not an object, or an `id`
    ///   that is not a string, makes the frame undecodable for AnyCable, which stops reading the connection:
    ///   here the connection is closed with 1007 (invalid payload data).
    /// - `leave`, or `unsubscribe`, removes the connection's hold; when nobody holds the id any more, the
    ///   remaining subscribers get `{"type":"presence","identifier":…,"message":{"type":"leave","id":"u1"}}`.
    /// - `presence` is answered to the requester only:
    ///   `{"type":"presence","identifier":…,"message":{"type":"info","total":1,"records":[{"id":"u1","info":…}]}}`,
    ///   in join order, and without `records` when nobody is present.
    /// - A connection that ends keeps its holds for ``presenceTTL`` seconds, then `leave` goes out if nobody else
    ///   holds the id; a connection joining the same id meanwhile (a restored session re-sending its join) makes
    ///   neither `leave` nor `join`. A restored session's subscriptions keep their stream, whisper and presence,
    ///   but the new connection is in no presence set until it joins again.
    ///
    /// Not modelled: CableReady streams, `meta.exclude_socket`, the `error` info reply of a failing broker, and
    /// the expiry of presence on plain `actioncable-v1-json` connections that AnyCable does not refresh.
    ///
    /// ```swift
    /// var pubSub = LocalCableServer.PubSub(secret: "s3Krit")
    /// pubSub.publicStreams = true
    /// pubSub.presenceTTL = 0.3
    /// options.pubSub = pubSub
    /// let server = try LocalCableServer(options: options)
    /// server.broadcast(["text": "hi"], toStream: "chat/42")
    /// ```
    public struct PubSub: Sendable {
        /// The secret signed stream names are verified with (AnyCable's streams secret).
        public var secret: String
        /// Whether `$pubsub` subscriptions to a plain `stream_name` are confirmed (AnyCable's `--public_streams`).
        public var publicStreams = false
        /// Whether signed `$pubsub` streams allow whisper (AnyCable's `--streams_whisper`); public ones always do.
        public var signedWhisper = false
        /// Whether signed `$pubsub` streams track presence (AnyCable's `--streams_presence`, on by default);
        /// public ones always do.
        public var signedPresence = true
        /// Whether `Turbo::StreamsChannel` subscriptions are verified by the server with ``secret`` (AnyCable's
        /// `--turbo_streams`); when off, they are ordinary channels for ``LocalCableServer/subscriptionRule``.
        public var turboStreams = true
        /// Seconds an ended connection stays present before `leave` goes out (AnyCable's `--presence_ttl`, 15).
        public var presenceTTL: TimeInterval = 15
        /// Channel classes (the identifier's `channel`) whose subscriptions allow whisper on their stream, as a
        /// Rails channel does with `stream_from name, whisper: true`.
        public var whisperChannels: Set<String> = []
        /// Channel classes whose subscriptions track presence on their stream, as a Rails channel does with
        /// `join_presence`.
        public var presenceChannels: Set<String> = []

        /// AnyCable's defaults with the streams secret `secret`.
        public init(secret: String) {
            self.secret = secret
        }
    }

    /// When the server sends `{"type":"welcome"}` after a successful upgrade.
    ///
    /// Commands a client sends before its welcome are held, as Rails does, and run right after it.
    public enum WelcomePolicy: Sendable, Hashable {
        /// At once (Rails' behaviour when `connect` succeeds).
        case immediately
        /// After this many seconds.
        case after(TimeInterval)
        /// Never on its own (Rails' behaviour when `connect` raises something other than `Unauthorized`);
        /// ``LocalCableServer/sendWelcome(_:)`` still sends it.
        case never

        var isValid: Bool {
            if case .after(let delay) = self { return delay.isFinite && delay >= 0 }
            return true
        }
    }

    /// The number the server gives each accepted TCP connection: 1, 2, 3… in accept order, never reused.
    public struct ConnectionID: Hashable, Comparable, Sendable, CustomStringConvertible {
        /// The number.
        public let rawValue: Int

        /// Wraps a number; useful to compare with the IDs the server reports.
        public init(_ rawValue: Int) {
            self.rawValue = rawValue
        }

        /// Accept order: an older connection is smaller.
        public static func < (lhs: ConnectionID, rhs: ConnectionID) -> Bool { lhs.rawValue < rhs.rawValue }

        /// `#` and the number, e.g. `#3`.
        public var description: String { "#\(rawValue)" }
    }

    /// Which connections a control call applies to.
    public enum Target: Sendable, Hashable {
        /// Every open connection.
        case all
        /// One connection; nothing happens if it is gone.
        case connection(ConnectionID)

        func matches(_ id: ConnectionID) -> Bool {
            switch self {
            case .all: true
            case .connection(let target): target == id
            }
        }
    }
}

/// Why a ``LocalCableServer`` could not start, or could not listen again.
public struct LocalCableServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Kind: Hashable, Sendable {
        /// An option is out of range; ``LocalCableServerError/detail`` names it.
        case invalidOption
        /// `socket` failed.
        case socket
        /// `bind` failed, typically because the port is taken (`EADDRINUSE`).
        case bind
        /// `listen` failed.
        case listen
        /// The wake pipe could not be made.
        case pipe
        /// The server thread could not start, or the server was already stopped.
        case stopped
    }

    /// What failed.
    public let kind: Kind
    /// The `errno` of the failing call, or 0.
    public let errno: Int32
    /// The option's name for ``Kind/invalidOption``; otherwise empty.
    public let detail: String

    /// Creates an error; public so tests can compare against one.
    public init(_ kind: Kind, errno: Int32 = 0, detail: String = "") {
        self.kind = kind
        self.errno = errno
        self.detail = detail
    }

    /// The kind, the option's name and the `errno`, e.g. `LocalCableServer: bind (errno 98)`.
    public var description: String {
        var text = "LocalCableServer: \(kind)"
        if !detail.isEmpty { text += " \(detail)" }
        if errno != 0 { text += " (errno \(errno))" }
        return text
    }
}
