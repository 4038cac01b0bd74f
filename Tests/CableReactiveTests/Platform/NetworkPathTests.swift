import CableReactive
import Testing

/// Which path changes may have broken a working connection (and so make the client check it), and the path's
/// description.
@Suite("NetworkPath changes")
struct NetworkPathTests {
    static let wifi = NetworkInterface(name: "en0", kind: .wifi)
    static let cellular = NetworkInterface(name: "pdp_ip0", kind: .cellular)
    static let vpn = NetworkInterface(name: "utun2", kind: .other)

    static func path(_ interfaces: NetworkInterface..., status: NetworkPath.Status = .satisfied) -> NetworkPath {
        NetworkPath(status: status, interfaces: interfaces)
    }

    @Test(
        "an interface gone, a tunnel up, a return from no route may break a connection; an interface added beside does not",
        arguments: [
            (path(wifi), path(cellular), true),  // Wi-Fi to cellular: the handover
            (path(wifi, cellular), path(cellular), true),  // Wi-Fi dropped, cellular stays
            (path(cellular), path(wifi, cellular), false),  // Wi-Fi joins: the cellular socket lives on
            (path(wifi), path(vpn, wifi), true),  // a VPN comes up: traffic goes through the tunnel
            (path(vpn, wifi), path(wifi), true),  // and down again
            (path(wifi, status: .unsatisfied), path(wifi), true),  // the route is back after an outage
            (path(wifi), path(wifi, status: .unsatisfied), false),  // no route: nothing to check on
            (path(wifi), path(wifi), false),
            (path(wifi), path(wifi, status: .requiresConnection), false),
        ])
    func mayHaveBroken(old: NetworkPath, new: NetworkPath, broken: Bool) {
        #expect(new.mayHaveBroken(connectionsFrom: old) == broken)
    }

    @Test("the first answer and a change of cost or Low Data Mode alone say nothing about a connection")
    func firstAnswerAndFlags() {
        let plain = Self.path(Self.wifi)
        #expect(!plain.mayHaveBroken(connectionsFrom: nil))
        let flagged = NetworkPath(status: .satisfied, interfaces: [Self.wifi], isConstrained: true, isExpensive: true)
        #expect(!flagged.mayHaveBroken(connectionsFrom: plain))
    }

    @Test("a path prints its status and interfaces")
    func description() {
        #expect("\(Self.path(Self.wifi, Self.cellular))" == "satisfied [en0 wifi, pdp_ip0 cellular]")
    }
}
