// Apple platforms only: the Network framework. The rule it feeds (NetworkUsability) is shared code, tested on
// Linux; this file only turns NWPathMonitor's answers into snapshots.
#if canImport(Network)
    import Dispatch
    import Network

    /// `NWPathMonitor` behind ``NetworkPathSource``: the system's view of the path new connections would take.
    ///
    /// `@unchecked Sendable`: `monitor` is configured once, in `start`, before it starts; from then on only the
    /// Network framework touches it, calling the handler on `queue`, one path at a time.
    final class NetworkPathMonitorSource: NetworkPathSource, @unchecked Sendable {
        private let monitor = NWPathMonitor()
        private let queue = DispatchQueue(label: "CableReactive.NetworkPath")

        func start(reporting report: @escaping @Sendable (NetworkPath) -> Void) {
            monitor.pathUpdateHandler = { path in report(NetworkPath(path)) }
            monitor.start(queue: queue)
        }
    }

    extension NetworkPath {
        /// The snapshot of `path`. Compared with `==`, not switched over: a status added in a later SDK counts as no
        /// route.
        init(_ path: NWPath) {
            let status: Status
            if path.status == .satisfied {
                status = .satisfied
            } else if path.status == .requiresConnection {
                status = .requiresConnection
            } else {
                status = .unsatisfied
            }
            self.init(
                status: status, interfaces: path.availableInterfaces.map(NetworkInterface.init),
                isConstrained: path.isConstrained, isExpensive: path.isExpensive)
        }
    }

    extension NetworkInterface {
        /// The interface's name and type. Compared with `==`, not switched over: a type added in a later SDK
        /// counts as `other`.
        init(_ interface: NWInterface) {
            let kinds: [(NWInterface.InterfaceType, Kind)] = [
                (.wifi, .wifi), (.cellular, .cellular), (.wiredEthernet, .wiredEthernet), (.loopback, .loopback),
            ]
            let kind = kinds.first { $0.0 == interface.type }?.1 ?? .other
            self.init(name: interface.name, kind: kind)
        }
    }
#endif
