import CableTesting
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
                StreamSequencer.Ready(.int(1), at: Self.at(1, "a", epoch: "f"))
            ])
        #expect(sequencer.marks["a"] == .init(epoch: "f", offset: 1))
        #expect(sequencer.historyEnded().isEmpty)
    }

    @Test("past the hold bound what waits goes out in order; a replayed message in the skipped gap is counted")
    func holdLimit() {
        var sequencer = StreamSequencer(holdLimit: 3)
        _ = Self.feed(&sequencer, [1])
        sequencer.historyRequested()
        #expect(Self.feed(&sequencer, [5, 3, 4]).isEmpty)
        #expect(Self.feed(&sequencer, [6]) == [3, 4, 5, 6])
        #expect(sequencer.skipped["s"] == [2..<3])
        let drops1 = sequencer.takeDropped()
        #expect(drops1 == 0)
        #expect(Self.feed(&sequencer, [2]).isEmpty, "too late for offset order")
        let drops2 = sequencer.takeDropped()
        #expect(drops2 == 1, "counted, not skipped without a word")
        #expect(Self.feed(&sequencer, [2, 4]).isEmpty)
        let drops3 = sequencer.takeDropped()
        #expect(drops3 == 0, "a second copy, and a delivered one, are repeats")
        let gapped4 = sequencer.takeReplayGap()
        #expect(gapped4, "the replay skipped a gap: not a recovery")
        let gapped5 = sequencer.takeReplayGap()
        #expect(!gapped5, "reported once")
    }

    @Test("the bound counts bytes too: big messages go out at the byte limit")
    func holdBytes() {
        var sequencer = StreamSequencer(limits: .init(count: 100, bytes: 1000))
        _ = Self.feed(&sequencer, [1])
        sequencer.historyRequested()
        let third = sequencer.accept(.int(3), at: Self.at(3), size: 600)
        #expect(third.isEmpty)
        #expect(sequencer.heldMessages == 1)
        let fourth = sequencer.accept(.int(4), at: Self.at(4), size: 600)
        #expect(fourth.compactMap(\.value.intValue) == [3, 4])
        #expect(sequencer.heldMessages == 0)
        #expect(StreamSequencer.Limits.forBuffer(16) == .init(count: 4096, bytes: 8 << 20))
        #expect(StreamSequencer.Limits.forBuffer(2048).count == 8192)
    }

    @Test("a replay that fills every gap recovered; one that ends with a gap did not")
    func replayGapAtEnd() {
        var full = StreamSequencer(holdLimit: 64)
        _ = Self.feed(&full, [1])
        full.historyRequested()
        _ = Self.feed(&full, [4, 2, 3])
        let gapped6 = full.takeReplayGap()
        #expect(!gapped6)
        #expect(full.historyEnded().isEmpty)

        var short = StreamSequencer(holdLimit: 64)
        _ = Self.feed(&short, [1])
        short.historyRequested()
        _ = Self.feed(&short, [5, 2])  // the replay brought 2, not 3 or 4
        let gapped7 = short.takeReplayGap()
        #expect(gapped7)
        #expect(short.historyEnded().compactMap(\.value.intValue) == [5])
        let gapped8 = short.takeReplayGap()
        #expect(!gapped8, "the outcome reported it")
        #expect(Self.feed(&short, [3]).isEmpty)
        let drops9 = short.takeDropped()
        #expect(drops9 == 1)
    }

    @Test("a new epoch counts what waited in the old one and is no recovery")
    func epochDropsHeld() {
        var sequencer = StreamSequencer(holdLimit: 64)
        _ = Self.feed(&sequencer, [1])
        sequencer.historyRequested()
        _ = Self.feed(&sequencer, [5, 6])
        let restarted = sequencer.accept(.int(1), at: Self.at(1, epoch: "f"))
        #expect(restarted.count == 1)
        let drops10 = sequencer.takeDropped()
        #expect(drops10 == 2)
        #expect(sequencer.heldMessages == 0)
        let gapped11 = sequencer.takeReplayGap()
        #expect(gapped11)
    }

    @Test("a gap skipped in a session that ended is reported by the next replay's outcome")
    func gapOutlivesSession() {
        var sequencer = StreamSequencer(holdLimit: 2)
        _ = Self.feed(&sequencer, [1])
        sequencer.historyRequested()
        #expect(Self.feed(&sequencer, [4, 5, 6]) == [4, 5, 6])
        sequencer.sessionEnded()
        sequencer.historyRequested()
        _ = Self.feed(&sequencer, [7])
        let gapped12 = sequencer.takeReplayGap()
        #expect(gapped12)
    }

    @Test("skipped gaps are remembered up to a bound; past it the oldest merge (an overcount, never a loss)")
    func gapMemory() {
        var sequencer = StreamSequencer(holdLimit: 1)
        _ = Self.feed(&sequencer, [0])
        sequencer.historyRequested()
        let live = (1...(StreamSequencer.gapMemory + 5)).map { $0 * 2 }  // 2, 4, 6, ...: a gap before each
        for offset in live {
            _ = Self.feed(&sequencer, [offset])
        }
        _ = sequencer.historyEnded()
        #expect(sequencer.skipped["s"]?.count == StreamSequencer.gapMemory)
        let odd = live.map { $0 - 1 }
        #expect(Self.feed(&sequencer, odd).isEmpty)
        let drops13 = sequencer.takeDropped()
        #expect(drops13 >= odd.count, "every late message counted")
    }

    /// One random replay: the client delivered up to `mark`; the server sent live messages from `liveFrom` while
    /// it replayed `mark + 1 ... replayTo` (the two overlap, rule 5.8), interleaved at random, then confirmed.
    struct Scenario: CustomStringConvertible {
        var mark: Int
        var replayTo: Int
        var liveFrom: Int
        var liveTo: Int
        var holdLimit: Int
        var arrivals: [Int]

        init(seed: UInt64) {
            var random = SeededRandom(seed: seed)
            mark = Int.random(in: 0...5, using: &random)
            replayTo = mark + Int.random(in: 0...300, using: &random)
            liveFrom = Int.random(in: (mark + 1)...(replayTo + 1), using: &random)
            liveTo = max(liveFrom, replayTo) + Int.random(in: 0...300, using: &random)
            holdLimit = Int.random(in: 1...256, using: &random)
            let replayed = mark < replayTo ? Array((mark + 1)...replayTo) : []
            let live = Array(liveFrom...liveTo)
            var r = 0
            var l = 0
            var arrivals: [Int] = []
            while r < replayed.count || l < live.count {
                let takeLive = r == replayed.count || (l < live.count && Bool.random(using: &random))
                if takeLive {
                    arrivals.append(live[l])
                    l += 1
                } else {
                    arrivals.append(replayed[r])
                    r += 1
                }
            }
            self.arrivals = arrivals
        }

        var description: String {
            "mark \(mark), replay to \(replayTo), live \(liveFrom)...\(liveTo), hold \(holdLimit)"
        }
    }

    @Test("random interleavings of live and replayed offsets: delivered in order, and delivered ∪ counted covers all")
    func randomInterleavings() {
        for seed in UInt64(1)...400 {
            let scenario = Scenario(seed: seed)
            var sequencer = StreamSequencer(holdLimit: scenario.holdLimit)
            sequencer.resume(from: [Self.at(scenario.mark)])
            sequencer.historyRequested()
            var delivered = Self.feed(&sequencer, scenario.arrivals)
            let gapped = sequencer.takeReplayGap()
            delivered += sequencer.historyEnded().compactMap(\.value.intValue)
            let dropped = sequencer.takeDropped()
            let sent = Set(scenario.arrivals)
            #expect(zip(delivered, delivered.dropFirst()).allSatisfy { $0 < $1 }, "in order, once: \(scenario)")
            #expect(Set(delivered).isSubset(of: sent))
            #expect(delivered.count + dropped == sent.count, "delivered ∪ counted = sent: \(scenario)")
            #expect(gapped == (dropped > 0), "a recovery skipped nothing: \(scenario)")
            if scenario.arrivals.count - (scenario.replayTo - scenario.mark) <= scenario.holdLimit {
                #expect(!gapped, "what fits in the bound is all delivered: \(scenario)")
            }
        }
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
