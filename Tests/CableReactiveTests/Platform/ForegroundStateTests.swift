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
            (.stateRead(.background, scenesConnected: true), true, false),
            (.stateRead(.inactive, scenesConnected: true), false, true),
            (.stateRead(.active, scenesConnected: true), false, true),
            // A scene-based app reads as in the background until its first scene connects: not believed.
            (.stateRead(.background, scenesConnected: false), true, true),
            (.stateRead(.background, scenesConnected: false), false, false),
            (.stateRead(.active, scenesConnected: false), false, true),
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
        source.report(.stateRead(.background, scenesConnected: true))
        source.report(.enteringForeground)
        source.report(.becameActive)
        #expect(seen.recorded == [true, false, true])
    }

    @Test("a scene-based launch (background state read before any scene connects, then active) never reads false")
    func sceneBasedLaunch() {
        let source = FakeLifecycleSource()
        let foreground = ForegroundState(source: source)
        let seen = ValueRecorder(foreground.value)
        source.report(.stateRead(.background, scenesConnected: false))
        source.report(.becameActive)
        source.report(.enteredBackground)
        #expect(seen.recorded == [true, false])
    }

    @Test("Control Center or a call (inactive) keeps the connection; the background drops it; coming back restores it")
    func iOSSession() {
        let source = FakeLifecycleSource()
        let foreground = ForegroundState(source: source)
        let seen = ValueRecorder(foreground.value)
        let events: [LifecycleEvent] = [
            .stateRead(.active, scenesConnected: true), .resigningActive, .becameActive, .resigningActive,
            .enteredBackground,
            .enteringForeground, .becameActive,
        ]
        for event in events { source.report(event) }
        #expect(seen.recorded == [true, false, true])
    }
}
