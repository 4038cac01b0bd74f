import CableReactive
import Signals
import Testing

/// `CablePlatform` on this platform. On Linux nothing is observed, so both inputs are `true` for good.
@Suite("CablePlatform")
struct CablePlatformTests {
    #if os(Linux)
        @Test("on Linux the network and the foreground are always true")
        func linux() {
            #expect(CablePlatform.networkAvailable.value)
            #expect(
                CablePlatform.networkAvailable(NetworkUsability(allowsConstrained: false, allowsExpensive: false)).value
            )
            #expect(CablePlatform.appInForeground.value)
        }
    #endif

    @Test("each input is one state for the process: reading it again returns the same one")
    func oneStatePerProcess() {
        #expect(CablePlatform.networkAvailable === CablePlatform.networkAvailable)
        #expect(CablePlatform.networkAvailable(NetworkUsability()) === CablePlatform.networkAvailable)
        #expect(CablePlatform.appInForeground === CablePlatform.appInForeground)
    }

    @Test("the three-input gate is one line, and is true on Linux once logged in")
    func gate() {
        let loggedIn = MutableStateValue(false)
        let canConnect = combineLatest(loggedIn, CablePlatform.networkAvailable, CablePlatform.appInForeground)
            .map { $0 && $1 && $2 }
        let seen = ValueRecorder(canConnect)
        loggedIn.value = true
        #if os(Linux)
            #expect(seen.recorded == [false, true])
        #endif
    }
}
