import Signals

/// What the platform already knows: the network path and whether the app is in the foreground, as ready
/// `StateValue`s for ``ActionCableClient``'s `canConnect` gate and its `network` and `foreground` inputs.
///
/// ```swift
/// let loggedIn = MutableStateValue(false)
/// let canConnect = combineLatest(loggedIn, CablePlatform.appInForeground).map { $0 && $1 }
/// let client = try ActionCableClient(url: url, canConnect: canConnect)  // follows CablePlatform.networkPath
/// ```
///
/// Each input starts watching the system the first time it is read, once per process, and then lives for the rest
/// of the process; reading it again returns the same state. The network monitor starts with the first client that
/// follows ``networkPath`` (the default); the lifecycle is observed only once ``appInForeground`` is read.
///
/// Threading: values change on the thread the system reports on (the network monitor's own serial queue; the main
/// thread for the app's lifecycle). Observers run there, unless they name a queue (see `Signal`); no lock of the
/// library is held while they run.
///
/// On Linux, and wherever the platform reports nothing, an input is `true` (``networkPath`` `nil`) and never
/// changes: a server or a command-line tool has no foreground, and its network failures are retried with backoff.
public enum CablePlatform {
    /// Whether the network is usable: the system's path monitor (`NWPathMonitor`) reports a route, in Low Data
    /// Mode and on cellular too. See ``networkAvailable(_:)`` to refuse those.
    ///
    /// The client already follows the network itself (its `network` parameter, ``networkPath`` by default): it
    /// holds back attempts while there is no route, lets a live connection ride out a brief loss, and checks the
    /// connection when the path changes. Put this in `canConnect` for a policy of your own (Wi-Fi only, through
    /// ``networkAvailable(_:)``), or on watchOS (below).
    ///
    /// - `true` until the monitor's first answer (which comes shortly after the first read), so that a first
    ///   connect is not held back: should the network in fact be down, the attempt fails and is retried with
    ///   backoff, and the gate closes when the monitor answers.
    /// - A path that needs a connection to come up (`requiresConnection`: a VPN on demand, an idle cellular
    ///   context) counts as usable: only an attempt can bring it up.
    /// - On watchOS 9 and later, the system blocks an ordinary app's WebSocket (Apple's TN3135: it allows one
    ///   only while the app streams audio or is in a CallKit call), and the monitor then stays unsatisfied. So
    ///   this is `false` exactly when a connection cannot work there: on watchOS, gate on it
    ///   (`canConnect: CablePlatform.networkAvailable`), or attempts fail with ``WebSocketError`` `-1009`
    ///   (not connected to the internet) and are retried with backoff for as long as the client is wanted.
    /// - Always `true` on Linux.
    ///
    /// Changes arrive on the monitor's serial queue, one at a time.
    public static var networkAvailable: StateValue<Bool> { network.available }

    /// The path the system's monitor reports (`NWPathMonitor`): its status and interfaces; `nil` until the
    /// monitor's first answer, and always on Linux (nothing reports there: pass your own ``NetworkPath`` state
    /// to the client, or call ``ActionCableClient/networkChanged()``).
    ///
    /// Every ``ActionCableClient`` follows it unless given another `network`:
    ///
    /// ```swift
    /// let watch = CablePlatform.networkPath.observe(on: .main) { path in print(path.map(String.init(describing:)) ?? "unknown") }
    /// ```
    ///
    /// Changes arrive on the monitor's serial queue, one at a time.
    public static var networkPath: StateValue<NetworkPath?> { network.path }

    /// Whether the network is usable under `usability`: the same monitor as `networkAvailable`, another rule.
    ///
    /// ```swift
    /// let wifiOnly = NetworkUsability(allowsConstrained: false, allowsExpensive: false)
    /// let canConnect = combineLatest(loggedIn, CablePlatform.networkAvailable(wifiOnly)).map { $0 && $1 }
    /// ```
    ///
    /// The default rule returns `networkAvailable` itself; any other returns a new state, kept up to date for as
    /// long as it, or an observation of it, is kept.
    public static func networkAvailable(_ usability: NetworkUsability) -> StateValue<Bool> {
        network.available(usability)
    }

    /// Whether the app is in the foreground.
    ///
    /// - iOS, iPadOS, tvOS, visionOS, Mac Catalyst (UIKit's application notifications): `false` in the background,
    ///   `true` from `willEnterForeground` on; inactive still counts (Control Center, Notification Center, an
    ///   incoming call, the app switcher), since the app is on screen and back in a moment. Not available in app
    ///   extensions, which have no application lifecycle to observe.
    /// - macOS: always `true`. A Mac app keeps running, and may keep its connection, behind other windows and when
    ///   hidden; and a command-line tool or server using the library should not load AppKit to find out.
    /// - watchOS: always `true`. Whether a watch app is frontmost says nothing about whether it may keep a
    ///   WebSocket (TN3135: only while it streams audio or is in a CallKit call); gate on ``networkAvailable``,
    ///   which is `false` outside those.
    /// - Linux: always `true`.
    ///
    /// Until the app's state is read it is `true`. The observers are added, and the state read, on the main thread
    /// at its next turn after the first read (UIKit's state may only be read there, and only once the application
    /// exists), so an app launched in the background sees `true` until then. A scene-based app (every SwiftUI
    /// app) reads as in the background until its first scene connects, so a background state read before any
    /// scene is connected is not believed: the notifications that follow decide (no false `false` at launch).
    /// Changes arrive on the main thread.
    ///
    /// Code that reads it must be unavailable in app extensions too, as this is. In an app target that is
    /// automatic; in a Swift package (a feature module of the app), mark the function that reads it:
    ///
    /// ```swift
    /// @available(iOSApplicationExtension, unavailable)
    /// @available(tvOSApplicationExtension, unavailable)
    /// @available(visionOSApplicationExtension, unavailable)
    /// @available(macCatalystApplicationExtension, unavailable)
    /// func makeGate(loggedIn: StateValue<Bool>) -> some Signal<Bool> {
    ///     combineLatest(loggedIn, CablePlatform.appInForeground).map { $0 && $1 }
    /// }
    /// ```
    @available(iOSApplicationExtension, unavailable, message: "an app extension has no application lifecycle")
    @available(tvOSApplicationExtension, unavailable, message: "an app extension has no application lifecycle")
    @available(visionOSApplicationExtension, unavailable, message: "an app extension has no application lifecycle")
    @available(macCatalystApplicationExtension, unavailable, message: "an app extension has no application lifecycle")
    public static var appInForeground: StateValue<Bool> { Foreground.state.value }

    /// Made, and its monitor started, on the first read (a static's initializer runs once, on first use).
    private static let network = NetworkAvailability(source: pathSource())

    private static func pathSource() -> any NetworkPathSource {
        #if canImport(Network)
            NetworkPathMonitorSource()
        #else
            NeverReportingSource()
        #endif
    }
}

/// The foreground input, made on the first read of ``CablePlatform/appInForeground``. Unavailable in extensions,
/// as the UIKit adapter it starts is (it reads `UIApplication.shared`).
@available(iOSApplicationExtension, unavailable)
@available(tvOSApplicationExtension, unavailable)
@available(visionOSApplicationExtension, unavailable)
@available(macCatalystApplicationExtension, unavailable)
private enum Foreground {
    static let state = ForegroundState(source: lifecycleSource())

    private static func lifecycleSource() -> any LifecycleSource {
        #if os(iOS) || os(tvOS) || os(visionOS)
            UIApplicationLifecycleSource()
        #else
            NeverReportingSource()
        #endif
    }
}
