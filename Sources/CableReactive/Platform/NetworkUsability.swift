// Compiled on every platform: what makes a network path usable, and which changes of it may have killed a
// connection, is decided here, from plain values, and tested on Linux. The NWPathMonitor adapter (Apple only,
// NetworkPathMonitorSource.swift) turns each NWPath into a ``NetworkPath``.

/// The network path as the system's monitor reports it, in plain values: what the Apple adapter reads from an
/// `NWPath`, what a Linux service may build from its network manager, and what tests build by hand.
///
/// ```swift
/// // A service that follows NetworkManager tells the client what it sees.
/// let path = MutableStateValue<NetworkPath?>(nil)
/// let client = try ActionCableClient(url: url, network: path.readOnly)
/// path.value = NetworkPath(status: .satisfied, interfaces: [NetworkInterface(name: "eth0", kind: .wiredEthernet)])
/// ```
public struct NetworkPath: Sendable, Hashable, CustomStringConvertible {
    /// `NWPath.Status`.
    public enum Status: Sendable, Hashable {
        /// A route exists (`satisfied`): connections can be tried.
        case satisfied
        /// No route (`unsatisfied`): offline, in airplane mode, or every interface is down or refused.
        case unsatisfied
        /// No route yet, though making a connection may bring one up (`requiresConnection`): a VPN on demand, an
        /// idle cellular data context. It counts as usable, since only an attempt can activate it.
        case requiresConnection
    }

    /// Whether a route exists.
    public var status: Status
    /// The interfaces the path may use, in the system's order of preference (`NWPath.availableInterfaces`).
    public var interfaces: [NetworkInterface]
    /// The path is in Low Data Mode (`NWPath.isConstrained`).
    public var isConstrained: Bool
    /// The path is cellular or a personal hotspot (`NWPath.isExpensive`).
    public var isExpensive: Bool

    /// A path; by default one with no interfaces listed, not constrained, not expensive.
    public init(
        status: Status, interfaces: [NetworkInterface] = [], isConstrained: Bool = false, isExpensive: Bool = false
    ) {
        self.status = status
        self.interfaces = interfaces
        self.isConstrained = isConstrained
        self.isExpensive = isExpensive
    }

    /// For example `satisfied [en0 wifi, pdp_ip0 cellular]`.
    public var description: String {
        "\(status) [\(interfaces.map(\.description).joined(separator: ", "))]"
    }

    /// Whether a connection that was working on `old` may have died on the way to this path, so that the client
    /// checks it (``ActionCableClient`` does; see its `network` parameter):
    /// - the path came back from no route: the connection lived through an outage;
    /// - an interface went away: the connection may have used it (which one it used is not known);
    /// - a tunnel (a VPN: `utun`, `ipsec`, `ppp`, or any interface of kind ``NetworkInterface/Kind/other``)
    ///   appeared: traffic is routed through it from now on.
    ///
    /// Only interfaces appearing beside the ones that were there (Wi-Fi joining cellular) leave a connection
    /// alone: new connections prefer the new interface, and the old one keeps its route. The first report
    /// (`old` is `nil`) and a change of Low Data Mode or cost alone say nothing about a connection.
    public func mayHaveBroken(connectionsFrom old: NetworkPath?) -> Bool {
        guard let old, status != .unsatisfied else { return false }
        if old.status == .unsatisfied { return true }
        let now = Set(interfaces)
        let before = Set(old.interfaces)
        if !before.isSubset(of: now) { return true }
        return now.subtracting(before).contains { $0.kind == .other }
    }
}

/// One network interface of a ``NetworkPath``: `NWInterface`'s name and type.
public struct NetworkInterface: Sendable, Hashable, CustomStringConvertible {
    /// `NWInterface.InterfaceType`.
    public enum Kind: Sendable, Hashable {
        /// Wi-Fi (`en0` on an iPhone).
        case wifi
        /// Cellular data (`pdp_ip0`).
        case cellular
        /// Wired Ethernet, including USB and Thunderbolt adapters.
        case wiredEthernet
        /// The loopback interface (`lo0`).
        case loopback
        /// Anything else, such as a VPN's tunnel (`utun0`) or a bridge.
        case other
    }

    /// The system's name for it: `en0`, `pdp_ip0`, `utun2`, `eth0`.
    public var name: String
    /// What kind of interface it is.
    public var kind: Kind

    /// An interface named `name` of kind `kind`: `NetworkInterface(name: "eth0", kind: .wiredEthernet)`.
    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// For example `en0 wifi`.
    public var description: String { "\(name) \(kind)" }
}

/// Which network paths ``CablePlatform/networkAvailable(_:)`` counts as usable.
///
/// A path is usable unless the system reports no route at all: a satisfied path, and one that a connection may
/// bring up (`requiresConnection`: a VPN on demand, an idle cellular context; Apple: "establishing a new
/// connection may activate the path"), count. Two options refuse paths the user may not want a socket kept open
/// on; both are allowed by default:
///
/// ```swift
/// // Connect on Wi-Fi or Ethernet only: not in Low Data Mode, not on cellular or a hotspot.
/// let unmetered = CablePlatform.networkAvailable(NetworkUsability(allowsConstrained: false, allowsExpensive: false))
/// ```
public struct NetworkUsability: Sendable, Hashable {
    /// Whether a path in Low Data Mode (`NWPath.isConstrained`, iOS 13 and later) counts. Default `true`.
    public var allowsConstrained: Bool
    /// Whether an expensive path (cellular, a personal hotspot: `NWPath.isExpensive`) counts. Default `true`.
    public var allowsExpensive: Bool

    /// Creates a rule; by default every path with a route, or one a connection may bring up, counts.
    public init(allowsConstrained: Bool = true, allowsExpensive: Bool = true) {
        self.allowsConstrained = allowsConstrained
        self.allowsExpensive = allowsExpensive
    }

    /// Whether `path` counts as usable under this rule.
    public func isUsable(_ path: NetworkPath) -> Bool {
        path.status != .unsatisfied && (allowsConstrained || !path.isConstrained)
            && (allowsExpensive || !path.isExpensive)
    }
}
