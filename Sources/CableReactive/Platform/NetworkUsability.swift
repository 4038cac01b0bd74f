// Compiled on every platform: what makes a network path usable is decided here, from plain values, and tested on
// Linux. The NWPathMonitor adapter (Apple only, NetworkPathMonitorSource.swift) turns each NWPath into a snapshot.

/// One answer of the system's network path monitor, in plain values: what the Apple adapter reads from an `NWPath`,
/// and what tests build by hand.
package struct NetworkPathSnapshot: Sendable, Hashable {
    /// `NWPath.Status`.
    package enum Status: Sendable, Hashable {
        /// A route exists (`satisfied`): connections can be tried.
        case satisfied
        /// No route (`unsatisfied`): offline, in airplane mode, or every interface is down or refused.
        case unsatisfied
        /// No route now, though making a connection could bring one up (`requiresConnection`), such as a VPN
        /// on demand.
        case requiresConnection
    }

    /// Whether a route exists.
    package var status: Status
    /// The path is in Low Data Mode (`NWPath.isConstrained`).
    package var isConstrained: Bool
    /// The path is cellular or a personal hotspot (`NWPath.isExpensive`).
    package var isExpensive: Bool

    package init(status: Status, isConstrained: Bool = false, isExpensive: Bool = false) {
        self.status = status
        self.isConstrained = isConstrained
        self.isExpensive = isExpensive
    }
}

/// Which network paths ``CablePlatform/networkAvailable(_:)`` counts as usable.
///
/// A path is usable when the system reports it satisfied: a route exists, so a connection can be tried. A path
/// that could only be brought up by a connection (`requiresConnection`, such as a VPN on demand) is not, and
/// neither is no path at all. Two options refuse paths the user may not want a socket kept open on; both are
/// allowed by default:
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

    /// Creates a rule; by default every satisfied path counts.
    public init(allowsConstrained: Bool = true, allowsExpensive: Bool = true) {
        self.allowsConstrained = allowsConstrained
        self.allowsExpensive = allowsExpensive
    }

    /// Whether `path` counts as usable under this rule.
    package func isUsable(_ path: NetworkPathSnapshot) -> Bool {
        path.status == .satisfied && (allowsConstrained || !path.isConstrained)
            && (allowsExpensive || !path.isExpensive)
    }
}
