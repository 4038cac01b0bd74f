import Dispatch
import Testing

@testable import Signals

@Suite("StateValue")
struct StateValueTests {
    @Test("a new observer gets the current value first, then every change")
    func replaysCurrentValue() {
        let state = MutableStateValue(1)
        state.value = 2
        let recorder = Recorder(state.readOnly)
        state.value = 3
        #expect(recorder.history == [.value(2), .value(3)])
        #expect(state.readOnly.value == 3)
    }

    @Test("setting an equal value notifies nobody when the value is Equatable")
    func skipsEqualValues() {
        let state = MutableStateValue("a")
        let recorder = Recorder(state)
        state.value = "a"
        state.value = "b"
        state.value = "b"
        state.value = "a"
        #expect(recorder.values == ["a", "b", "a"])
    }

    @Test("without Equatable or a duplicate rule every write notifies")
    func nonEquatableAlwaysNotifies() {
        struct Opaque: Sendable { let n: Int }
        let state = MutableStateValue(Opaque(n: 1))
        let recorder = Recorder(state)
        state.value = Opaque(n: 1)
        state.value = Opaque(n: 1)
        #expect(recorder.values.map(\.n) == [1, 1, 1])
    }

    @Test("a custom duplicate rule decides which writes notify")
    func customDuplicateRule() {
        let state = MutableStateValue(10, isDuplicate: { $0 / 10 == $1 / 10 })
        let recorder = Recorder(state)
        state.value = 15
        state.value = 21
        #expect(recorder.values == [10, 21])
        #expect(state.value == 21)
    }

    @Test("update is an atomic read-modify-write that notifies once")
    func updateIsAtomic() {
        let state = MutableStateValue(0)
        let recorder = Recorder(state)
        let result = state.update { value -> String in
            value += 5
            return "done"
        }
        #expect(result == "done")
        #expect(recorder.values == [0, 5])
    }

    @Test("the read-only view follows the owner and observes the same changes")
    func readOnlyView() {
        let state = MutableStateValue(false)
        let view: StateValue<Bool> = state.readOnly
        let recorder = Recorder(view)
        state.value = true
        #expect(view.value)
        #expect(recorder.values == [false, true])
    }

    @Test("concurrent updates from many threads lose no increment")
    func concurrentUpdates() {
        let state = MutableStateValue(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<1000 { state.update { $0 += 1 } }
        }
        #expect(state.value == 8000)
    }
}
