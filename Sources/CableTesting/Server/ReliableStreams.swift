import CableReactive
import Foundation

extension LocalCableServer {
    /// AnyCable's reliable streams and resumable sessions, as its extended protocol (`actioncable-v1-ext-json`)
    /// offers them; see ``Options/reliableStreams``. Rules and sources: the CableReactive article
    /// "AnyCable's extended protocol".
    public struct ReliableStreams: Sendable {
        /// The most broadcasts each stream keeps for replay (AnyCable's `history_limit`, 100).
        public var historyLimit = 100
        /// Seconds a session can be restored after its connection ended (AnyCable's `sessions_ttl`, 300).
        public var sessionTTL: Double = 300
        /// The most replayed broadcasts a `history` answer sends per turn of the server's loop, or `nil` (the
        /// default) to send each answer at once. With a chunk, broadcasts made meanwhile go out between the
        /// chunks, so live messages with higher offsets reach the client in the middle of its replay, as they do
        /// from AnyCable, whose broker replays while new broadcasts go on (../shared/docs/ANYCABLE-EXT.md rule
        /// 5.8).
        ///
        /// ```swift
        /// var reliable = LocalCableServer.ReliableStreams()
        /// reliable.historyLimit = 50_000
        /// reliable.replayChunk = 64  // live messages interleave with a long replay
        /// ```
        public var replayChunk: Int?

        /// AnyCable's defaults.
        public init() {}
    }
}

/// The server thread's reliable-stream state: one epoch, each stream's recent broadcasts, and the cached
/// sessions. A stream is a subscription's `ServerSubscription.stream`: its identifier as the client sent it,
/// or a `$pubsub` or Turbo stream's plain name.
struct StreamHistory {
    struct Entry {
        var offset: Int
        var message: JSONValue
        /// When it was broadcast, in Unix seconds (a `since` request compares whole seconds, as AnyCable does).
        var time: Int
    }

    struct Session {
        var subscriptions: [ServerSubscription]
        /// When the cached session expires (server-clock nanoseconds); `nil` while its connection is open.
        var expires: UInt64?
    }

    let settings: LocalCableServer.ReliableStreams
    private(set) var epoch: String
    private var epochCount = 1
    private var streams: [String: (next: Int, entries: [Entry])] = [:]
    private var sessions: [String: Session] = [:]
    private var sessionCount = 0

    init(settings: LocalCableServer.ReliableStreams) {
        self.settings = settings
        epoch = "e1"
    }

    /// Stores a broadcast on `stream` and returns its offset (from 1).
    mutating func append(_ message: JSONValue, to stream: String) -> Int {
        var state = streams[stream] ?? (1, [])
        let offset = state.next
        state.next += 1
        state.entries.append(
            Entry(offset: offset, message: message, time: Int(Date().timeIntervalSince1970.rounded(.down))))
        if state.entries.count > settings.historyLimit {
            state.entries.removeFirst(state.entries.count - settings.historyLimit)
        }
        streams[stream] = state
        return offset
    }

    /// A new epoch: the history is gone and offsets restart at 1 (a restarted in-memory broker).
    mutating func resetEpoch() {
        epochCount += 1
        epoch = "e\(epochCount)"
        streams.removeAll()
    }

    /// What a `history` request for `stream` after `offset` in `epoch` returns: the entries after it, or
    /// `nil` when they cannot be given (another epoch, an unknown or empty stream, an offset out of the
    /// window), as AnyCable's memory broker decides.
    func entries(of stream: String, after offset: Int, epoch requested: String) -> [Entry]? {
        guard requested == epoch, let state = streams[stream], let low = state.entries.first?.offset,
            low <= offset, offset < state.next
        else { return nil }
        return state.entries.filter { $0.offset > offset }
    }

    /// What a `history` request by time returns for `stream`: the stored entries broadcast at or after `since`
    /// (Unix seconds); nothing for a stream the server does not have. It never fails.
    func entries(of stream: String, since: Int) -> [Entry] {
        streams[stream]?.entries.filter { $0.time >= since } ?? []
    }

    /// The most cached sessions of ended connections; beyond it the ones that expire first go.
    static let maxEndedSessions = 10_000

    /// A new session id for an extended connection. Expired sessions are forgotten here, and the cache of
    /// ended connections' sessions is bounded by ``maxEndedSessions``, so a long test run does not grow it.
    mutating func newSessionID(now: UInt64) -> String {
        sessions = sessions.filter { $0.value.expires.map { $0 > now } ?? true }
        let ended = sessions.filter { $0.value.expires != nil }
        if ended.count > Self.maxEndedSessions {
            let oldest = ended.sorted { ($0.value.expires ?? 0) < ($1.value.expires ?? 0) }
            for (id, _) in oldest.prefix(ended.count - Self.maxEndedSessions) { sessions[id] = nil }
        }
        sessionCount += 1
        return "sid-\(sessionCount)-\(epoch)"
    }

    /// Records the live subscriptions of session `id`.
    mutating func update(_ id: String, subscriptions: [ServerSubscription]) {
        sessions[id] = Session(subscriptions: subscriptions, expires: nil)
    }

    /// Session `id`'s connection ended: it can be restored for ``LocalCableServer/ReliableStreams/sessionTTL``.
    mutating func ended(_ id: String, now: UInt64) {
        sessions[id]?.expires = now + UInt64(max(0, settings.sessionTTL) * 1e9)
    }

    /// The subscriptions of a session that can still be restored (the entry is kept: AnyCable only reads it),
    /// with their streams and whisper and presence flags.
    func restorable(_ id: String, now: UInt64) -> [ServerSubscription]? {
        guard let session = sessions[id] else { return nil }
        if let expires = session.expires, expires <= now { return nil }
        return session.subscriptions
    }
}
