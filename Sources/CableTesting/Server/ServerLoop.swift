import CableReactive
import Foundation

/// The server thread: one `poll` loop over the listener, the wake pipe and every connection.
///
/// Each turn: poll, accept, read what is ready, fire due timers (welcome, ping, timeouts), apply the queued
/// commands, publish the snapshot, write, reap closed sockets (publishing again if that changed anything), then
/// release the callers waiting on their commands. Only this thread touches the sockets and the connections: the
/// loop is confined to it, so it is not `Sendable`.
final class ServerLoop {
    typealias Server = LocalCableServer

    let core: ServerCore
    let options: Server.Options
    var listener: Int32?
    let wakeRead: Int32
    var connections: [ServerConnection] = []
    var nextID = 1
    var snapshot = Server.Snapshot()
    /// Requests or commands were recorded since the last publish.
    var dirty = true
    var nextPing: UInt64?
    var stopping = false
    /// `history` answers wait while set (``LocalCableServer/holdReplays(_:)``).
    var replaysHeld = false
    /// Waiters to release once this turn's outcome is published.
    var tickets: [Ticket] = []
    /// The UTF-8 size of the texts in `snapshot.commands`.
    var commandBytes = 0
    /// After `accept` failed (out of descriptors), the listener rests until then instead of spinning.
    var acceptPausedUntil: UInt64?
    private var readBuffer = [UInt8](repeating: 0, count: 65_536)
    /// Reliable streams and resumable sessions, when ``LocalCableServer/Options/reliableStreams`` is set.
    var streamHistory: StreamHistory?
    /// How `$pubsub` and Turbo subscriptions are decided, when ``LocalCableServer/Options/pubSub`` is set.
    let pubSubRules: PubSubRules?
    /// Who is present in which stream.
    var presence = PresenceBook()

    init(core: ServerCore, listener: Int32, wakeRead: Int32) {
        self.core = core
        self.options = core.options
        self.listener = listener
        self.wakeRead = wakeRead
        streamHistory = core.options.reliableStreams.map(StreamHistory.init)
        pubSubRules = core.options.pubSub.map(PubSubRules.init)
    }

    func run() {
        core.loopThread.withLock { $0 = ObjectIdentifier(Thread.current) }
        if let interval = options.pingInterval { nextPing = Socket.now() + nanoseconds(interval) }
        while !stopping {
            turn()
        }
        shutdown()
    }

    private func turn() {
        var fds = [pollfd(fd: wakeRead, events: Socket.pollIn, revents: 0)]
        if let paused = acceptPausedUntil, paused <= Socket.now() { acceptPausedUntil = nil }
        if let listener, acceptPausedUntil == nil {
            fds.append(pollfd(fd: listener, events: Socket.pollIn, revents: 0))
        }
        let first = fds.count
        var polled: [ServerConnection] = []
        for connection in connections {
            guard let events = connection.pollEvents else { continue }
            fds.append(pollfd(fd: connection.fd, events: events, revents: 0))
            polled.append(connection)
        }
        Socket.poll(&fds, timeout: pollTimeout())
        if fds[0].revents != 0 { Socket.drain(wakeRead) }
        if first > 1 && fds[1].revents != 0 { acceptAll() }
        for (offset, connection) in polled.enumerated() {
            let events = fds[first + offset].revents
            if events != 0 { service(connection, events: events) }
        }
        fireTimers(now: Socket.now())
        runCommands()
        if !replaysHeld {
            // A chunk of each replay per turn; the broadcasts of the next turn's commands go out between.
            let chunk = options.reliableStreams?.replayChunk.map { max(1, $0) } ?? .max
            for connection in connections where !connection.replays.isEmpty {
                sendReplays(of: connection, upTo: chunk)
            }
        }
        // Publish before writing: a client that sees the server's answer finds it in the snapshot already.
        publish()
        // A finishing connection is flushed even when empty: that half-closes it.
        for connection in connections where connection.hasOutput || connection.phase == .finishing {
            flush(connection)
        }
        for connection in connections where connection.phase == .closed {
            if let id = connection.sessionID { streamHistory?.ended(id, now: Socket.now()) }
            // Its presence lingers (AnyCable's presence TTL); a restored session may join again meanwhile.
            let ttl = nanoseconds(options.pubSub?.presenceTTL ?? 0)
            for (stream, id) in presence.ended(connection.id, expires: Socket.now() + ttl) {
                sendPresence(["type": "leave", "id": .string(id)], to: stream)
            }
            dirty = true
        }
        connections.removeAll { $0.phase == .closed }
        publish()
        releaseTickets()
    }

    /// Milliseconds until the next timer, rounded up; -1 when none is pending.
    private func pollTimeout() -> Int32 {
        if !replaysHeld, connections.contains(where: { !$0.replays.isEmpty && $0.phase != .closed }) {
            return 0  // replays go on
        }
        var soonest = [nextPing, acceptPausedUntil, presence.nextExpiry].compactMap { $0 }.min()
        for connection in connections where connection.phase != .stalled {
            for deadline in [connection.deadline, connection.welcomeAt, connection.readResumesAt].compactMap({ $0 }) {
                soonest = min(soonest ?? deadline, deadline)
            }
        }
        guard let soonest else { return -1 }
        let now = Socket.now()
        guard soonest > now else { return 0 }
        return Int32(clamping: (soonest - now + 999_999) / 1_000_000)
    }

    private func acceptAll() {
        guard let listener else { return }
        while let fd = Socket.accept(listener) {
            guard fd >= 0 else {
                // Out of descriptors, typically: the connection stays queued; rest rather than spin on it.
                acceptPausedUntil = Socket.now() + 100_000_000
                return
            }
            snapshot.acceptedCount += 1
            dirty = true
            guard connections.count < options.maxConnections else {
                Socket.close(fd)
                continue
            }
            let id = Server.ConnectionID(nextID)
            nextID += 1
            connections.append(ServerConnection(id: id, fd: fd, options: options, now: Socket.now()))
        }
    }

    /// Reads what `poll` reported ready; writing waits for the end of the turn.
    private func service(_ connection: ServerConnection, events: Int16) {
        guard events & (Socket.pollIn | Socket.pollFailure) != 0, connection.phase != .closed else { return }
        let limit = connection.readAllowance(now: Socket.now(), buffer: readBuffer.count)
        guard limit > 0 else { return }
        let result = readBuffer.withUnsafeMutableBytes { buffer in
            Socket.read(connection.fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<limit]))
        }
        switch result {
        case .done(let count):
            connection.didRead(count)
            received(readBuffer[0..<count], on: connection)
        case .wouldBlock:
            break
        case .endOfStream, .failed:
            connection.close()
        }
    }

    func flush(_ connection: ServerConnection) {
        guard connection.phase != .closed, connection.phase != .stalled else { return }
        if !connection.flush() { connection.close() }
    }

    private func fireTimers(now: UInt64) {
        for connection in connections {
            if let deadline = connection.deadline, deadline <= now, connection.phase != .stalled {
                connection.close()
            }
            if let due = connection.welcomeAt, due <= now, connection.phase == .open {
                sendWelcome(connection)
            }
            if let resume = connection.readResumesAt, resume <= now { connection.resumeReading() }
        }
        if let due = presence.nextExpiry, due <= now {
            for (stream, id) in presence.expire(now: now) {
                sendPresence(["type": "leave", "id": .string(id)], to: stream)
            }
            dirty = true
        }
        if let due = nextPing, due <= now, let interval = options.pingInterval {
            nextPing = now + nanoseconds(interval)
            let ping = JSONValue.object(["type": "ping", "message": .int(Int(Date().timeIntervalSince1970))])
            for connection in connections where connection.phase == .open && connection.isWelcomed {
                send(ping.description, to: connection)
            }
        }
    }

    /// Applies every queued command, in order. Also called after each client command, so what a handler
    /// sends goes out before the next command is handled.
    func runCommands() {
        for (command, ticket) in core.takeCommands() {
            apply(command)
            if let ticket { tickets.append(ticket) }
        }
    }

    private func apply(_ command: ServerCommand) {
        switch command {
        case .transmit(let id, let identifier, let message):
            for connection in connections where connection.id == id && connection.phase == .open {
                send(Self.envelope(spelled(identifier), message), to: connection)
            }
        case .broadcast(let message, let target):
            broadcast(message, to: target)
        case .disconnect(let target, let reason, let reconnect):
            for connection in connections where target.matches(connection.id) && connection.phase == .open {
                disconnect(connection, reason: reason, reconnect: reconnect)
            }
        case .drop(let target):
            for connection in connections where target.matches(connection.id) { connection.close() }
        case .stall(let target):
            for connection in connections where target.matches(connection.id) && connection.phase != .closed {
                connection.phase = .stalled
                connection.deadline = nil
                connection.welcomeAt = nil
            }
        case .throttleReading(let target, let rate):
            for connection in connections where target.matches(connection.id) && connection.phase != .closed {
                connection.throttleReading(bytesPerSecond: rate, now: Socket.now())
            }
        case .welcome(let target):
            for connection in connections where target.matches(connection.id) && connection.phase == .open {
                sendWelcome(connection)
            }
        case .refuse:
            if let listener { Socket.close(listener) }
            listener = nil
        case .listen(let fd):
            if listener == nil { listener = fd } else { Socket.close(fd) }
        case .resetEpoch:
            streamHistory?.resetEpoch()
        case .holdReplays(let held):
            replaysHeld = held
        case .stop:
            stopping = true
        }
    }

    private func broadcast(_ message: JSONValue, to target: BroadcastTarget) {
        var positions: [String: StreamPosition?] = [:]
        var frames: [String: String] = [:]
        /// One position per stream and broadcast: with reliable streams, the broadcast is stored once per stream
        /// (also when nobody is subscribed, as a broker stores it).
        func position(of stream: String) -> StreamPosition? {
            if let position = positions[stream] { return position }
            var position: StreamPosition?
            if let offset = streamHistory?.append(message, to: stream), let epoch = streamHistory?.epoch {
                position = StreamPosition(stream: stream, epoch: epoch, offset: offset)
            }
            positions[stream] = position
            return position
        }
        /// One frame per identifier (an identifier always has the same stream).
        func frame(for subscription: ServerSubscription) -> String {
            if let frame = frames[subscription.identifier] { return frame }
            let frame = Self.envelope(
                spelled(subscription.identifier), message, position: position(of: subscription.stream))
            frames[subscription.identifier] = frame
            return frame
        }
        switch target {
        case .identifier(let identifier): _ = position(of: stream(of: identifier))
        case .stream(let name): _ = position(of: name)
        case .matching: break
        }
        for connection in connections where connection.phase == .open {
            for subscription in connection.subscriptions {
                switch target {
                case .identifier(let identifier): guard subscription.identifier == identifier else { continue }
                case .stream(let name): guard subscription.stream == name else { continue }
                case .matching(let matcher): guard matcher(subscription.params) else { continue }
                }
                send(frame(for: subscription), to: connection)
            }
        }
    }

    /// The stream a subscription with `identifier` has: its plain name for `$pubsub` and Turbo, else itself.
    private func stream(of identifier: String) -> String {
        guard let pubSubRules, let params = try? JSONValue(parsing: identifier),
            case .stream(_, let name, _, _) = pubSubRules.decide(params)
        else { return identifier }
        return name
    }

    /// Sends a presence event (`{"type":"join",…}` or `{"type":"leave",…}`) to every subscription of `stream`,
    /// each with its own identifier.
    func sendPresence(_ event: JSONValue, to stream: String) {
        for connection in connections where connection.phase == .open {
            for subscription in connection.subscriptions where subscription.stream == stream {
                send(Self.presenceFrame(spelled(subscription.identifier), event), to: connection)
            }
        }
    }

    /// `{"type":"presence","identifier":…,"message":…}`.
    static func presenceFrame(_ identifier: String, _ message: JSONValue) -> String {
        JSONValue.object(["type": "presence", "identifier": .string(identifier), "message": message]).description
    }

    /// Queues a text frame, dropping a connection that has let too much pile up unread.
    func send(_ text: String, to connection: ServerConnection) {
        if !connection.enqueueText(text) { connection.close() }
    }

    /// `identifier` as the server writes it back: byte for byte, or in ``LocalCableServer/Options/identifierSpelling``.
    func spelled(_ identifier: String) -> String {
        options.identifierSpelling?.respell(identifier) ?? identifier
    }

    /// `{"identifier":…,"message":…}`; a NaN or infinite number in `message` is written as `null`.
    static func envelope(_ identifier: String, _ message: JSONValue, position: StreamPosition? = nil) -> String {
        var frame: [String: JSONValue] = ["identifier": .string(identifier), "message": message]
        if let position {
            frame["stream_id"] = .string(position.stream)
            frame["epoch"] = .string(position.epoch)
            frame["offset"] = .int(position.offset)
        }
        return JSONValue.object(frame).description
    }

    private func publish() {
        let infos = connections.compactMap { connection -> Server.ConnectionInfo? in
            guard connection.isUpgraded, let request = connection.request else { return nil }
            return Server.ConnectionInfo(
                id: connection.id, request: request, subscriptions: connection.subscriptions.map(\.identifier),
                isWelcomed: connection.isWelcomed, isStalled: connection.phase == .stalled,
                isClosing: connection.phase == .closing || connection.phase == .finishing)
        }
        let accepting = listener != nil
        let present = presence.ids
        guard
            dirty || infos != snapshot.connections || accepting != snapshot.isAccepting || present != snapshot.presence
        else { return }
        dirty = false
        snapshot.connections = infos
        snapshot.isAccepting = accepting
        snapshot.presence = present
        core.snapshot.value = snapshot
        core.connectionCount.value = infos.count
    }

    private func releaseTickets() {
        let waiting = tickets
        tickets.removeAll()
        for ticket in waiting { ticket.signal() }
    }

    /// Closes every socket, publishes the empty state, then closes the wake pipe and releases every waiter.
    private func shutdown() {
        for connection in connections { connection.close() }
        connections.removeAll()
        if let listener { Socket.close(listener) }
        listener = nil
        publish()
        let leftovers = core.markStopped()
        Socket.close(wakeRead)
        Socket.close(core.control.withLock { $0.wakeWrite })
        for (command, _) in leftovers {
            if case .listen(let fd) = command { Socket.close(fd) }
        }
        releaseTickets()
        for ticket in leftovers.compactMap(\.ticket) { ticket.signal() }
    }

    /// Records a request, forgetting the oldest beyond ``Options/historyLimit``.
    func remember(_ request: Server.Request) {
        snapshot.requests.append(request)
        if snapshot.requests.count > options.historyLimit {
            snapshot.requests.removeFirst(snapshot.requests.count - options.historyLimit)
        }
        dirty = true
    }

    /// Records a command, forgetting the oldest beyond ``Options/historyLimit`` or ``Options/historyByteLimit``.
    func remember(_ command: Server.ReceivedCommand) {
        snapshot.commands.append(command)
        commandBytes += command.text.utf8.count
        var drop = max(0, snapshot.commands.count - options.historyLimit)
        var bytes = commandBytes
        for index in 0..<drop { bytes -= snapshot.commands[index].text.utf8.count }
        while bytes > options.historyByteLimit && drop < snapshot.commands.count {
            bytes -= snapshot.commands[drop].text.utf8.count
            drop += 1
        }
        snapshot.commands.removeFirst(drop)
        commandBytes = bytes
        dirty = true
    }
}
