import Testing

@testable import Signals

@Suite("Locked")
struct LockedTests {
    @Test("withLock returns the body's result and keeps mutations")
    func keepsMutations() {
        let counter = Locked(0)
        let result = counter.withLock { value -> Int in
            value += 41
            return value + 1
        }
        #expect(result == 42)
        #expect(counter.withLock { $0 } == 41)
    }
}
