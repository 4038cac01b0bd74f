// Deliberately no `import Signals`: an app that imports only CableReactive and CableTesting still names the
// schedulers that moved into Signals (CableScheduler, DispatchScheduler, ScheduledWork, ManualScheduler).
import CableReactive
import CableTesting
import Testing

@Suite("Scheduler names without importing Signals")
struct SchedulerNamesTests {
    @Test("CableScheduler, DispatchScheduler, ScheduledWork and ManualScheduler resolve and work")
    func namesResolve() {
        let manual = ManualScheduler()
        let schedulers: [any CableScheduler] = [manual, DispatchScheduler()]
        #expect(schedulers.count == 2)
        _ = manual.schedule(after: 1) {}
        let work: any ScheduledWork = manual.schedule(after: 5) {}
        #expect(manual.pendingDelays == [1, 5])
        manual.advance(by: 1)
        #expect(manual.pendingDelays == [4], "the first ran at 1 s")
        work.cancel()
        #expect(manual.pendingCount == 0)
        #expect(manual.history == [1, 5])
    }
}
