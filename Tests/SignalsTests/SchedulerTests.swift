import Dispatch
import Testing

@testable import Signals

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

@Suite("DispatchScheduler")
struct DispatchSchedulerTests {
    @Test("work behind two deadlines runs once, and not at all once cancelled")
    func onceWork() {
        let runs = Locked(0)
        let once = OnceWork { runs.withLock { $0 += 1 } }
        #expect(once.run())
        #expect(!once.run())  // the second deadline finds it done
        #expect(runs.withLock { $0 } == 1)
        let cancelled = OnceWork { runs.withLock { $0 += 1 } }
        cancelled.cancel()
        #expect(!cancelled.run())
        #expect(runs.withLock { $0 } == 1)
    }

    @Test("now is monotonic and on the clock that counts sleep (CLOCK_BOOTTIME on Linux)")
    func clockCountsSleep() {
        let scheduler = DispatchScheduler()
        let first = scheduler.now
        var time = timespec()
        #if os(Linux)
            clock_gettime(CLOCK_BOOTTIME, &time)
        #else
            clock_gettime(CLOCK_MONOTONIC, &time)
        #endif
        let boot = Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
        let second = scheduler.now
        #expect(first <= boot && boot <= second)
    }

    @Test("scheduled work runs once, later; cancelled work never runs and is released")
    func scheduleAndCancel() {
        let scheduler = DispatchScheduler()
        let ran = DispatchSemaphore(value: 0)
        let runs = Locked(0)
        _ = scheduler.schedule(after: 0.001) {
            runs.withLock { $0 += 1 }
            ran.signal()
        }
        #expect(ran.wait(timeout: .now() + 10) == .success)
        let live = Locked(0)
        do {
            let tracked = LifetimeTracked(live)
            let work = scheduler.schedule(after: 3600) { _ = tracked.id }
            work.cancel()
        }
        #expect(live.withLock { $0 } == 0, "cancelling released the work and what it captured")
        #expect(runs.withLock { $0 } == 1)
    }
}

@Suite("VirtualTimeScheduler")
struct VirtualTimeSchedulerTests {
    @Test("work runs in deadline order, ties in scheduling order, each seeing its own deadline as now")
    func deadlineOrder() {
        let scheduler = VirtualTimeScheduler()
        let log = Locked<[String]>([])
        for (name, delay) in [("c", 3.0), ("a", 1.0), ("b1", 2.0), ("b2", 2.0)] {
            _ = scheduler.schedule(after: delay) { log.withLock { $0.append("\(name)@\(scheduler.now)") } }
        }
        #expect(scheduler.pendingDelays == [1, 2, 2, 3])
        scheduler.advance(by: 2)
        #expect(log.withLock { $0 } == ["a@1.0", "b1@2.0", "b2@2.0"])
        #expect(scheduler.now == 2)
        scheduler.advance(to: 10)
        #expect(log.withLock { $0 }.last == "c@3.0")
        #expect(scheduler.now == 10)
        #expect(scheduler.history == [3, 1, 2, 2])
    }

    @Test("work may schedule more work; what falls due within the advance runs in it")
    func nestedScheduling() {
        let scheduler = VirtualTimeScheduler()
        let times = Locked<[Double]>([])
        _ = scheduler.schedule(after: 1) {
            times.withLock { $0.append(scheduler.now) }
            _ = scheduler.schedule(after: 1) { times.withLock { $0.append(scheduler.now) } }
        }
        scheduler.advance(by: 5)
        #expect(times.withLock { $0 } == [1, 2])
        #expect(scheduler.pendingCount == 0)
    }

    @Test("cancelled work never runs and is released at once")
    func cancel() {
        let scheduler = VirtualTimeScheduler()
        let live = Locked(0)
        let ran = Locked(false)
        do {
            let tracked = LifetimeTracked(live)
            let work = scheduler.schedule(after: 1) {
                _ = tracked.id
                ran.withLock { $0 = true }
            }
            #expect(scheduler.pendingCount == 1)
            work.cancel()
            work.cancel()  // idempotent
        }
        #expect(scheduler.pendingCount == 0)
        #expect(live.withLock { $0 } == 0)
        scheduler.advance(by: 2)
        #expect(!ran.withLock { $0 })
    }

    @Test("perform work waits for flush and runs in order; advance flushes before and after each timer")
    func performAndFlush() {
        let scheduler = VirtualTimeScheduler()
        let log = Locked<[String]>([])
        scheduler.perform { log.withLock { $0.append("p1") } }
        scheduler.perform { log.withLock { $0.append("p2") } }
        #expect(scheduler.pendingCallbacks == 2)
        #expect(log.withLock { $0 }.isEmpty)
        _ = scheduler.schedule(after: 1) {
            log.withLock { $0.append("t") }
            scheduler.perform { log.withLock { $0.append("p3") } }
        }
        scheduler.advance(by: 1)
        #expect(log.withLock { $0 } == ["p1", "p2", "t", "p3"])
        #expect(scheduler.pendingCallbacks == 0)
    }

    @Test("suspend jumps the clock, then runs the overdue work late, each seeing the time of waking up")
    func suspend() {
        let scheduler = VirtualTimeScheduler()
        let seen = Locked<[Double]>([])
        _ = scheduler.schedule(after: 5) { seen.withLock { $0.append(scheduler.now) } }
        _ = scheduler.schedule(after: 50) { seen.withLock { $0.append(scheduler.now) } }
        scheduler.suspend(for: 600)
        #expect(seen.withLock { $0 } == [600, 600])
        #expect(scheduler.now == 600)
    }

    @Test("run(limit:) runs until idle, or stops at the limit for work that re-arms itself")
    func runUntilIdle() {
        let scheduler = VirtualTimeScheduler()
        let count = Locked(0)
        _ = scheduler.schedule(after: 1) { count.withLock { $0 += 1 } }
        _ = scheduler.schedule(after: 7) { count.withLock { $0 += 1 } }
        #expect(scheduler.run() == 2)
        #expect(scheduler.now == 7)
        @Sendable func rearm() { _ = scheduler.schedule(after: 1, rearm) }
        rearm()
        #expect(scheduler.run(limit: 5) == 5)
        #expect(scheduler.pendingCount == 1)
    }
}
