import Dispatch
import Testing

@testable import Signals

@Suite("EventStream")
struct EventStreamTests {
    @Test("observers get only what is sent after they start; nothing is replayed")
    func isHot() {
        let stream = MutableEventStream<Int>()
        stream.send(1)
        let first = Recorder(stream.readOnly)
        stream.send(2)
        let second = Recorder(stream.readOnly)
        stream.send(3)
        #expect(first.values == [2, 3])
        #expect(second.values == [3])
    }

    @Test("every observer gets every value: the stream is multicast")
    func isMulticast() {
        let stream = MutableEventStream<String>()
        let recorders = (0..<5).map { _ in Recorder(stream.readOnly) }
        stream.send("x")
        stream.send("y")
        for recorder in recorders { #expect(recorder.values == ["x", "y"]) }
    }

    @Test("finish reaches current observers, is replayed to late ones, and ends sending")
    func finishIsSticky() {
        let stream = MutableEventStream<Int>()
        let early = Recorder(stream)
        stream.send(1)
        stream.finish()
        stream.finish()
        #expect(stream.send(2) == false)
        let late = Recorder(stream.readOnly)
        #expect(early.history == [.value(1), .finished])
        #expect(late.history == [.finished])
        #expect(stream.readOnly.isFinished)
    }

    @Test("releasing the owner finishes the stream")
    func ownerReleaseFinishes() {
        var stream: MutableEventStream<Int>? = MutableEventStream()
        let view = stream?.readOnly
        let recorder = Recorder(view ?? MutableEventStream<Int>().readOnly)
        stream?.send(7)
        stream = nil
        #expect(recorder.history == [.value(7), .finished])
    }

    @Test("cancelling an observation stops delivery to it and only to it")
    func cancelStopsDelivery() {
        let stream = MutableEventStream<Int>()
        let kept = Recorder(stream)
        let cancelled = Recorder(stream)
        stream.send(1)
        cancelled.observation?.cancel()
        stream.send(2)
        #expect(kept.values == [1, 2])
        #expect(cancelled.values == [1])
        #expect(cancelled.observation?.isCancelled == true)
    }

    @Test("dropping the token stops delivery")
    func droppingTokenStops() {
        let stream = MutableEventStream<Int>()
        let seen = Locked<[Int]>([])
        var token: SignalObservation? = stream.observe { value in seen.withLock { $0.append(value) } }
        stream.send(1)
        _ = token
        token = nil
        stream.send(2)
        #expect(seen.withLock { $0 } == [1])
    }
}
