import Observation
import Signals
import Testing

// Issue 23, item 1: a file that imports both Signals and Observation declares an `@Observable` class. This failed
// to compile while Signals exported a type named `Observation` ("'Observable' is not a member type of class
// 'Signals.Observation'"): the file compiling is the test, and the test below checks the macro did its work.

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable
final class GateModel {
    var loggedIn = false
    @ObservationIgnored let gate = MutableStateValue(false)
}

@Suite("@Observable next to import Signals")
struct ObservableNextToSignalsTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("an @Observable class in a file that imports Signals is tracked by withObservationTracking")
    func observableCompilesAndTracks() {
        let model = GateModel()
        let changed = Locked(false)
        withObservationTracking {
            _ = model.loggedIn
        } onChange: {
            changed.withLock { $0 = true }
        }
        model.gate.value = true  // ignored by tracking
        #expect(changed.withLock { $0 } == false)
        model.loggedIn = true
        #expect(changed.withLock { $0 })
    }
}
