/// One member of a subscription's presence set (AnyCable's presence): the id it joined with and the info it
/// gave, from ``ChannelPresence/members``.
///
/// ```swift
/// let names = room.presence.members.value?.values.compactMap { $0.info?["name"]?.stringValue } ?? []
/// ```
public struct PresenceMember: Sendable, Hashable, Identifiable {
    /// The presence id: a string on the wire (a server that sends a number gets its decimal text).
    public let id: String
    /// What the member joined with; `nil` when it gave none.
    public let info: JSONValue?

    /// A member with `id` and `info`.
    public init(id: String, info: JSONValue? = nil) {
        self.id = id
        self.info = info
    }
}

/// A change in a subscription's presence set, from ``ChannelPresence/events``: somebody joined (an id new to
/// the stream), or the last connection holding an id left (or expired after a disconnect).
///
/// ```swift
/// let toasts = room.presence.events.observe(on: .main) { event in
///     if case .joined(let member) = event { show("\(member.id) is here") }
/// }
/// ```
public enum PresenceEvent: Sendable, Hashable {
    /// `member.id` joined the stream's presence set.
    case joined(PresenceMember)
    /// `id` left the stream's presence set.
    case left(id: String)
}

/// Why ``ChannelPresence/info(timeout:)`` has no presence set to return.
public enum PresenceError: Error, Sendable, Hashable {
    /// The subscription is not confirmed on a live connection (connecting, pending, rejected, unsubscribed):
    /// nothing was sent.
    case notSubscribed
    /// No answer within the timeout: the server may not enable presence for this subscription (AnyCable then
    /// never answers), or it is slow.
    case timedOut
    /// The connection ended before the answer.
    case disconnected
    /// The server answered that it could not read the set (AnyCable's `"type":"error"`: a broker failure).
    case serverError
    /// The waiting task was cancelled.
    case cancelled
}

/// A presence frame's `message`, as ``CableProtocol`` reads it: AnyCable's `join` and `leave` events and the
/// answers to a `presence` request.
package enum PresenceUpdate: Equatable, Sendable {
    case joined(PresenceMember)
    case left(id: String)
    /// The whole set (`records`; none when missing: nobody is present).
    case info([PresenceMember])
    case error
    /// A message of another `type`, or one whose `id` is missing or not a string or number: ignored.
    case unknown

    /// Reads `message` (a presence frame's `message` member), liberally: an `id` may be a number, records
    /// that are not objects with an id are skipped.
    package init(_ message: JSONValue) {
        switch message["type"]?.stringValue {
        case "join":
            guard let member = Self.member(message) else {
                self = .unknown
                return
            }
            self = .joined(member)
        case "leave":
            guard let id = Self.id(message["id"]) else {
                self = .unknown
                return
            }
            self = .left(id: id)
        case "info":
            self = .info(message["records"]?.arrayValue?.compactMap(Self.member) ?? [])
        case "error":
            self = .error
        default:
            self = .unknown
        }
    }

    private static func member(_ value: JSONValue) -> PresenceMember? {
        guard let id = id(value["id"]) else { return nil }
        let info = value["info"]
        return PresenceMember(id: id, info: info?.isNull == true ? nil : info)
    }

    private static func id(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let id)?: id
        case .int(let id)?: String(id)
        case .double(let id)? where id.isFinite && id == id.rounded() && abs(id) < 1e15: String(Int(id))
        default: nil
        }
    }
}
