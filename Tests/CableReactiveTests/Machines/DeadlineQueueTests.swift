import CableTesting
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

    @Test("an emptied queue gives its storage back, whether by removal or by firing")
    func emptiedQueueFreesStorage() {
        var queue = DeadlineQueue<String, Int>()
        for index in 0..<1_000 { _ = queue.set("s\(index)", index, at: Double(index)) }
        for index in 0..<999 { #expect(queue.remove("s\(index)") == false) }
        #expect(queue.holdsStorage, "one is still pending")
        #expect(queue.remove("s999") && !queue.holdsStorage && queue.armedFor == nil)
        for index in 0..<100 { _ = queue.set("s\(index)", index, at: Double(index)) }
        let (due, next) = queue.fire(now: 1_000)
        #expect(due.count == 100 && next == nil && !queue.holdsStorage)
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

    @Test("matches a plain model over 20,000 seeded operations, and its stale slots stay bounded")
    func againstAModel() {
        var queue = DeadlineQueue<Int, Int>()
        var model: [Int: (deadline: Double, order: Int, value: Int)] = [:]
        var random = SeededRandom(seed: 7)
        var now = 0.0
        var order = 0
        for step in 0..<20_000 {
            let key = Int(random.next() % 50)
            switch random.next() % 4 {
            case 0, 1:
                let deadline = now + Double(random.next() % 100) / 10
                order += 1
                model[key] = (deadline, order, step)
                _ = queue.set(key, step, at: deadline)
            case 2:
                model[key] = nil
                _ = queue.remove(key)
            default:
                now += Double(random.next() % 30) / 10
                let expected = model.filter { $0.value.deadline <= now + 0.001 }
                    .sorted { ($0.value.deadline, $0.value.order) < ($1.value.deadline, $1.value.order) }
                for entry in expected { model[entry.key] = nil }
                let (due, next) = queue.fire(now: now)
                #expect(due.map(\.key) == expected.map(\.key) && due.map(\.value) == expected.map(\.value.value))
                #expect(next == model.values.map(\.deadline).min())
            }
            #expect(queue.count == model.count)
            #expect(queue.slotCount <= 2 * queue.count + 65)
        }
    }
}
