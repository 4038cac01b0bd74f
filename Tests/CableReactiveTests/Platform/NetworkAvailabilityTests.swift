import CableReactive
import Signals
import Testing

/// The network gate input, driven by a fake path monitor: what counts as usable, the value before the monitor
/// answers, and one monitor for every rule.
@Suite("NetworkAvailability")
struct NetworkAvailabilityTests {
    typealias Path = NetworkPath

    static let wifi = Path(status: .satisfied)
    static let cellular = Path(status: .satisfied, isExpensive: true)
    static let lowData = Path(status: .satisfied, isConstrained: true)
    static let offline = Path(status: .unsatisfied)
    static let vpnOnDemand = Path(status: .requiresConnection)
    static let unmetered = NetworkUsability(allowsConstrained: false, allowsExpensive: false)

    @Test(
        "a satisfied path is usable, and one a connection may bring up (VPN on demand); an unsatisfied one is not",
        arguments: [
            (wifi, true), (cellular, true), (lowData, true), (offline, false), (vpnOnDemand, true),
            (Path(status: .unsatisfied, isConstrained: true, isExpensive: true), false),
        ])
    func defaultRule(path: Path, usable: Bool) {
        #expect(NetworkUsability().isUsable(path) == usable)
    }

    @Test("Low Data Mode and expensive paths are allowed by default, and each can be refused on its own")
    func options() {
        let noLowData = NetworkUsability(allowsConstrained: false)
        let noCellular = NetworkUsability(allowsExpensive: false)
        #expect(noLowData.isUsable(Self.cellular) && !noLowData.isUsable(Self.lowData))
        #expect(noCellular.isUsable(Self.lowData) && !noCellular.isUsable(Self.cellular))
        #expect(!Self.unmetered.isUsable(Path(status: .satisfied, isConstrained: true, isExpensive: true)))
        #expect(Self.unmetered.isUsable(Self.wifi) && Self.unmetered.isUsable(Self.vpnOnDemand))
    }

    @Test("before the monitor answers the network counts as available; its answers then decide")
    func initialValue() {
        let source = FakePathSource()
        let network = NetworkAvailability(source: source)
        #expect(source.starts == 1)
        #expect(network.available.value)
        #expect(network.available(Self.unmetered).value)
        source.report(Self.offline)
        #expect(!network.available.value)
        source.report(Self.wifi)
        #expect(network.available.value)
    }

    @Test("observers see each change once: a new path under the same verdict notifies nobody")
    func changesOnly() {
        let source = FakePathSource()
        let network = NetworkAvailability(source: source)
        let seen = ValueRecorder(network.available)
        for path in [Self.wifi, Self.cellular, Self.lowData, Self.offline, Self.vpnOnDemand, Self.wifi] {
            source.report(path)
        }
        #expect(seen.recorded == [true, false, true])  // vpnOnDemand already counts: wifi after it changes nothing
    }

    @Test("one monitor for every rule: each view follows the same answers under its own rule")
    func oneMonitor() {
        let source = FakePathSource()
        let network = NetworkAvailability(source: source)
        let any = ValueRecorder(network.available)
        let unmetered = ValueRecorder(network.available(Self.unmetered))
        let noCellular = ValueRecorder(network.available(NetworkUsability(allowsExpensive: false)))
        for path in [Self.cellular, Self.wifi, Self.lowData, Self.offline] {
            source.report(path)
        }
        #expect(source.starts == 1)
        #expect(any.recorded == [true, false])
        #expect(unmetered.recorded == [true, false, true, false])
        #expect(noCellular.recorded == [true, false, true, false])
        #expect(network.available(NetworkUsability()) === network.available)
    }

    @Test("the path view is nil until the monitor answers, then each answer, interfaces included")
    func pathView() {
        let source = FakePathSource()
        let network = NetworkAvailability(source: source)
        let seen = ValueRecorder(network.path)
        let wifi = Path(status: .satisfied, interfaces: [NetworkInterface(name: "en0", kind: .wifi)])
        source.report(wifi)
        source.report(Self.offline)
        #expect(seen.recorded == [nil, wifi, Self.offline])
        #expect(source.starts == 1)
    }

    @Test("a view made after the monitor answered starts from that answer")
    func lateView() {
        let source = FakePathSource()
        let network = NetworkAvailability(source: source)
        source.report(Self.cellular)
        #expect(network.available.value)
        #expect(!network.available(Self.unmetered).value)
        #expect(network.available(NetworkUsability(allowsConstrained: false)).value)
    }

    @Test("a view nobody keeps is released with its observation of the monitor; the others go on")
    func releasedView() {
        let source = FakePathSource()
        let network = NetworkAvailability(source: source)
        weak var released: StateValue<Bool>?
        do {
            let view = network.available(Self.unmetered)
            released = view
            #expect(view.value)
        }
        #expect(released == nil)
        source.report(Self.offline)
        #expect(!network.available.value)
    }
}
