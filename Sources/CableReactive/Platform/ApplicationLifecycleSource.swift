// Apple platforms only: UIKit's application notifications. What they mean (ForegroundRule) is shared
// code, tested on Linux; these adapters only turn notifications into LifecycleEvents.
//
// The notification names and the application's state belong to the main actor, so the adapter adds its
// observers and read the state in a main-actor task, never from the thread that first read the input. The
// observers then run on the main thread, where the system posts these notifications.
#if canImport(UIKit) && (os(iOS) || os(tvOS) || os(visionOS))
    import Foundation
    import UIKit

    /// UIKit's application notifications behind ``LifecycleSource`` (iOS, iPadOS, tvOS, visionOS, Mac Catalyst).
    ///
    /// Its observers stay registered for the life of the process: ``CablePlatform`` starts one source, once.
    /// Unavailable in app extensions: `UIApplication.shared` is.
    @available(iOSApplicationExtension, unavailable)
    @available(tvOSApplicationExtension, unavailable)
    @available(visionOSApplicationExtension, unavailable)
    @available(macCatalystApplicationExtension, unavailable)
    struct UIApplicationLifecycleSource: LifecycleSource {
        func start(reporting report: @escaping @Sendable (LifecycleEvent) -> Void) {
            // At the main queue's next turn, UIApplicationMain has made the application, so `shared` exists.
            Task { @MainActor in
                let events: [(NSNotification.Name, LifecycleEvent)] = [
                    (UIApplication.didEnterBackgroundNotification, .enteredBackground),
                    (UIApplication.willEnterForegroundNotification, .enteringForeground),
                    (UIApplication.didBecomeActiveNotification, .becameActive),
                    (UIApplication.willResignActiveNotification, .resigningActive),
                ]
                for (name, event) in events {
                    _ = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { _ in
                        report(event)
                    }
                }
                // After the observers: a change from here on is reported, one from before is in the state read.
                let application = UIApplication.shared
                report(
                    .stateRead(Self.state(application.applicationState), scenesConnected: Self.hasScenes(application)))
            }
        }

        /// Whether a scene is connected; `true` for an app that declares no scenes (no `UIApplicationSceneManifest`
        /// in its Info.plist), whose state read is always believed.
        @MainActor private static func hasScenes(_ application: UIApplication) -> Bool {
            !application.connectedScenes.isEmpty
                || Bundle.main.object(forInfoDictionaryKey: "UIApplicationSceneManifest") == nil
        }

        /// Compared with `==`, not switched over: a state added in a later SDK counts as in the foreground.
        private static func state(_ state: UIApplication.State) -> ApplicationState {
            if state == .background { return .background }
            return state == .inactive ? .inactive : .active
        }
    }
#endif
