import CableReactive
import Signals
import Testing

/// The foreground gate input, driven by a fake lifecycle: the rule for each event and the value before the app's
/// state is known.
@Suite("ForegroundState")
struct ForegroundStateTests {
    @Test(
        "the background is not the foreground; coming back and becoming active are; resigning changes nothing",
        arguments: [
            (LifecycleEvent.enteredBackground, false, false), (.enteredBackground, true, false),
            (.enteringForeground, false, true), (.becameActive, false, true),
            (.resigningActive, true, true), (.resigningActive, false, false),
            (.stateRead(.background), true, false), (.stateRead(.inactive), false, true),
            (.stateRead(.active), false, true),
        ])
    func rule(event: LifecycleEvent, before: Bool, after: Bool) {
        #expect(ForegroundRule.isForeground(after: event, wasForeground: before) == after)
    }

    @Test("before the app's state is read the app counts as in the foreground, and the source starts once")
    func initialValue() {
        let source = FakeLifecycleSource()
        let foreground = ForegroundState(source: source)
        #expect(source.starts == 1)
        #expect(foreground.value.value)
        #expect(ForegroundRule.initial)
    }

    @Test("an app launched in the background reads false once its state is read, and true when it comes forward")
    func backgroundLaunch() {
        let source = FakeLifecycleSource()
        let foreground = ForegroundState(source: source)
        let seen = ValueRecorder(foreground.value)
        source.report(.stateRead(.background))
        source.report(.enteringForeground)
        source.report(.becameActive)
        #expect(seen.recorded == [true, false, true])
    }

    @Test("Control Center or a call (inactive) keeps the connection; the background drops it; coming back restores it")
    func iOSSession() {
        let source = FakeLifecycleSource()
        let foreground = ForegroundState(source: source)
        let seen = ValueRecorder(foreground.value)
        let events: [LifecycleEvent] = [
            .stateRead(.active), .resigningActive, .becameActive, .resigningActive, .enteredBackground,
            .enteringForeground, .becameActive,
        ]
        for event in events { source.report(event) }
        #expect(seen.recorded == [true, false, true])
    }
}
