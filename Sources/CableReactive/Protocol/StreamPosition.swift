/// Where a broadcast sits in its stream, as AnyCable's reliable streams number them (the `stream_id`, `epoch`
/// and `offset` of a broadcast): the stream, the epoch of the server's history (a new epoch restarts the
/// numbering) and the offset in it (1, 2, …).
///
/// Read a subscription's latest with ``ChannelSubscription/streamPositions``; keep them (they are `Codable`)
/// to resume from them on the next launch with ``ActionCableClient/subscribe(_:resumingFrom:)``.
///
/// ```swift
/// let saved = try JSONEncoder().encode(room.streamPositions)          // when the app goes away
/// let positions = try JSONDecoder().decode([StreamPosition].self, from: saved)
/// let room = try client.subscribe(params, resumingFrom: positions)   // on the next launch
/// ```
public struct StreamPosition: Sendable, Hashable, Codable {
    /// The stream's name (`stream_id`): for a `$pubsub` stream its plain name, for a channel the server's name.
    public var stream: String
    /// The epoch of the server's history of the stream.
    public var epoch: String
    /// The offset in the epoch: 1 for the first broadcast.
    public var offset: Int

    /// A position; to resume from one the app kept.
    public init(stream: String, epoch: String, offset: Int) {
        self.stream = stream
        self.epoch = epoch
        self.offset = offset
    }
}

extension StreamPosition {
    /// The position a frame's `stream_id`, `epoch` and `offset` give: strings and an integer, or `nil`.
    init?(stream: JSONValue?, epoch: JSONValue?, offset: JSONValue?) {
        guard let stream = stream?.stringValue, let epoch = epoch?.stringValue, let offset = offset?.intValue
        else { return nil }
        self.init(stream: stream, epoch: epoch, offset: offset)
    }
}

/// A message with its stream position, from ``ChannelSubscription/messagesWithPositions``: for apps that read
/// which stream a message came from (a channel streaming from several) or keep positions per message.
///
/// ```swift
/// for await message in room.messagesWithPositions.values {
///     print(message.position?.stream ?? "no position (Rails, or a whisper)", message.value)
/// }
/// ```
public struct PositionedMessage: Sendable, Equatable {
    /// The message, as ``ChannelSubscription/messages`` delivers it.
    public let value: JSONValue
    /// Where it sits in its stream; `nil` for a message without one (Rails, AnyCable without its broker, a
    /// whisper).
    public let position: StreamPosition?

    /// A message at `position`.
    public init(_ value: JSONValue, at position: StreamPosition?) {
        self.value = value
        self.position = position
    }
}
