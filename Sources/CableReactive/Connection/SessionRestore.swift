/// AnyCable session recovery as a pure value: the `sid` to present on the next attempt, whether an attempt
/// speaks the extended protocol, and what its welcome said was restored (../shared/docs/ANYCABLE-EXT.md,
/// rules 9 and 13). No I/O, locks or clocks; events in through ``handle(_:)``, queries out.
///
/// Attempt ids are ``ConnectionMachine``'s. Only the attempt started last counts: an event for an earlier
/// one comes from a transport that has since been replaced, and is ignored.
///
/// The `sid` is a credential: AnyCable restores a session before it authenticates (rule 9.3), so whoever
/// presents it gets that session's identifiers and subscriptions. It is never logged, and this value's
/// mirror (so its printed form) leaves it out.
struct SessionRestore: Sendable {
    enum Event: Sendable, Equatable {
        /// Attempt `id` starts: its request, with ``sessionIDToPresent``, is prepared next. What the previous
        /// attempt chose or was told no longer counts; its `sid` stays, to be presented.
        case attemptStarted(id: UInt64)
        /// The handshake of attempt `id` chose the extended protocol (`actioncable-v1-ext-json`), which the
        /// client offered. Only such a session can be restored later (rule 9.1).
        case extendedHandshake(id: UInt64)
        /// The welcome of attempt `id`, with its `sid` and what it says was restored. An extended session's
        /// `sid` is kept for the next attempt; a plain session is not cached by the server (rule 13.1), so
        /// its welcome forgets the `sid`, and claims of a restore on it are not believed. Only a welcome read
        /// from an open transport: a closed attempt stays the one started last until the next starts, so the
        /// caller drops what its transport delivers after closing (``ConnectionMachine/transportID``).
        case welcome(id: UInt64, sessionID: String?, restored: ServerFrame.Restored?)
        /// The server sent a `disconnect` frame, on any attempt: the next attempt starts a fresh session, as
        /// the AnyCable JS client does (rule 9.9; the server would still restore it).
        case serverDisconnect
        /// The credentials are being refreshed (`onUnauthorized`, after an unauthorized answer): a session
        /// opened with the old credentials must not be restored under the new ones.
        case credentialsRefresh
        /// The app called `disconnect()`: it ended the session, so the next `connect()` starts a fresh one.
        case appDisconnect
    }

    /// The attempt started last.
    private var attempt: UInt64?
    /// Whether the handshake of `attempt` chose the extended protocol.
    private var extended = false
    /// What the welcome of `attempt` said was restored, until its session starts.
    private var restored: ServerFrame.Restored?
    /// The `sid` to present on the next request (`X-AnyCable-Restore-SID`), if any. Never logged.
    private(set) var sessionIDToPresent: String?
    /// The `sid` the welcome of `attempt` gave, on any protocol (what the app may pass on for AnyCable's
    /// `exclude_socket`). Never logged.
    private(set) var sessionID: String?

    mutating func handle(_ event: Event) {
        switch event {
        case .attemptStarted(let id):
            attempt = id
            extended = false
            restored = nil
            sessionID = nil
        case .extendedHandshake(let id):
            guard id == attempt else { return }
            extended = true
        case .welcome(let id, let sessionID, let restored):
            guard id == attempt else { return }
            sessionIDToPresent = extended ? sessionID : nil
            self.sessionID = sessionID
            self.restored = extended ? restored : nil
        case .serverDisconnect, .credentialsRefresh, .appDisconnect:
            sessionIDToPresent = nil
        }
    }

    /// Whether attempt `id` speaks the extended protocol: it answers pings with pongs (AnyCable's
    /// `pong_timeout`, rule 10.4) and can replay streams.
    func isExtended(_ id: UInt64) -> Bool {
        extended && id == attempt
    }

    /// What the welcome of session `id` said was restored, once: its session starts with it. Nil for a
    /// welcome that restored nothing, and for a session other than the attempt started last; asking for
    /// such a one leaves the answer in place for its own session.
    mutating func takeRestored(forSession id: UInt64) -> ServerFrame.Restored? {
        guard id == attempt else { return nil }
        defer { restored = nil }
        return restored
    }
}

extension SessionRestore: CustomReflectable {
    /// Everything but the `sid`, which only shows as present or not: `print`, `dump` and string
    /// interpolation all go through this mirror.
    var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "attempt": attempt as Any, "extended": extended, "hasSessionID": sessionIDToPresent != nil,
                "hasWelcomeSessionID": sessionID != nil,
                "restored": restored as Any,
            ], displayStyle: .struct)
    }
}
