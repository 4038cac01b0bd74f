import Signals

/// One subscription's streams, so that every broadcast is delivered once and in stream order, also across a
/// history replay (AnyCable's `history` command, ../shared/docs/ANYCABLE-EXT.md rules 4 and 5), and a message
/// that cannot be is counted, never skipped without a word.
///
/// The server neither holds live broadcasts back while it replays history nor avoids repeating one in both
/// (rule 5.8). So while a replay is awaited, a live message past the next expected offset waits here until
/// the replay fills the gap or ends; a message at or below a stream's last delivered offset is a repeat and
/// is dropped. What waits is bounded by ``Limits`` (a count and bytes, apart from the app's buffer, since a
/// replay can be any size): past the bound everything waiting goes out in order and the gaps before it are
/// *skipped*. A replayed message that lands in a skipped gap comes too late for offset order: it is counted
/// (``takeDropped()``), as are the waiting messages of an epoch that ended. A replay that skipped a gap, or
/// ends with one, is not a recovery (``takeReplayGap()``). Messages without a position (Rails, or AnyCable
/// without its broker) never come here.
struct StreamSequencer: Sendable {
    /// The last offset delivered in each stream, and its epoch.
    struct Mark: Sendable, Hashable {
        var epoch: String
        var offset: Int
    }

    /// How much may wait for a replay: at most `count` messages and `bytes` of their frames, over all streams.
    struct Limits: Sendable, Hashable {
        var count: Int
        var bytes: Int

        /// A subscription's bound for a client whose buffers hold `bufferSize` messages: 4,096 messages (or
        /// four buffers, if more) and 8 MiB.
        static func forBuffer(_ bufferSize: Int) -> Limits {
            Limits(count: max(4096, 4 * bufferSize), bytes: 8 << 20)
        }
    }

    /// A message waiting for the replay.
    private struct Held: Sendable {
        var offset: Int
        var epoch: String
        var message: MessageJSON
        var size: Int
    }

    /// How many skipped gaps a stream remembers; past it the two oldest merge (a repeat of a message delivered
    /// between them then counts as dropped: an overcount, never a silent loss).
    static let gapMemory = 64

    private(set) var marks: [String: Mark] = [:]
    /// Whether a history replay is awaited.
    private(set) var awaitingHistory = false
    private var held: [String: [Held]] = [:]
    private var heldCount = 0
    private var heldBytes = 0
    /// Offsets skipped past in each stream while a replay was awaited: sorted, disjoint, below the mark.
    private(set) var skipped: [String: [Range<Int>]] = [:]
    /// A gap was skipped, or waiting messages were lost to a new epoch, since the last replay's outcome.
    private var skippedGap = false
    /// Messages discarded without delivery since the last ``takeDropped()``.
    private var dropped = 0
    /// What goes out: a message with the position it came at.
    struct Ready: Sendable, Equatable {
        let value: MessageJSON
        let position: StreamPosition

        init(_ value: MessageJSON, at position: StreamPosition) {
            self.value = value
            self.position = position
        }
    }
    let limits: Limits

    init(limits: Limits) {
        self.limits = Limits(count: max(1, limits.count), bytes: max(1, limits.bytes))
    }

    init(holdLimit: Int) {
        self.init(limits: Limits(count: holdLimit, bytes: .max))
    }

    /// `message` arrived at `position` in a frame of `size` bytes. Returns what to deliver now, in order: it
    /// (and any held messages it makes contiguous), or nothing for a repeat, a late message (counted) or a
    /// message that waits for the replay.
    mutating func accept(_ message: MessageJSON, at position: StreamPosition, size: Int = 0) -> [Ready] {
        let stream = position.stream
        guard let mark = marks[stream] else {
            // The stream's first message. During a replay by time (a first subscribe with `since`), a live
            // message may come before older replayed ones: it waits, and the end of the replay sorts them.
            if awaitingHistory { return hold(message, at: position, size: size) }
            marks[stream] = Mark(epoch: position.epoch, offset: position.offset)
            return [Ready(message, at: position)]
        }
        guard mark.epoch == position.epoch else {
            // A new epoch (the server's history restarted): a new sequence. What waited in the old one will
            // never be completed.
            if let waiting = held.removeValue(forKey: stream) {
                unhold(waiting)
                dropped += waiting.count
                skippedGap = true
            }
            skipped[stream] = nil
            marks[stream] = Mark(epoch: position.epoch, offset: position.offset)
            return [Ready(message, at: position)]
        }
        guard position.offset > mark.offset else {
            if removeSkipped(position.offset, in: stream) { dropped += 1 }  // else delivered already
            return []
        }
        guard awaitingHistory, position.offset > mark.offset + 1 else {
            marks[stream]?.offset = position.offset
            return [Ready(message, at: position)] + releaseContiguous(stream)
        }
        return hold(message, at: position, size: size)
    }

    /// How many messages were discarded without delivery since the last call: replayed ones that came after
    /// their gap was skipped, and waiting ones of an epoch that ended. The caller counts them as dropped.
    mutating func takeDropped() -> Int {
        defer { dropped = 0 }
        return dropped
    }

    /// Whether the replay now ending lost messages: a gap was skipped at the bound (or to a new epoch) since the
    /// last outcome, or what waits would go out past one (the replay did not fill it). Call it before
    /// ``historyEnded()``; the outcome it decides reports what was skipped.
    mutating func takeReplayGap() -> Bool {
        var ending = self
        _ = ending.releaseAll()
        skippedGap = false
        return ending.skippedGap
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

    /// The replay ended, confirmed or rejected: what waited goes out, each stream in order, the gaps skipped.
    /// Its outcome was decided from ``takeReplayGap()``.
    mutating func historyEnded() -> [Ready] {
        defer {
            awaitingHistory = false
            skippedGap = false
        }
        return releaseAll()
    }

    /// The connection was lost: a replay requested on it will not come, and the next one asks after the marks,
    /// so neither what waited nor what was skipped can arrive. Whether a gap was skipped stays for the next
    /// replay's outcome.
    mutating func sessionEnded() {
        awaitingHistory = false
        held.removeAll()
        heldCount = 0
        heldBytes = 0
        skipped.removeAll()
    }

    /// How many messages wait (for tests).
    var heldMessages: Int { heldCount }

    /// Keeps `message` waiting in offset order (a repeat of a waiting one is dropped). Returns nothing, or
    /// everything that waits once the bound is passed.
    private mutating func hold(_ message: MessageJSON, at position: StreamPosition, size: Int) -> [Ready] {
        var waiting = held[position.stream] ?? []
        let index = waiting.firstIndex { $0.offset >= position.offset } ?? waiting.endIndex
        guard index == waiting.endIndex || waiting[index].offset != position.offset else { return [] }
        waiting.insert(Held(offset: position.offset, epoch: position.epoch, message: message, size: size), at: index)
        held[position.stream] = waiting
        heldCount += 1
        heldBytes += size
        return heldCount > limits.count || heldBytes > limits.bytes ? releaseAll() : []
    }

    private mutating func unhold(_ entries: some Collection<Held>) {
        heldCount -= entries.count
        heldBytes -= entries.reduce(0) { $0 + $1.size }
    }

    /// The held messages of `stream` that now follow its mark without a gap (repeats dropped).
    private mutating func releaseContiguous(_ stream: String) -> [Ready] {
        guard var waiting = held[stream], var mark = marks[stream] else { return [] }
        var released: [Ready] = []
        var taken = 0
        while taken < waiting.count, waiting[taken].offset <= mark.offset + 1 {
            let first = waiting[taken]
            taken += 1
            if first.offset == mark.offset + 1 {
                released.append(
                    Ready(first.message, at: StreamPosition(stream: stream, epoch: first.epoch, offset: first.offset)))
                mark.offset = first.offset
            }
        }
        guard taken > 0 else { return [] }
        unhold(waiting[..<taken])
        waiting.removeFirst(taken)
        marks[stream] = mark
        held[stream] = waiting.isEmpty ? nil : waiting
        return released
    }

    /// Every held message, stream by stream (in name order), each stream in offset order; each gap before one
    /// is skipped (remembered, so that a message in it is counted when it comes).
    private mutating func releaseAll() -> [Ready] {
        var released: [Ready] = []
        for stream in held.keys.sorted() {
            guard let waiting = held[stream], let first = waiting.first else { continue }
            // A stream without a mark starts with its lowest held offset.
            var mark = marks[stream] ?? Mark(epoch: first.epoch, offset: first.offset - 1)
            for entry in waiting where entry.offset > mark.offset {
                if entry.offset > mark.offset + 1 { skip(mark.offset + 1..<entry.offset, in: stream) }
                released.append(
                    Ready(entry.message, at: StreamPosition(stream: stream, epoch: entry.epoch, offset: entry.offset)))
                mark = Mark(epoch: entry.epoch, offset: entry.offset)
            }
            marks[stream] = mark
        }
        held.removeAll()
        heldCount = 0
        heldBytes = 0
        return released
    }

    /// Records that `gap` of `stream` was skipped past.
    private mutating func skip(_ gap: Range<Int>, in stream: String) {
        skippedGap = true
        var gaps = skipped[stream] ?? []
        if let last = gaps.last, last.upperBound == gap.lowerBound {
            gaps[gaps.count - 1] = last.lowerBound..<gap.upperBound
        } else {
            gaps.append(gap)
        }
        Self.bound(&gaps)
        skipped[stream] = gaps
    }

    /// Keeps at most ``gapMemory`` gaps, merging the two oldest.
    private static func bound(_ gaps: inout [Range<Int>]) {
        guard gaps.count > gapMemory else { return }
        gaps[1] = gaps[0].lowerBound..<gaps[1].upperBound
        gaps.removeFirst()
    }

    /// Whether `offset` of `stream` was in a skipped gap; it no longer is (a second copy is a repeat).
    private mutating func removeSkipped(_ offset: Int, in stream: String) -> Bool {
        guard var gaps = skipped[stream], let index = gaps.firstIndex(where: { $0.contains(offset) }) else {
            return false
        }
        let gap = gaps[index]
        let pieces = [gap.lowerBound..<offset, offset + 1..<gap.upperBound].filter { !$0.isEmpty }
        gaps.replaceSubrange(index...index, with: pieces)
        Self.bound(&gaps)
        skipped[stream] = gaps.isEmpty ? nil : gaps
        return true
    }
}
