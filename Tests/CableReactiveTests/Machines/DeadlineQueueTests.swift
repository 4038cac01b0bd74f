import Testing

@testable import CableReactive

@Suite("DeadlineQueue")
struct DeadlineQueueTests {
    @Test("the timer is armed only for a deadline earlier than the armed one")
    func arming() {
        var queue = DeadlineQueue<String, Int>()
        #expect(queue.set("a", 1, at: 10) == 10)
        #expect(queue.set("b", 2, at: 12) == nil, "the timer for 10 fires first")
        #expect(queue.set("c", 3, at: 5) == 5)
        #expect(queue.armedFor == 5 && queue.count == 3)
    }

    @Test("firing returns what is due, earliest first and ties in set order, and the next deadline")
    func firing() {
        var queue = DeadlineQueue<String, Int>()
        _ = queue.set("late", 1, at: 20)
        _ = queue.set("tie1", 2, at: 10)
        _ = queue.set("early", 3, at: 5)
        _ = queue.set("tie2", 4, at: 10)
        let (due, next) = queue.fire(now: 10)
        #expect(due.map(\.key) == ["early", "tie1", "tie2"])
        #expect(due.map(\.value) == [3, 2, 4])
        #expect(next == 20 && queue.armedFor == 20 && queue.count == 1)
        let (rest, none) = queue.fire(now: 20)
        #expect(rest.map(\.key) == ["late"] && none == nil && queue.armedFor == nil)
    }

    @Test("a timer that fires early finds nothing due and is armed again for the earliest deadline")
    func earlyFire() {
        var queue = DeadlineQueue<String, Int>()
        _ = queue.set("a", 1, at: 10)
        let (due, next) = queue.fire(now: 4)
        #expect(due.isEmpty && next == 10)
    }

    @Test("setting a key again replaces its deadline and value")
    func replacing() {
        var queue = DeadlineQueue<String, Int>()
        _ = queue.set("a", 1, at: 10)
        _ = queue.set("a", 2, at: 30)
        #expect(queue.count == 1)
        let atTen = queue.fire(now: 10)
        #expect(atTen.due.isEmpty, "the old deadline is gone")
        let atThirty = queue.fire(now: 30)
        #expect(atThirty.due.map(\.value) == [2])
    }

    @Test("removing the last key says the timer can go, and the next set arms it again")
    func removingTheLast() {
        var queue = DeadlineQueue<String, Int>()
        _ = queue.set("a", 1, at: 10)
        _ = queue.set("b", 2, at: 20)
        let aWasLast = queue.remove("a")
        #expect(!aWasLast, "b still waits")
        let bWasLast = queue.remove("b")
        #expect(bWasLast)
        #expect(queue.armedFor == nil)
        #expect(queue.set("c", 3, at: 30) == 30, "armed again, though 30 is later than the old 10")
    }
}
