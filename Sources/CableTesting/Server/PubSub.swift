import CableReactive
import Foundation

/// One confirmed subscription as the server thread keeps it (and a cached session restores it): the identifier
/// as sent, its params, and what AnyCable's streams controller decided for it.
struct ServerSubscription {
    enum Kind: Equatable {
        /// An ordinary channel, decided by ``LocalCableServer/subscriptionRule``.
        case channel
        /// `$pubsub`, a signed or public stream.
        case pubSub
        /// `Turbo::StreamsChannel` with a verified `signed_stream_name`.
        case turbo
    }

    var identifier: String
    var params: JSONValue
    var kind = Kind.channel
    /// Where its broadcasts, whispers and presence go: the plain name for `$pubsub` and Turbo, the identifier
    /// otherwise (the server's one stream per channel subscription).
    var stream: String
    /// Whether `whisper` is enabled on it.
    var whispers = false
    /// Whether `join`, `leave` and `presence` are enabled on it.
    var hasPresence = false

    init(identifier: String, params: JSONValue) {
        self.identifier = identifier
        self.params = params
        stream = identifier
    }
}

/// How AnyCable's streams controllers (`G:streams/controller.go`) decide a subscription, as a pure function of
/// its params and ``LocalCableServer/PubSub``.
struct PubSubRules {
    enum Outcome: Equatable {
        /// Not a stream the server decides itself: the subscription rule decides, with these flags.
        case channel(whispers: Bool, presence: Bool)
        /// Confirmed by the server: `$pubsub` or Turbo on the plain stream `name`.
        case stream(ServerSubscription.Kind, name: String, whispers: Bool, presence: Bool)
        /// `reject_subscription`: a bad signature, a missing name, a wrong field type, a public stream when off.
        case reject
    }

    let settings: LocalCableServer.PubSub

    func decide(_ params: JSONValue) -> Outcome {
        let channel = params["channel"]?.stringValue ?? ""
        if channel == "$pubsub" {
            // Go unmarshals the identifier into a struct of strings: any other type rejects the whole of it.
            guard let signed = Self.text(params["signed_stream_name"]), let plain = Self.text(params["stream_name"])
            else { return .reject }
            if !signed.isEmpty {
                guard let name = LocalCableServer.verifiedStreamName(signed, secret: settings.secret) else {
                    return .reject
                }
                return .stream(.pubSub, name: name, whispers: settings.signedWhisper, presence: settings.signedPresence)
            }
            guard !plain.isEmpty, settings.publicStreams else { return .reject }
            return .stream(.pubSub, name: plain, whispers: true, presence: true)
        }
        if channel == "Turbo::StreamsChannel", settings.turboStreams {
            guard let signed = Self.text(params["signed_stream_name"]), !signed.isEmpty,
                let name = LocalCableServer.verifiedStreamName(signed, secret: settings.secret)
            else { return .reject }
            return .stream(.turbo, name: name, whispers: false, presence: false)
        }
        return .channel(
            whispers: settings.whisperChannels.contains(channel), presence: settings.presenceChannels.contains(channel))
    }

    /// A string field: its text, `""` when absent or null, `nil` for any other type.
    private static func text(_ value: JSONValue?) -> String? {
        switch value {
        case nil, .null?: ""
        case .string(let text)?: text
        default: nil
        }
    }
}

extension LocalCableServer {
    /// The stream name inside an AnyCable signed stream name, or `nil` when the signature is wrong (compared in
    /// constant time) or the payload is not a JSON string (`G:utils/message_verifier.go`).
    static func verifiedStreamName(_ signed: String, secret: String) -> String? {
        guard let separator = signed.range(of: "--", options: .backwards) else { return nil }
        let encoded = String(signed[..<separator.lowerBound])
        let digest = Array(signed[separator.upperBound...].utf8)
        let expected = Array(HMACSHA256.hex(HMACSHA256.mac(key: Array(secret.utf8), message: Array(encoded.utf8))).utf8)
        guard HMACSHA256.constantTimeEqual(digest, expected), let payload = Data(base64Encoded: encoded),
            case .string(let name)? = try? JSONValue(parsingUTF8: payload)
        else { return nil }
        return name
    }
}

/// Who is present in each stream (AnyCable's memory broker, `G:broker/memory.go`): per stream, the ids in
/// join order with their info and the connections holding each. A connection holds at most one id per stream;
/// the hold of a connection that ended lingers until its expiry.
struct PresenceBook {
    enum Hold: Equatable {
        /// The connection is open.
        case open
        /// The connection ended; the hold goes at this server-clock time (nanoseconds).
        case lingering(until: UInt64)

        var expiry: UInt64? {
            if case .lingering(let until) = self { return until }
            return nil
        }
    }

    struct Record {
        var id: String
        var info: JSONValue
        /// The holding connections.
        var holders: [LocalCableServer.ConnectionID: Hold]
    }

    /// The most lingering holds of ended connections; beyond it the ones that expire first go at once.
    static let maxLingering = 10_000

    private var streams: [String: [Record]] = [:]
    private var lingering = 0

    /// `connection` joins `stream` as `id`. Returns whether the id is new in the stream (a `join` event is due).
    /// A join with the id the connection holds, or one another connection holds, only replaces the info; a
    /// connection holding another id is refused (nothing changes).
    mutating func join(_ stream: String, id: String, info: JSONValue, by connection: LocalCableServer.ConnectionID)
        -> Bool
    {
        var records = streams[stream] ?? []
        if records.contains(where: { $0.id != id && $0.holders[connection] != nil }) { return false }
        defer { streams[stream] = records }
        if let index = records.firstIndex(where: { $0.id == id }) {
            records[index].info = info
            records[index].holders[connection] = .open
            return false
        }
        records.append(Record(id: id, info: info, holders: [connection: .open]))
        return true
    }

    /// `connection` leaves `stream`. Returns the id it held when nobody holds that id any more (a `leave` event
    /// is due).
    mutating func leave(_ stream: String, by connection: LocalCableServer.ConnectionID) -> String? {
        guard var records = streams[stream],
            let index = records.firstIndex(where: { $0.holders[connection] != nil })
        else { return nil }
        if records[index].holders.removeValue(forKey: connection)?.expiry != nil { lingering -= 1 }
        var gone: String?
        if records[index].holders.isEmpty { gone = records.remove(at: index).id }
        streams[stream] = records.isEmpty ? nil : records
        return gone
    }

    /// `connection` ended: its holds expire at `expires`. Returns the leaves due at once because the cache of
    /// lingering holds passed ``maxLingering``.
    mutating func ended(_ connection: LocalCableServer.ConnectionID, expires: UInt64) -> [(stream: String, id: String)]
    {
        for (stream, records) in streams {
            var records = records
            for index in records.indices where records[index].holders[connection] == .open {
                records[index].holders[connection] = .lingering(until: expires)
                lingering += 1
            }
            streams[stream] = records
        }
        guard lingering > Self.maxLingering,
            let cutoff = lingeringExpiries().dropFirst(lingering - Self.maxLingering - 1).first
        else { return [] }
        return expire(now: cutoff)
    }

    /// Removes the holds expired by `now`. Returns the leaves due: ids nobody holds any more.
    mutating func expire(now: UInt64) -> [(stream: String, id: String)] {
        var leaves: [(stream: String, id: String)] = []
        for (stream, records) in streams {
            var kept: [Record] = []
            var changed = false
            for var record in records {
                for (connection, hold) in record.holders {
                    if let expiry = hold.expiry, expiry <= now {
                        record.holders[connection] = nil
                        lingering -= 1
                        changed = true
                    }
                }
                if record.holders.isEmpty { leaves.append((stream, record.id)) } else { kept.append(record) }
            }
            if changed { streams[stream] = kept.isEmpty ? nil : kept }
        }
        return leaves.sorted { ($0.stream, $0.id) < ($1.stream, $1.id) }
    }

    /// The soonest expiry of a lingering hold, for the loop's poll timeout.
    var nextExpiry: UInt64? {
        lingering > 0 ? lingeringExpiries().first : nil
    }

    private func lingeringExpiries() -> [UInt64] {
        streams.values.flatMap { $0.flatMap { $0.holders.values.compactMap(\.expiry) } }.sorted()
    }

    /// The records present in `stream`, in join order.
    func records(in stream: String) -> [Record] {
        streams[stream] ?? []
    }

    /// The ids present in each stream that has any, in join order (``LocalCableServer/Snapshot/presence``).
    var ids: [String: [String]] {
        streams.mapValues { $0.map(\.id) }
    }
}
