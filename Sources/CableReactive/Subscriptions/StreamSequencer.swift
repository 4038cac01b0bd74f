import Signals

/// One subscription's streams, so that every broadcast is delivered once and in stream order, also across a
/// history replay (AnyCable's `history` command, ../shared/docs/ANYCABLE-EXT.md rules 4 and 5).
///
/// The server neither holds live broadcasts back while it replays history nor avoids repeating one in both
/// (rule 5.8). So while a replay is awaited, a live message past the next expected offset waits here until
/// the replay fills the gap or ends; a message at or below a stream's last delivered offset is a repeat and
/// is dropped. At most `holdLimit` messages wait: beyond that they all go out in order, the gap accepted.
/// Messages without a position (Rails, or AnyCable without its broker) never come here.
struct StreamSequencer: Sendable {
    /// The last offset delivered in each stream, and its epoch.
    struct Mark: Sendable, Hashable {
        var epoch: String
        var offset: Int
    }

    private(set) var marks: [String: Mark] = [:]
    /// Whether a history replay is awaited.
    private(set) var awaitingHistory = false
    private var held: [String: [(offset: Int, epoch: String, message: JSONValue)]] = [:]
    /// What goes out: a message with the position it came at.
    typealias Ready = PositionedMessage
    let holdLimit: Int

    init(holdLimit: Int) {
        self.holdLimit = max(1, holdLimit)
    }

    /// `message` arrived at `position`. Returns what to deliver now, in order: it (and any held messages it
    /// makes contiguous), or nothing for a repeat or a message that waits for the replay.
    mutating func accept(_ message: JSONValue, at position: StreamPosition) -> [Ready] {
        let stream = position.stream
        guard let mark = marks[stream] else {
            // The stream's first message. During a replay by time (a first subscribe with `since`), a live
            // message may come before older replayed ones: it waits, and the end of the replay sorts them.
            if awaitingHistory { return hold(message, at: position) }
            marks[stream] = Mark(epoch: position.epoch, offset: position.offset)
            return [Ready(message, at: position)]
        }
        guard mark.epoch == position.epoch else {
            // A new epoch (the server's history restarted): a new sequence.
            held[stream] = nil
            marks[stream] = Mark(epoch: position.epoch, offset: position.offset)
            return [Ready(message, at: position)]
        }
        guard position.offset > mark.offset else { return [] }  // delivered already
        guard awaitingHistory, position.offset > mark.offset + 1 else {
            marks[stream]?.offset = position.offset
            return [Ready(message, at: position)] + releaseContiguous(stream)
        }
        return hold(message, at: position)
    }

    /// Starts each stream of `positions` as if its message there had been delivered (an app resuming from
    /// positions it kept): the next session replays after them. Streams already seen keep their marks.
    mutating func resume(from positions: [StreamPosition]) {
        for position in positions where marks[position.stream] == nil {
            marks[position.stream] = Mark(epoch: position.epoch, offset: position.offset)
        }
    }

    /// Each stream's last delivered position: what a history request asks to replay after.
    var positions: [StreamPosition] {
        marks.map { StreamPosition(stream: $0.key, epoch: $0.value.epoch, offset: $0.value.offset) }
    }

    /// A history request went out: live messages past a gap wait for the replay from now on.
    mutating func historyRequested() {
        awaitingHistory = true
    }

    /// The replay ended, confirmed or rejected: what waited goes out, each stream in order.
    mutating func historyEnded() -> [Ready] {
        awaitingHistory = false
        return releaseAll()
    }

    /// The connection was lost: a replay requested on it will not come.
    mutating func sessionEnded() {
        awaitingHistory = false
        held.removeAll()
    }

    /// Keeps `message` waiting in offset order (a repeat of a waiting one is dropped). Returns nothing, or
    /// everything that waits once more than `holdLimit` do.
    private mutating func hold(_ message: JSONValue, at position: StreamPosition) -> [Ready] {
        var waiting = held[position.stream] ?? []
        if !waiting.contains(where: { $0.offset == position.offset }) {
            let index = waiting.firstIndex { $0.offset > position.offset } ?? waiting.endIndex
            waiting.insert((position.offset, position.epoch, message), at: index)
            held[position.stream] = waiting
        }
        return held.values.reduce(0) { $0 + $1.count } > holdLimit ? releaseAll() : []
    }

    /// The held messages of `stream` that now follow its mark without a gap (repeats dropped).
    private mutating func releaseContiguous(_ stream: String) -> [Ready] {
        guard var waiting = held[stream], var mark = marks[stream] else { return [] }
        var released: [Ready] = []
        while let first = waiting.first, first.offset <= mark.offset + 1 {
            waiting.removeFirst()
            if first.offset == mark.offset + 1 {
                released.append(
                    Ready(first.message, at: StreamPosition(stream: stream, epoch: first.epoch, offset: first.offset)))
                mark.offset = first.offset
            }
        }
        marks[stream] = mark
        held[stream] = waiting.isEmpty ? nil : waiting
        return released
    }

    /// Every held message, stream by stream (in name order), each stream in offset order, gaps accepted.
    private mutating func releaseAll() -> [Ready] {
        var released: [Ready] = []
        for stream in held.keys.sorted() {
            guard let waiting = held[stream], let first = waiting.first else { continue }
            // A stream without a mark starts with its lowest held offset.
            var mark = marks[stream] ?? Mark(epoch: first.epoch, offset: first.offset - 1)
            for entry in waiting where entry.offset > mark.offset {
                released.append(
                    Ready(entry.message, at: StreamPosition(stream: stream, epoch: entry.epoch, offset: entry.offset)))
                mark = Mark(epoch: entry.epoch, offset: entry.offset)
            }
            marks[stream] = mark
        }
        held.removeAll()
        return released
    }
}
