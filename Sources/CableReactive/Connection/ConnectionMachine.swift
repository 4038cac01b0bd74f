#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// The connection lifecycle as a pure state machine: events in, actions out. No I/O, locks or clocks.
///
/// Identifiers: every attempt gets a fresh `id`; the transport, its events and the timers carry it, so an
/// event from an attempt that has since been replaced is recognised and ignored.
///
/// Every input has one entry: ``handle(_:now:random:)`` for the events, ``noteFrame(id:now:)`` for inbound
/// traffic (which only moves the stale watchdog's clock, and comes with every read), ``notePing(id:now:)`` for the
/// server's pings (which also measure its ping interval).
///
/// Checks: when something may have killed a live connection without a word (the network path changed, the app
/// came back to the foreground, the process slept), ``Event/check(_:)`` asks for proof of life. The connection has
/// until its next server ping is overdue (the last frame, plus the measured ping interval, plus
/// ``Config/pingGrace``). A session that can be probed (``Probe``) is sent a probe too: a WebSocket ping, which
/// every server must answer, is trusted at once; AnyCable's `{"command":"ping"}` (its welcome has a `sid`) once it
/// has been answered (``Event/probeAnswered(id:)``). A trusted probe leaves ``Config/probeTimeout``. A
/// connection that sends nothing by then is replaced at once, at attempt 0, with no backoff; one that does is kept.
///
/// The network: while the path has no route (``Event/network(usable:mayHaveBroken:)``) no new attempt starts, and
/// a live connection is kept for ``Config/networkLossGrace`` (paths flap during handovers); if the route is back
/// by then the connection is checked, else it is closed and the client waits for the route, then connects at
/// once.
struct ConnectionMachine: Sendable {
    struct Config: Sendable {
        var staleTimeout: TimeInterval
        var backoff: Backoff
        var maxReconnectAttempts: Int?
        /// How long a welcomed session must live to count as healthy (resetting the attempt count).
        var healthyAfter: TimeInterval = 10
        /// How long a probed connection has to send anything before a check fails it.
        var probeTimeout: TimeInterval = 1.5
        /// How late the server's next ping may be before an unprobed connection fails a check.
        var pingGrace: TimeInterval = 1
        /// The server's ping interval until two pings have measured it (Rails and AnyCable: 3 s).
        var pingInterval: TimeInterval = 3
        /// How long a live connection rides out a path with no route before it is closed.
        var networkLossGrace: TimeInterval = 2
        /// A live session's watchdog running this much later than it was due means the process did not run
        /// meanwhile (the device slept, the app was suspended): the connection is checked.
        var wakeThreshold: TimeInterval = 2
    }

    /// How a session's checks may probe it.
    enum Probe: Sendable, Equatable {
        /// Nothing answers (Rails over a transport that cannot ping): the ping rule alone decides.
        case none
        /// A probe may be answered (AnyCable's `{"command":"pong"}`): sent, and trusted once answered.
        case unproven
        /// A probe is always answered (a WebSocket ping: RFC 6455 §5.5.2): its timeout decides from the start.
        case trusted
    }

    /// What made the client check its connection.
    enum CheckTrigger: Sendable, Equatable {
        /// The network path changed in a way that may have broken the connection, or the app said so.
        case network
        /// The app came back to the foreground after being in the background.
        case foreground
        /// The scheduler's clock jumped: the process did not run for a while (sleep, suspension).
        case wake

        var name: StaticString {
            switch self {
            case .network: "network"
            case .foreground: "foreground"
            case .wake: "wake"
            }
        }
    }

    enum Phase: Sendable, Equatable {
        /// Not wanted: initial, or after `disconnect()`.
        case idle
        /// Wanted, but the gate is false or has no value yet, or the network path has no route.
        case gated
        /// `onRequest` is editing the request of attempt `id`.
        case preparing(id: UInt64)
        /// The transport of attempt `id` is connecting, or waiting for the welcome.
        case opening(id: UInt64)
        /// The session of attempt `id` was welcomed at `since`.
        case connected(id: UInt64, since: TimeInterval)
        /// Waiting for the backoff timer `id`.
        case backingOff(id: UInt64)
        /// `onUnauthorized` call `id` is running, for the server's disconnect `reason` (`nil`: an HTTP 401/403).
        case refreshing(id: UInt64, reason: String?)
        case stopped(reason: CableStopReason)
        case closed
    }

    enum TimerKind: Sendable, Hashable {
        case backoff
        case watchdog
        /// A check's deadline.
        case check
        /// The end of ``Config/networkLossGrace``.
        case networkGrace
    }

    enum Event: Sendable, Equatable {
        case connect
        case disconnect
        case close
        case gate(Bool)
        case requestReady(id: UInt64)
        case requestFailed(id: UInt64)
        case transportClosed(
            id: UInt64, unauthorized: Bool, info: WebSocketCloseInfo = .failed(WebSocketError(.abnormalClosure)))
        /// The welcome of attempt `id`, and how its checks may probe it.
        case welcome(id: UInt64, probes: Probe = .none)
        case serverDisconnect(id: UInt64, reason: String?, reconnect: Bool?)
        /// The handshake of attempt `id` chose `actioncable-unsupported`: the server knows none of our protocols.
        case unsupportedProtocol(id: UInt64)
        case timerFired(TimerKind, id: UInt64)
        case unauthorizedAnswered(id: UInt64, refreshed: Bool?)
        /// The network path now has a route (`usable`) or not; `mayHaveBroken`: the change may have killed a
        /// working connection (``NetworkPath/mayHaveBroken(connectionsFrom:)``).
        case network(usable: Bool, mayHaveBroken: Bool)
        /// Something may have killed the live connection without a word: check it.
        case check(CheckTrigger)
        /// Session `id` answered a probe (AnyCable's `{"type":"pong"}`): its checks may probe from now on.
        case probeAnswered(id: UInt64)
    }

    enum Action: Sendable, Equatable {
        /// Run `onRequest` for attempt `id`, then report `requestReady` or `requestFailed`.
        case prepareRequest(id: UInt64)
        /// Open the transport for attempt `id`.
        case openTransport(id: UInt64)
        /// Close the transport of attempt `id`, if it is open.
        case closeTransport(id: UInt64)
        case schedule(TimerKind, id: UInt64, after: TimeInterval)
        case cancelTimer(TimerKind)
        /// Call `onUnauthorized`, then report `unauthorizedAnswered`.
        case callUnauthorized(id: UInt64)
        /// Send a probe on session `id` (a WebSocket ping, AnyCable's `{"command":"ping"}`, or both).
        case probe(id: UInt64)
        /// The session of attempt `id` was welcomed: subscriptions go out on it.
        case sessionStarted(id: UInt64)
        /// The live session ended.
        case sessionEnded
        case publish(CableState)
        /// A session was lost or an attempt failed, for this reason.
        case lost(CableDisconnect)
        /// The client now waits `delay` seconds before attempt `attempt`.
        case waiting(attempt: Int, delay: TimeInterval)
        /// The client no longer waits to retry.
        case notWaiting
        case log(LogEvent)
    }

    let config: Config
    private(set) var phase = Phase.idle
    private(set) var attempt = 0
    private(set) var unauthorizedStreak = 0
    private(set) var gate: Bool?
    private var nextID: UInt64 = 0
    private var lastFrameAt: TimeInterval = 0
    /// How many times ``noteFrame(id:now:)`` found the live session: a check passes when this moved.
    private var frameNotes: UInt64 = 0
    /// The live session's last ping, and the interval its pings measured.
    private var lastPingAt: TimeInterval?
    private var pingInterval: TimeInterval
    /// When the live session's watchdog is due: one that runs much later found the process asleep.
    private var watchdogDue: TimeInterval = 0
    /// How the live session may be probed, and whether a probe's timeout can be trusted (it has answered one).
    private var probe = Probe.none
    private var answersProbes = false
    /// The check in progress on the live session: the ``frameNotes`` when it started.
    private var check: UInt64?
    /// Whether the path has a route. Until the network input says otherwise, it has.
    private(set) var networkUsable = true
    /// Whether a ``TimerKind/networkGrace`` timer is armed.
    private var graceArmed = false
    /// When the current attempt started: its welcome deadline is `staleTimeout` after this.
    private var attemptStartedAt: TimeInterval = 0
    /// Whether `.waiting` was the last of `.waiting` / `.notWaiting` reported.
    private var reportedWaiting = false
    private var actions: [Action] = []

    init(config: Config) {
        self.config = config
        pingInterval = config.pingInterval
    }

    /// The attempt whose transport may be open, if any.
    var transportID: UInt64? {
        switch phase {
        case .opening(let id), .connected(let id, _): id
        case .idle, .gated, .preparing, .backingOff, .refreshing, .stopped, .closed: nil
        }
    }

    /// The welcomed session, if any.
    var sessionID: UInt64? {
        if case .connected(let id, _) = phase { return id }
        return nil
    }

    /// Whether `id` is the welcomed, live session: what ``noteFrame(id:now:)`` checks, without noting an
    /// arrival. The data-frame path checks each message with it and notes its read once, at the read's end,
    /// so that a read of many messages takes the clock once.
    func isLive(_ id: UInt64) -> Bool {
        guard case .connected(let live, _) = phase else { return false }
        return live == id
    }

    /// The one entry for inbound traffic on attempt `id`: any frame but a welcome or a server `disconnect`,
    /// which are events of their own. On the live session it restarts the stale watchdog's silence; before
    /// the welcome it counts for nothing, so pings cannot stretch the handshake deadline. Returns whether `id`
    /// is the live session (the caller drops a replaced one's traffic). No actions: it runs for every read,
    /// and allocates nothing.
    mutating func noteFrame(id: UInt64, now: TimeInterval) -> Bool {
        guard isLive(id) else { return false }
        lastFrameAt = now
        frameNotes &+= 1
        return true
    }

    /// A server ping on attempt `id`: a frame like any other, and a measure of the server's ping interval (the
    /// gap to the previous ping, between 1 s and ``Config/staleTimeout``). Returns whether `id` is the live session.
    mutating func notePing(id: UInt64, now: TimeInterval) -> Bool {
        guard noteFrame(id: id, now: now) else { return false }
        if let last = lastPingAt, now - last >= 1, now - last <= config.staleTimeout { pingInterval = now - last }
        lastPingAt = now
        return true
    }

    mutating func handle(
        _ event: Event,
        now: TimeInterval,
        random: inout some RandomNumberGenerator
    ) -> [Action] {
        actions.removeAll(keepingCapacity: true)
        switch event {
        case .connect: connect(now: now)
        case .disconnect: disconnect()
        case .close: close()
        case .gate(let open): gateChanged(open, now: now, random: &random)
        case .requestReady(let id):
            if case .preparing(id) = phase {
                phase = .opening(id: id)
                actions.append(.openTransport(id: id))
            }
        case .requestFailed(let id):
            if case .preparing(id) = phase {
                emit(.warn, "request_callback_failed", [.attempt(attempt)])
                lost(.requestFailed)
                openFailed(resetStreak: true, now: now, random: &random)
            }
        case .transportClosed(let id, let unauthorized, let info):
            if transportID == id {
                switch info {
                case .closed(let code, _): lost(.closed, closeCode: code)
                case .failed(let error):
                    if let limit = error.kind.limit, error.kind == .messageTooBig(limit: limit) {
                        emit(.warn, "message_too_big", [.limit(limit)])
                        lost(.messageTooBig(limit: limit), error: error)
                    } else {
                        lost(.failed, error: error)
                    }
                }
            }
            transportClosed(id: id, unauthorized: unauthorized, info: info, now: now, random: &random)
        case .welcome(let id, let probe): welcome(id: id, probe: probe, now: now)
        case .serverDisconnect(let id, let reason, let reconnect):
            serverDisconnect(id: id, reason: reason, reconnect: reconnect, now: now, random: &random)
        case .unsupportedProtocol(let id):
            // Retrying cannot help (the Rails JS client also closes for good here). Recorded like every other
            // end of an attempt, so that an app showing `lastDisconnect` sees why this one stopped.
            if transportID == id {
                lost(.unsupportedProtocol)
                stop(reason: .unsupportedProtocol)
            }
        case .timerFired(let kind, let id): timerFired(kind, id: id, now: now, random: &random)
        case .unauthorizedAnswered(let id, let refreshed):
            unauthorizedAnswered(id: id, refreshed: refreshed, now: now, random: &random)
        case .network(let usable, let mayHaveBroken):
            networkChanged(usable: usable, mayHaveBroken: mayHaveBroken, now: now)
        case .check(let trigger):
            checkConnection(trigger, now: now)
        case .probeAnswered(let id):
            if isLive(id) { answersProbes = true }
        }
        return actions
    }

    // MARK: commands

    private mutating func connect(now: TimeInterval) {
        switch phase {
        case .closed:
            emit(.warn, "closed_call", [.operation("connect")])
        case .idle, .stopped:
            attempt = 0
            unauthorizedStreak = 0
            if gate == true {
                startAttempt(now: now)
            } else {
                phase = .gated
                publish(.disconnected)
                if gate == nil { emit(.info, "gate_waiting", []) }
            }
        case .backingOff:
            // "Retry now": the next attempt starts at once, at the same attempt number (it is the same retry,
            // only sooner); the backoff timer is cancelled.
            startAttempt(now: now)
        case .gated, .preparing, .opening, .connected, .refreshing:
            break  // waiting for the gate, or an attempt (or its onUnauthorized call) is in flight
        }
    }

    private mutating func disconnect() {
        if case .closed = phase {
            emit(.warn, "closed_call", [.operation("disconnect")])
            return
        }
        endEverything()
        phase = .idle
        publish(.disconnected)
    }

    private mutating func close() {
        guard phase != .closed else { return }
        endEverything()
        phase = .closed
        publish(.closed)
    }

    private mutating func gateChanged(_ open: Bool, now: TimeInterval, random: inout some RandomNumberGenerator) {
        guard gate != open else { return }
        gate = open
        emit(.debug, "gate", [.flag("open", open)])
        switch phase {
        case .gated:
            if open { startAttempt(now: now) }
        case .preparing, .opening, .refreshing, .backingOff, .connected:
            guard !open else { return }
            // Closing the gate cancels whatever is in flight, and is not a failure: the attempt count stays
            // (and so does what is left of maxReconnectAttempts), except that a healthy session's end resets it
            // as it always does. The reopened gate connects at once.
            if case .connected(_, let since) = phase, now - since >= config.healthyAfter { attempt = 0 }
            unauthorizedStreak = 0
            endEverything()
            phase = .gated
            publish(.disconnected)
        case .idle, .stopped, .closed:
            break
        }
    }

    // MARK: attempts

    /// Starts an attempt, unless the path has no route: the client then waits for one (``Phase/gated``).
    private mutating func startAttempt(now: TimeInterval) {
        guard networkUsable else {
            stopWaiting()
            actions.append(.cancelTimer(.backoff))
            phase = .gated
            publish(.disconnected)
            emit(.info, "network_waiting", [.attempt(attempt)])
            return
        }
        stopWaiting()
        let id = newID()
        phase = .preparing(id: id)
        attemptStartedAt = now
        actions.append(.cancelTimer(.backoff))
        actions.append(.schedule(.watchdog, id: id, after: config.staleTimeout))
        publish(.connecting(attempt: attempt))
        emit(.info, "connecting", [.attempt(attempt)])
        actions.append(.prepareRequest(id: id))
    }

    private mutating func welcome(id: UInt64, probe: Probe, now: TimeInterval) {
        guard case .opening(id) = phase else { return }
        phase = .connected(id: id, since: now)
        lastFrameAt = now
        lastPingAt = nil
        pingInterval = config.pingInterval
        self.probe = probe
        answersProbes = probe == .trusted
        armWatchdog(id: id, after: config.staleTimeout, now: now)
        publish(.connected)
        emit(.info, "connected", [.attempt(attempt)])
        actions.append(.sessionStarted(id: id))
    }

    private mutating func transportClosed(
        id: UInt64,
        unauthorized: Bool,
        info: WebSocketCloseInfo,
        now: TimeInterval,
        random: inout some RandomNumberGenerator
    ) {
        switch phase {
        case .opening(id):
            if unauthorized {
                handleUnauthorized(reason: nil, now: now, random: &random)
            } else if case .failed(let error) = info, error.kind.isPermanent {
                stop(reason: .permanentFailure(error))  // a refused certificate stays refused
            } else {
                openFailed(resetStreak: true, now: now, random: &random)
            }
        case .connected(id, let since):
            sessionLost(since: since, stale: false, resetStreak: false, now: now, random: &random)
        case .idle, .gated, .preparing, .opening, .connected, .backingOff, .refreshing, .stopped, .closed:
            break  // not attempt `id`'s open transport: the late close of a replaced one
        }
    }

    private mutating func serverDisconnect(
        id: UInt64,
        reason: String?,
        reconnect: Bool?,
        now: TimeInterval,
        random: inout some RandomNumberGenerator
    ) {
        guard transportID == id else { return }
        emit(.info, "server_disconnect", [.reason(reason), .flag("reconnect", reconnect == true)])
        lost(.serverDisconnect, serverReason: reason, reconnect: reconnect)
        if reason == "unauthorized" || reason == "token_expired" {
            handleUnauthorized(reason: reason, now: now, random: &random)
        } else if reconnect == true {
            switch phase {
            case .connected(_, let since):
                sessionLost(since: since, stale: false, resetStreak: true, now: now, random: &random)
            case .opening:
                openFailed(resetStreak: true, now: now, random: &random)
            case .idle, .gated, .preparing, .backingOff, .refreshing, .stopped, .closed:
                break  // no transport: ruled out by the `transportID` guard above
            }
        } else {
            stop(reason: .server(reason))
        }
    }

    private mutating func timerFired(
        _ kind: TimerKind,
        id: UInt64,
        now: TimeInterval,
        random: inout some RandomNumberGenerator
    ) {
        switch kind {
        case .backoff: backoffFired(id: id, now: now)
        case .watchdog: watchdogFired(id: id, now: now, random: &random)
        case .check: checkDue(id: id, now: now)
        case .networkGrace: graceEnded(id: id, now: now)
        }
    }

    private mutating func backoffFired(id: UInt64, now: TimeInterval) {
        switch phase {
        case .backingOff(id):
            startAttempt(now: now)
        case .idle, .gated, .preparing, .opening, .connected, .backingOff, .refreshing, .stopped, .closed:
            break  // a replaced backoff's timer, fired before its cancellation took effect
        }
    }

    private mutating func watchdogFired(id: UInt64, now: TimeInterval, random: inout some RandomNumberGenerator) {
        switch phase {
        case .connected(id, let since):
            let silence = now - lastFrameAt
            // A millisecond of slack: a remainder below the clock's resolution would re-arm the watchdog for
            // the same instant forever.
            if silence >= config.staleTimeout - 0.001 {
                emit(.warn, "stale", [.attempt(attempt)])
                lost(.stale)
                sessionLost(since: since, stale: true, resetStreak: false, now: now, random: &random)
            } else {
                let late = now - watchdogDue
                armWatchdog(id: id, after: config.staleTimeout - silence, now: now)
                // Frames read at the wake (what the kernel kept) are no proof that the connection lived through it.
                if late >= config.wakeThreshold { checkConnection(.wake, now: now) }
            }
        case .preparing(id), .opening(id):
            // A timer may fire early (a wall-clock deadline after the clock was set forward): only the
            // scheduler's clock says whether the attempt's time is up.
            let waited = now - attemptStartedAt
            guard waited >= config.staleTimeout - 0.001 else {
                actions.append(.schedule(.watchdog, id: id, after: config.staleTimeout - waited))
                return
            }
            emit(.warn, "handshake_timeout", [.attempt(attempt)])
            lost(.welcomeTimeout)
            openFailed(resetStreak: true, now: now, random: &random)
        case .refreshing(id, _):
            emit(.warn, "unauthorized_callback_failed", [.attempt(attempt)])
            openFailed(resetStreak: false, now: now, random: &random)
        case .idle, .gated, .preparing, .opening, .connected, .backingOff, .refreshing, .stopped, .closed:
            break  // a replaced attempt's (or onUnauthorized call's) watchdog, fired before its cancellation
        }
    }

    // MARK: checks and the network

    private mutating func checkConnection(_ trigger: CheckTrigger, now: TimeInterval) {
        guard case .connected(let id, _) = phase else { return }  // anything else is already on its way
        // One check at a time; one that has already passed (a frame came) gives way to the new one.
        if let check, check == frameNotes { return }
        emit(.info, "check", [.trigger(trigger.name), .attempt(attempt)])
        // A live connection's next ping is overdue then.
        let overdue = lastFrameAt + pingInterval + config.pingGrace
        guard overdue > now else { return checkFailed(now: now) }
        check = frameNotes
        var deadline = overdue
        // Until the server has answered a probe, its silence is no proof (an AnyCable without `ping`): the probe
        // goes out, and the ping rule decides.
        if probe != .none { actions.append(.probe(id: id)) }
        if answersProbes { deadline = min(deadline, now + config.probeTimeout) }
        actions.append(.schedule(.check, id: id, after: deadline - now))
    }

    private mutating func checkDue(id: UInt64, now: TimeInterval) {
        guard isLive(id), let started = check else { return }  // a replaced session's check
        check = nil
        if frameNotes != started {
            emit(.debug, "check_passed", [.attempt(attempt)])
        } else {
            checkFailed(now: now)
        }
    }

    /// The live connection failed a check: it is replaced at once, at attempt 0 (it was working until the event
    /// that made the client check; nothing says the server is at fault).
    private mutating func checkFailed(now: TimeInterval) {
        emit(.warn, "check_failed", [.attempt(attempt)])
        lost(.checkFailed)
        endAttempt()
        attempt = 0
        unauthorizedStreak = 0
        startAttempt(now: now)
    }

    private mutating func networkChanged(usable: Bool, mayHaveBroken: Bool, now: TimeInterval) {
        let wasUsable = networkUsable
        networkUsable = usable
        switch (wasUsable, usable) {
        case (true, false):
            emit(.info, "network_lost", [])
            // Paths flap in handovers: a live connection rides it out for a while. An attempt in flight goes on
            // (it fails by itself if the network is gone); the next one waits for a route.
            if case .connected(let id, _) = phase {
                graceArmed = true
                actions.append(.schedule(.networkGrace, id: id, after: config.networkLossGrace))
            }
        case (false, true):
            emit(.info, "network_back", [])
            stopGrace()
            switch phase {
            case .gated where gate == true, .backingOff:
                startAttempt(now: now)  // waiting for the route, or for a retry the route's return makes pointless
            case .connected:
                checkConnection(.network, now: now)  // it lived through a brief loss, or seems to
            case .idle, .gated, .preparing, .opening, .refreshing, .stopped, .closed:
                break
            }
        case (true, true):
            if mayHaveBroken { checkConnection(.network, now: now) }
        case (false, false):
            break
        }
    }

    /// The path had no route for all of ``Config/networkLossGrace``: the live connection is closed, and the
    /// client waits for a route. Not a failure, as a closed gate is not: nothing is recorded.
    private mutating func graceEnded(id: UInt64, now: TimeInterval) {
        guard graceArmed, case .connected(id, let since) = phase else { return }
        graceArmed = false
        if now - since >= config.healthyAfter { attempt = 0 }
        unauthorizedStreak = 0
        endEverything()
        phase = .gated
        publish(.disconnected)
        emit(.info, "network_waiting", [.attempt(attempt)])
    }

    // MARK: failures

    /// An attempt failed before its welcome (or a session failed early): count it and back off, or stop.
    private mutating func openFailed(resetStreak: Bool, now: TimeInterval, random: inout some RandomNumberGenerator) {
        endAttempt()
        if resetStreak { unauthorizedStreak = 0 }
        attempt += 1
        if let limit = config.maxReconnectAttempts, attempt > limit {
            stop(reason: .attemptsExhausted)
            return
        }
        scheduleRetry(after: config.backoff.delay(afterFailures: attempt, using: &random), now: now)
    }

    private mutating func sessionLost(
        since: TimeInterval,
        stale: Bool,
        resetStreak: Bool,
        now: TimeInterval,
        random: inout some RandomNumberGenerator
    ) {
        guard now - since >= config.healthyAfter else {
            openFailed(resetStreak: resetStreak, now: now, random: &random)
            return
        }
        // A healthy session's loss starts over: attempt 0, soon, spread so a server's clients come back apart.
        endAttempt()
        attempt = 0
        unauthorizedStreak = 0
        if stale {
            startAttempt(now: now)
        } else {
            scheduleRetry(after: config.backoff.herdDelay(using: &random), now: now)
        }
    }

    private mutating func scheduleRetry(after delay: TimeInterval, now: TimeInterval) {
        let id = newID()
        phase = .backingOff(id: id)
        publish(.connecting(attempt: attempt))
        reportedWaiting = true
        actions.append(.waiting(attempt: attempt, delay: delay))
        emit(.info, "backoff", [.attempt(attempt), .delay(delay)])
        actions.append(.schedule(.backoff, id: id, after: delay))
    }

    private mutating func handleUnauthorized(
        reason: String?, now: TimeInterval, random: inout some RandomNumberGenerator
    ) {
        endAttempt()
        if unauthorizedStreak >= 1 {
            stop(reason: .unauthorized(serverReason: reason))
            return
        }
        unauthorizedStreak += 1
        let id = newID()
        phase = .refreshing(id: id, reason: reason)
        publish(.connecting(attempt: attempt))
        actions.append(.schedule(.watchdog, id: id, after: config.staleTimeout))
        actions.append(.callUnauthorized(id: id))
    }

    private mutating func unauthorizedAnswered(
        id: UInt64,
        refreshed: Bool?,
        now: TimeInterval,
        random: inout some RandomNumberGenerator
    ) {
        guard case .refreshing(id, let reason) = phase else { return }
        actions.append(.cancelTimer(.watchdog))
        switch refreshed {
        case true?:
            // Fresh credentials: reconnect at once, at the same attempt; it does not count as a failure.
            startAttempt(now: now)
        case false?:
            stop(reason: .unauthorized(serverReason: reason))
        case nil:
            emit(.warn, "unauthorized_callback_failed", [.attempt(attempt)])
            openFailed(resetStreak: false, now: now, random: &random)
        }
    }

    /// A final stop: logged at WARN with its kind (never the server's text), so an app that forwards
    /// warnings to a crash reporter sees the client give up.
    private mutating func stop(reason: CableStopReason) {
        endEverything()
        phase = .stopped(reason: reason)
        emit(.warn, "stopped", [.stopKind(reason.kind)])
        publish(.stopped(reason: reason))
    }

    // MARK: helpers

    /// Ends the current attempt: closes its transport and ends its session, keeps the timers' slots clean.
    private mutating func endAttempt() {
        if let id = transportID { actions.append(.closeTransport(id: id)) }
        if sessionID != nil { actions.append(.sessionEnded) }
        actions.append(.cancelTimer(.watchdog))
        if check != nil {
            check = nil
            actions.append(.cancelTimer(.check))
        }
        stopGrace()
    }

    private mutating func stopGrace() {
        guard graceArmed else { return }
        graceArmed = false
        actions.append(.cancelTimer(.networkGrace))
    }

    /// Arms the live session's watchdog and remembers when it is due.
    private mutating func armWatchdog(id: UInt64, after delay: TimeInterval, now: TimeInterval) {
        watchdogDue = now + delay
        actions.append(.schedule(.watchdog, id: id, after: delay))
    }

    private mutating func endEverything() {
        endAttempt()
        actions.append(.cancelTimer(.backoff))
        stopWaiting()
    }

    /// Reports that the client no longer waits to retry, if it did.
    private mutating func stopWaiting() {
        guard reportedWaiting else { return }
        reportedWaiting = false
        actions.append(.notWaiting)
    }

    private mutating func newID() -> UInt64 {
        nextID += 1
        return nextID
    }

    /// Reports why the current attempt or session ended (before the phase changes).
    private mutating func lost(
        _ kind: CableDisconnect.Kind, serverReason: String? = nil, reconnect: Bool? = nil,
        closeCode: WebSocketCloseCode? = nil, error: WebSocketError? = nil
    ) {
        actions.append(
            .lost(
                CableDisconnect(
                    kind: kind, attempt: attempt, wasConnected: sessionID != nil, serverReason: serverReason,
                    reconnect: reconnect, closeCode: closeCode, error: error)))
    }

    private mutating func publish(_ state: CableState) {
        actions.append(.publish(state))
    }

    private mutating func emit(_ level: CableLogLevel, _ name: StaticString, _ fields: [LogField]) {
        actions.append(.log(LogEvent(level: level, name: name, fields: fields)))
    }
}
