// Compiled on every platform: the objects that turn what a platform source reports into the StateValue<Bool>s of
// CablePlatform. The sources' Apple implementations are thin adapters; tests drive these with fake sources.
import Signals

/// Reports the network paths the system sees: `NWPathMonitor` on Apple platforms, a fake in tests.
package protocol NetworkPathSource: Sendable {
    /// Starts monitoring, once; `report` then receives each path, one call at a time, on any one thread.
    func start(reporting report: @escaping @Sendable (NetworkPath) -> Void)
}

/// Reports the app's lifecycle: UIKit's application notifications, a fake in tests.
package protocol LifecycleSource: Sendable {
    /// Starts observing, once; `report` then receives each event, one call at a time, on any one thread.
    func start(reporting report: @escaping @Sendable (LifecycleEvent) -> Void)
}

/// A source where the platform has nothing to report (Linux; the lifecycle on watchOS): its input keeps the rule's
/// initial value, `true`, forever.
package struct NeverReportingSource: NetworkPathSource, LifecycleSource {
    package init() {}
    package func start(reporting report: @escaping @Sendable (NetworkPath) -> Void) {}
    package func start(reporting report: @escaping @Sendable (LifecycleEvent) -> Void) {}
}

/// The network input: one source, started when this is made, and any number of views, one per usability rule.
///
/// Until the source's first answer every view is `true`: a connection is then tried, and fails and is retried
/// with backoff if the network is in fact down, rather than waiting on the monitor.
package final class NetworkAvailability: Sendable {
    /// The source's last answer; nil until the first.
    private let paths: MutableStateValue<NetworkPath?>
    /// The view of the default rule (every path with a route, or one a connection may bring up), made once.
    package let available: StateValue<Bool>

    /// The source's last answer, `nil` until the first: what ``ActionCableClient`` follows to check its connection
    /// when the path changes.
    package var path: StateValue<NetworkPath?> { paths.readOnly }

    package init(source: any NetworkPathSource) {
        let paths = MutableStateValue<NetworkPath?>(nil)
        self.paths = paths
        available = Self.view(of: paths, under: NetworkUsability())
        source.start { path in paths.value = path }
    }

    /// Whether the network is usable under `usability`, kept up to date from the one source.
    package func available(_ usability: NetworkUsability) -> StateValue<Bool> {
        usability == NetworkUsability() ? available : Self.view(of: paths, under: usability)
    }

    /// The rule's value of `path`: `true` before the source has answered.
    package static func isAvailable(_ path: NetworkPath?, under usability: NetworkUsability) -> Bool {
        path.map(usability.isUsable) ?? true
    }

    /// A state that follows `paths` under `usability`. The view keeps the observation of `paths`, which holds the
    /// state, so both live as long as the view or anything observing it, and no longer.
    private static func view(
        of paths: MutableStateValue<NetworkPath?>, under usability: NetworkUsability
    ) -> StateValue<Bool> {
        let state = StateStorage(isAvailable(paths.value, under: usability))
        let observation = paths.observe(buffering: .bufferingNewest(1)) { path in
            state.update { $0 = isAvailable(path, under: usability) }
        }
        return state.view(keeping: observation)
    }
}

/// The foreground input: one source, started when this is made, applied through ``ForegroundRule``.
package final class ForegroundState: Sendable {
    private let state = MutableStateValue(ForegroundRule.initial)

    /// Whether the app counts as in the foreground.
    package var value: StateValue<Bool> { state.readOnly }

    package init(source: any LifecycleSource) {
        source.start { [state] event in
            state.update { $0 = ForegroundRule.isForeground(after: event, wasForeground: $0) }
        }
    }
}
