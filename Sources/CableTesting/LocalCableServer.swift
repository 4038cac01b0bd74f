import CableReactive
import Foundation
import Signals

/// An Action Cable server in your test process: a real WebSocket endpoint on a loopback port that speaks the
/// Rails protocol, with rules, handlers, faults and everything it saw published for assertions.
///
/// ```swift
/// let server = try LocalCableServer()                      // ws://127.0.0.1:<free port>/cable
/// server.subscriptionRule = { params, _ in params["channel"] == "Secret" ? .reject : .confirm }
/// server.onPerform("speak") { call in call.broadcast(["text": call.data["text"] ?? nil]) }
///
/// var options = CableOptions()
/// options.staleTimeout = 0.5
/// let client = try ActionCableClient(url: server.url, options: options)
/// let room = try client.subscribe(["channel": "ChatChannel", "room": "lobby"])
/// client.connect()
/// _ = await room.state.first(within: 5) { $0 == .subscribed(confirmations: 1) }
/// room.perform("speak", ["text": "hi"])                     // comes back to every subscriber of the room
/// server.disconnect(reason: "server_restart", reconnect: true)
/// ```
///
/// ## Protocol
///
/// - **Upgrade** (RFC 6455 §4.2): `GET` on ``Options/path`` with `Upgrade: websocket`, `Connection: upgrade`,
///   `Sec-WebSocket-Version: 13` and a 16-byte `Sec-WebSocket-Key` gets `101` with `Sec-WebSocket-Accept`, and the
///   first subprotocol the client offers that ``Options/subprotocols`` knows (none, and no header, if nothing
///   matches: the upgrade still succeeds, as in Rails). Not an upgrade, or another path: `404 Page not found`.
///   A bad version or key: `400`. A head over ``Options/maxRequestHeadSize``: `431`. Then ``connectionRule``
///   decides: accept, reject with any status, or upgrade and disconnect (``ConnectionDecision/unauthorized``).
/// - **Welcome** `{"type":"welcome"}` (plus `"sid"` with ``Options/includesSessionID``), when the
///   ``WelcomePolicy`` says. Commands sent before it are held and run after it, as Rails does.
/// - **Pings** `{"type":"ping","message":<unix seconds>}` every ``Options/pingInterval`` to welcomed connections.
/// - **ping** `{"command":"ping"}` is answered with `{"type":"pong"}`, as AnyCable does, when the server acts as
///   AnyCable (``Options/includesSessionID``, or the extended protocol was chosen); otherwise it is ignored, as
///   Rails does.
/// - **subscribe**: an identifier that is not a JSON object, or one already confirmed on the connection, is
///   ignored; otherwise ``subscriptionRule`` decides, and `confirm_subscription` / `reject_subscription` carry
///   the identifier string exactly as the client sent it. **unsubscribe** forgets it, with no answer.
/// - **message** (perform) on a confirmed identifier runs the ``PerformHandler`` registered for
///   `data["action"]` (`receive` when absent); unknown actions are ignored. Data frames are
///   `{"identifier":…,"message":…}`, sent by ``PerformCall/reply(_:)`` and by broadcasts.
/// - **Disconnects**: `{"type":"disconnect","reason":…,"reconnect":…}`, then a close frame with 1000; the socket
///   closes when the client answers, or after ``Options/closeTimeout``.
/// - **AnyCable** (opt-in): ``Options/reliableStreams`` adds stream positions, `history` and resumable sessions
///   (`actioncable-v1-ext-json`); ``Options/pubSub`` adds `$pubsub` signed and public streams, Turbo Streams,
///   ``broadcast(_:toStream:)``, `whisper` and presence (`join`, `leave`, `presence`), per ``PubSub``.
/// - **WebSocket**: client frames must be masked; pings are answered with pongs; a client close is echoed with
///   its code; fragmented text messages are joined. Server frames are unmasked, final and unfragmented.
///
/// ## Bad input
///
/// Nothing a client sends can crash the server or grow a buffer past its limit (every limit is in ``Options``).
/// A malformed request head gets `400`. A framing violation gets a close frame with its code — 1002 (protocol
/// error, for example an unmasked frame), 1003 (a binary message, which Rails instead ignores), 1007 (invalid
/// UTF-8), 1009 (over ``Options/maxMessageSize``), 1008 (over ``Options/maxBufferedCommands`` held before the
/// welcome) — and the socket closes as soon as that is written, without waiting for an answer. A connection that
/// lets more than ``Options/maxOutboundBytes`` pile up unread is dropped. Bad JSON, unknown commands, unknown
/// identifiers and unknown actions in well-formed text messages are recorded in ``Snapshot/commands`` and
/// otherwise ignored, as Rails does.
///
/// ## Faults
///
/// - ``drop(_:)``: close the TCP socket without a close frame (the client sees 1006 and reconnects).
/// - ``stall(_:)``: stop reading and writing, keep the socket open (a black hole; the client's stale timeout
///   must notice). A stalled socket stays open until ``drop(_:)`` or ``stop()``.
/// - ``throttleReading(_:bytesPerSecond:)``: read a connection at most that many bytes a second (a slow
///   uplink): what the client sends backs up on its side while pings and broadcasts still reach it.
/// - ``refuseConnections()``: close the listening socket, so new connections are refused at the TCP level
///   (`ECONNREFUSED`), as when no server runs; open connections stay. ``acceptConnections()`` listens again on
///   the same port.
/// - ``welcome`` `= .after(seconds)` or `.never`: a slow or missing welcome; ``sendWelcome(_:)`` sends it.
/// - ``Options/identifierSpelling``: write identifiers back in another JSON spelling, like a server that parses
///   and re-encodes them.
///
/// ## Observing and waiting
///
/// ``connectionCount`` and ``snapshot`` are Signals `StateValue`s, written by the server thread after each
/// change: wait on them with deadlines instead of sleeping, for example
/// `await server.connectionCount.first(within: 5) { $0 == 2 }` or ``wait(timeout:until:)``. The snapshot holds
/// the open connections with their requests and confirmed subscriptions, the requests seen (path, query,
/// headers, the status answered) and the commands received.
///
/// ## Threading
///
/// One server thread runs a `poll` loop over the listener, a wake pipe and every socket (POSIX, non-blocking,
/// no Foundation networking). Rules, handlers and `StateValue` observers without a queue run on that thread:
/// keep them short and do not block. Control methods (``broadcast(_:to:)``, ``disconnect(_:reason:reconnect:)``,
/// the faults, ``stop()``…) may be called from any thread; from another thread they return once the server
/// thread has applied them and published the result, and from the server thread itself (inside a rule or
/// handler) they are queued and applied right after the callback returns. Everything applies in call order.
///
/// ## Lifetime
///
/// The server runs until ``stop()`` or until it is released (`deinit` stops it); either closes every socket and
/// the listener and ends the thread before returning, so nothing leaks. The server thread does not keep the
/// server object alive, but a rule or handler that captures the server strongly does: capture it weakly, or use
/// the ``PerformCall``'s own methods.
///
/// ## Differences from Rails
///
/// One process, one thread, no channel classes: commands are handled in order (Rails may reorder them), binary
/// messages close the connection with 1003, stopping the server closes sockets without close frames (like a
/// killed puma), and `.ignore` forgets the identifier (Rails keeps a failed subscription and ignores retries).
public final class LocalCableServer: Sendable {
    let core: ServerCore

    /// The port the server listens on (the one the system picked when ``Options/port`` was 0).
    public let port: UInt16
    /// `ws://127.0.0.1:<port><path>`, e.g. `ws://127.0.0.1:50123/cable`.
    public let url: URL

    /// Starts a server on 127.0.0.1 and its thread; it accepts connections when this returns.
    ///
    /// - Parameter options: see ``Options``; the defaults give a Rails-like server on a free port.
    /// - Throws: ``LocalCableServerError``: an invalid option, or a socket that could not be bound
    ///   (``LocalCableServerError/Kind/bind`` with `EADDRINUSE` for a taken port).
    public init(options: Options = Options()) throws(LocalCableServerError) {
        try options.validate()
        let (listener, port) = try Socket.listen(port: options.port)
        let pipe: (read: Int32, write: Int32)
        do {
            pipe = try Socket.pipe()
        } catch {
            Socket.close(listener)
            throw error
        }
        guard let url = URL(string: "ws://127.0.0.1:\(port)\(options.path)") else {
            Socket.close(listener)
            Socket.close(pipe.read)
            Socket.close(pipe.write)
            throw LocalCableServerError(.invalidOption, detail: "path")
        }
        let core = ServerCore(options: options, port: port, wakeWrite: pipe.write)
        self.core = core
        self.port = port
        self.url = url
        core.running.enter()
        let started = DispatchSemaphore(value: 0)
        let thread = Thread {
            // Named for debuggers and /proc/self/task/*/comm (15 characters at most there). On Linux, Foundation
            // names the OS thread only once `start()` has recorded it, hence the wait.
            started.wait()
            Thread.current.name = "LCServer:\(port)"
            ServerLoop(core: core, listener: listener, wakeRead: pipe.read).run()
            core.running.leave()
        }
        thread.start()
        started.signal()
    }

    /// Starts a server with the default ``Options`` on `port` (0 = any free port).
    public convenience init(port: UInt16) throws(LocalCableServerError) {
        var options = Options()
        options.port = port
        try self.init(options: options)
    }

    deinit { core.stop() }

    /// ``url`` with `query` appended after `?` (characters not allowed in a query are percent-encoded), e.g.
    /// `server.url(query: "token=tok-alice")`.
    public func url(query: String) -> URL {
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed) ?? ""
        return URL(string: url.absoluteString + "?" + encoded) ?? url
    }

    // MARK: Observing

    /// The number of open WebSocket connections (upgraded, socket not closed, stalled ones included). Written
    /// by the server thread; observers without a queue run there.
    public var connectionCount: StateValue<Int> { core.connectionCount.readOnly }

    /// Everything the server has seen; see ``Snapshot``. Written by the server thread after each turn of its loop
    /// that changed something; observers without a queue run there.
    public var snapshot: StateValue<Snapshot> { core.snapshot.readOnly }

    /// The requests seen so far (a shortcut for `snapshot.value.requests`).
    public var requests: [Request] { snapshot.value.requests }

    /// The commands received so far (a shortcut for `snapshot.value.commands`).
    public var commands: [ReceivedCommand] { snapshot.value.commands }

    /// The open connections (a shortcut for `snapshot.value.connections`).
    public var connections: [ConnectionInfo] { snapshot.value.connections }

    /// Waits until `predicate` holds for the ``snapshot`` or `timeout` seconds pass; `predicate` runs on the
    /// server thread (or here, for the current value).
    ///
    /// ```swift
    /// #expect(await server.wait { $0.commands.contains { $0.action == "speak" } })
    /// ```
    ///
    /// - Returns: whether it held in time.
    public func wait(timeout: TimeInterval = 5, until predicate: @escaping @Sendable (Snapshot) -> Bool) async -> Bool {
        await snapshot.first(within: timeout, where: predicate) != nil
    }

    // MARK: Rules and handlers

    /// When connections upgraded from now on are welcomed. Starts as ``Options/welcome``.
    public var welcome: WelcomePolicy {
        get { core.rules.withLock { $0.welcome } }
        set { core.rules.withLock { $0.welcome = newValue } }
    }

    /// Decides every upgrade request on the mount path (default: accept all). The request's
    /// ``Request/status`` is 0 while it decides. Runs on the server thread.
    ///
    /// ```swift
    /// server.connectionRule = { request in
    ///     request.queryValue("token") == "tok-alice" ? .accept : .unauthorized
    /// }
    /// ```
    public var connectionRule: ConnectionRule {
        get { core.rules.withLock { $0.connectionRule } }
        set { core.rules.withLock { $0.connectionRule = newValue } }
    }

    /// Decides every new `subscribe` (default: confirm all). Runs on the server thread.
    ///
    /// ```swift
    /// server.subscriptionRule = { params, request in
    ///     params["channel"] == "RejectChannel" ? .reject : .confirm
    /// }
    /// ```
    public var subscriptionRule: SubscriptionRule {
        get { core.rules.withLock { $0.subscriptionRule } }
        set { core.rules.withLock { $0.subscriptionRule = newValue } }
    }

    /// Registers `handler` for `action` (replacing any earlier one); it runs on the server thread for every
    /// `perform` of that action on a confirmed subscription. Use `receive` for data without an action.
    ///
    /// ```swift
    /// server.onPerform("echo") { call in call.reply(call.data) }
    /// ```
    public func onPerform(_ action: String, _ handler: @escaping PerformHandler) {
        core.rules.withLock { $0.handlers[action] = handler }
    }

    /// Removes the handler for `action`; performs of it are then ignored.
    public func removePerformHandler(for action: String) {
        _ = core.rules.withLock { $0.handlers.removeValue(forKey: action) }
    }
}
