/// Where a broadcast sits in its stream, as AnyCable's reliable streams number them: the stream, the epoch of
/// the server's history (a new epoch restarts the numbering) and the offset in it (1, 2, …).
package struct StreamPosition: Sendable, Hashable {
    package var stream: String
    package var epoch: String
    package var offset: Int

    package init(stream: String, epoch: String, offset: Int) {
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
