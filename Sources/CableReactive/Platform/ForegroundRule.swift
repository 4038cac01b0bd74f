// Compiled on every platform: whether the app counts as in the foreground is decided here, from plain values, and
// tested on Linux. The lifecycle adapters (Apple only, ApplicationLifecycleSource.swift) turn notifications into
// events.

/// The state of the app as UIKit reports it (`UIApplication.State`).
package enum ApplicationState: Sendable, Hashable {
    /// In the foreground, receiving events.
    case active
    /// In the foreground, not receiving events: Control Center or Notification Center is over it, a call is coming
    /// in, the app switcher is up, or the app is launching or on its way to the background.
    case inactive
    /// In the background: about to be suspended, or launched for a background task.
    case background
}

/// What the app's lifecycle reported, in plain values: what the adapters make of the system's notifications.
package enum LifecycleEvent: Sendable, Hashable {
    /// `UIApplication.didEnterBackgroundNotification`.
    case enteredBackground
    /// `UIApplication.willEnterForegroundNotification`.
    case enteringForeground
    /// `UIApplication.didBecomeActiveNotification`.
    case becameActive
    /// `UIApplication.willResignActiveNotification`.
    case resigningActive
    /// The app's state, read once the observers are in place, so that events from before they were are not missed,
    /// and whether any scene was connected then (`UIApplication.connectedScenes`; `true` for an app without scenes).
    case stateRead(ApplicationState, scenesConnected: Bool)
}

/// Whether the app counts as in the foreground, for ``CablePlatform/appInForeground``.
///
/// - In the background it does not: the system is about to suspend the app, and the connection with it.
/// - Inactive still counts (Control Center, Notification Center, an incoming call, the app switcher): the app is on
///   screen and comes back in a moment, so dropping the connection would only make a reconnect.
/// - Before the app's state is known, it counts as in the foreground (``initial``), so that a first connect is not
///   held back; an app launched in the background turns it false as soon as its state is read.
/// - A scene-based app (every SwiftUI app) launches in the background state and moves to the foreground as its
///   first scene connects (Apple's `applicationState` docs), so a background state read while no scene is
///   connected is not believed: the value stays as it was until UIKit's notifications say more. The price: an app
///   launched straight into the background (a background fetch, a silent push) with no scene counts as in the
///   foreground until it is next sent to the background.
package enum ForegroundRule {
    /// The value before anything is known.
    package static let initial = true

    /// The value after `event`, from the value before it.
    package static func isForeground(after event: LifecycleEvent, wasForeground: Bool) -> Bool {
        switch event {
        case .enteredBackground: false
        case .enteringForeground, .becameActive: true
        case .resigningActive: wasForeground
        case .stateRead(.background, scenesConnected: false): wasForeground
        case .stateRead(let state, _): state != .background
        }
    }
}
