import Testing

@testable import CableReactive

/// Exactly once and in stream order across a history replay (AnyCable's reliable streams).
@Suite("StreamSequencer")
struct StreamSequencerTests {
    static func at(_ offset: Int, _ stream: String = "s", epoch: String = "e") -> StreamPosition {
        StreamPosition(stream: stream, epoch: epoch, offset: offset)
    }

    /// Feeds `offsets` of stream `s` (message = offset) and returns what came out, in order.
    static func feed(_ sequencer: inout StreamSequencer, _ offsets: [Int], stream: String = "s") -> [Int] {
        offsets.flatMap { offset in
            sequencer.accept(.int(offset), at: at(offset, stream)).compactMap(\.value.intValue)
        }
    }

    @Test("live messages pass in any order when no replay is awaited; repeats are dropped")
    func live() {
        var sequencer = StreamSequencer(holdLimit: 8)
        #expect(Self.feed(&sequencer, [1, 2, 2, 5, 3, 6]) == [1, 2, 5, 6])  // a gap is accepted; 3 is below 5
        #expect(sequencer.marks["s"] == .init(epoch: "e", offset: 6))
    }

    @Test("a replay interleaved with live messages comes out once each, in order")
    func interleavedReplay() {
        var sequencer = StreamSequencer(holdLimit: 64)
        _ = Self.feed(&sequencer, [1, 2, 3])
        sequencer.historyRequested()
        // live 7 and 8 arrive before the replay of 4...8; 6 arrives live and again from the replay
        let out = Self.feed(&sequencer, [7, 8, 4, 6, 5, 6, 7, 8, 9])
        #expect(out == [4, 5, 6, 7, 8, 9])
        #expect(sequencer.historyEnded().isEmpty)
        #expect(!sequencer.awaitingHistory)
    }

    @Test("the end of a replay releases what waited, in order, gaps accepted")
    func endReleases() {
        var sequencer = StreamSequencer(holdLimit: 64)
        _ = Self.feed(&sequencer, [1])
        sequencer.historyRequested()
        #expect(Self.feed(&sequencer, [9, 4, 7]).isEmpty)
        #expect(sequencer.historyEnded().compactMap(\.value.intValue) == [4, 7, 9])
        #expect(Self.feed(&sequencer, [9, 10]) == [10])
    }

    @Test("streams are sequenced apart; a new epoch starts a stream afresh")
    func streamsAndEpochs() {
        var sequencer = StreamSequencer(holdLimit: 64)
        _ = Self.feed(&sequencer, [1, 2], stream: "a")
        _ = Self.feed(&sequencer, [10], stream: "b")
        sequencer.historyRequested()
        #expect(Self.feed(&sequencer, [4], stream: "a").isEmpty)
        #expect(Self.feed(&sequencer, [11], stream: "b") == [11])
        // the server restarted: epoch f, offsets from 1; what waited in the old epoch is dropped
        #expect(
            sequencer.accept(.int(1), at: Self.at(1, "a", epoch: "f")) == [
                PositionedMessage(.int(1), at: Self.at(1, "a", epoch: "f"))
            ])
        #expect(sequencer.marks["a"] == .init(epoch: "f", offset: 1))
        #expect(sequencer.historyEnded().isEmpty)
    }

    @Test("more than holdLimit waiting messages go out at once, in order")
    func holdLimit() {
        var sequencer = StreamSequencer(holdLimit: 3)
        _ = Self.feed(&sequencer, [1])
        sequencer.historyRequested()
        #expect(Self.feed(&sequencer, [5, 3, 4]).isEmpty)
        #expect(Self.feed(&sequencer, [6]) == [3, 4, 5, 6])
        #expect(Self.feed(&sequencer, [2]).isEmpty, "below the mark now: a repeat")
    }

    @Test("a lost connection drops what waited for its replay")
    func sessionEnded() {
        var sequencer = StreamSequencer(holdLimit: 8)
        _ = Self.feed(&sequencer, [1])
        sequencer.historyRequested()
        _ = Self.feed(&sequencer, [3])
        sequencer.sessionEnded()
        #expect(!sequencer.awaitingHistory)
        #expect(sequencer.historyEnded().isEmpty)
        #expect(sequencer.marks["s"]?.offset == 1)
    }

    @Test("during a replay by time, a stream seen for the first time waits and comes out sorted at its end")
    func replayByTime() {
        var sequencer = StreamSequencer(holdLimit: 64)
        sequencer.historyRequested()
        #expect(Self.feed(&sequencer, [11, 5, 6, 11, 7]).isEmpty)  // live 11 first, then the replay 5...7
        #expect(sequencer.historyEnded().compactMap(\.value.intValue) == [5, 6, 7, 11])
        #expect(Self.feed(&sequencer, [8, 12]) == [12], "8 is below the mark: a repeat")
        #expect(sequencer.marks["s"] == .init(epoch: "e", offset: 12))
    }
}
