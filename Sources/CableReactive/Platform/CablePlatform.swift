import Signals

/// Gate inputs the platform already knows: whether the network is usable and whether the app is in the foreground,
/// as ready `StateValue<Bool>`s to combine into ``ActionCableClient``'s `canConnect` gate.
///
/// ```swift
/// let loggedIn = MutableStateValue(false)
/// let canConnect = combineLatest(loggedIn, CablePlatform.networkAvailable, CablePlatform.appInForeground)
///     .map { $0 && $1 && $2 }
/// let client = try ActionCableClient(url: url, canConnect: canConnect)
/// ```
///
/// Each input starts watching the system the first time it is read, once per process, and then lives for the rest
/// of the process; reading it again returns the same state. Nothing is observed until then, so an app that never
/// reads them pays for nothing.
///
/// Threading: values change on the thread the system reports on (the network monitor's own serial queue; the main
/// thread for the app's lifecycle). Observers run there, unless they name a queue (see `Signal`); no lock of the
/// library is held while they run.
///
/// On Linux, and wherever the platform reports nothing, an input is `true` and never changes: a server or a
/// command-line tool has no foreground, and its network failures are retried with backoff.
public enum CablePlatform {
    /// Whether the network is usable: the system's path monitor (`NWPathMonitor`) reports a satisfied path, in Low
    /// Data Mode and on cellular too. See ``networkAvailable(_:)`` to refuse those.
    ///
    /// - `true` until the monitor's first answer (which comes shortly after the first read), so that a first
    ///   connect is not held back: should the network in fact be down, the attempt fails and is retried with
    ///   backoff, and the gate closes when the monitor answers.
    /// - A path that needs a connection to come up (`requiresConnection`, such as a VPN on demand) counts as not
    ///   usable.
    /// - On watchOS the monitor may report a satisfied path while the system still blocks the app's WebSocket
    ///   (Apple's TN3135: only while streaming audio or in a CallKit call); gate on those conditions as well.
    /// - Always `true` on Linux.
    ///
    /// Changes arrive on the monitor's serial queue, one at a time.
    public static var networkAvailable: StateValue<Bool> { network.available }

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
    ///   WebSocket (TN3135: only while it streams audio or is in a CallKit call); gate on those conditions instead.
    /// - Linux: always `true`.
    ///
    /// Until the app's state is read it is `true`. The observers are added, and the state read, on the main thread
    /// at its next turn after the first read (UIKit's state may only be read there, and only once the application
    /// exists), so an app launched in the background sees `true` until then. Changes arrive on the main thread.
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
