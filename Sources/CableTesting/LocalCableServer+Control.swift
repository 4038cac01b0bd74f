import CableReactive
import Foundation

extension LocalCableServer {
    /// Sends `{"identifier":identifier,"message":message}` to every open connection subscribed with exactly
    /// this identifier string. Returns once queued on the sockets (see the type's Threading section).
    public func broadcast(_ message: JSONValue, to identifier: String) {
        core.perform(.broadcast(message, .identifier(identifier)))
    }

    /// Sends `message` to every subscription whose params (the decoded identifier) satisfy `matcher`, each
    /// with its own identifier; `matcher` runs on the server thread.
    ///
    /// ```swift
    /// server.broadcast(["n": 1]) { $0["channel"] == "ChatChannel" }
    /// ```
    public func broadcast(_ message: JSONValue, where matcher: @escaping @Sendable (JSONValue) -> Bool) {
        core.perform(.broadcast(message, .matching(matcher)))
    }

    /// Sends `{"type":"disconnect","reason":reason,"reconnect":reconnect}` and a close frame (1000) to the
    /// target's open connections; each socket closes when its client answers or after ``Options/closeTimeout``.
    /// The default mirrors `ActionCable.server.restart`.
    public func disconnect(_ target: Target = .all, reason: String? = "server_restart", reconnect: Bool = true) {
        core.perform(.disconnect(target, reason: reason, reconnect: reconnect))
    }

    /// Fault: closes the target's TCP sockets at once, without a close frame (the client sees an abnormal
    /// closure, 1006). With `.all` this includes connections still sending their upgrade request.
    public func drop(_ target: Target = .all) {
        core.perform(.drop(target))
    }

    /// Fault: the target's connections stop being read and written but stay open, like a network black hole.
    /// Pings, welcomes and broadcasts to them are discarded. They stay open until ``drop(_:)`` or ``stop()``,
    /// and count in ``connectionCount`` meanwhile. A connection still sending its upgrade request never gets
    /// an answer.
    public func stall(_ target: Target = .all) {
        core.perform(.stall(target))
    }

    /// Fault: reads the target's connections at most `bytesPerSecond` bytes a second (`nil` lifts the limit),
    /// like a client on a slow uplink. What the client sends piles up on its side while the server's pings,
    /// broadcasts and replies still go out at full speed. The socket's receive buffer is also fixed at 64 KiB
    /// (the kernel would grow it to megabytes), so the backlog reaches the client soon. Applies to the target's
    /// connections open now; connections accepted later are read at full speed.
    ///
    /// ```swift
    /// server.throttleReading(bytesPerSecond: 64 << 10)  // a 64 KiB/s uplink
    /// ```
    public func throttleReading(_ target: Target = .all, bytesPerSecond: Int?) {
        precondition(bytesPerSecond.map { $0 > 0 } ?? true, "API misuse: bytesPerSecond must be positive")
        core.perform(.throttleReading(target, bytesPerSecond: bytesPerSecond))
    }

    /// With ``Options/reliableStreams``: starts a new stream epoch, as a restarted AnyCable broker does. Every
    /// stream's history is dropped and offsets start at 1 again, so a replay from an older position is rejected.
    public func resetStreamEpoch() {
        core.perform(.resetEpoch)
    }

    /// With ``Options/reliableStreams``: holds every `history` answer back (`true`) until called with `false`,
    /// while broadcasts go on live, as an AnyCable broker slow to read its history does: the client gets live
    /// messages past its gap before the replay. Answers held go out in the order they were asked, in chunks of
    /// ``ReliableStreams/replayChunk`` if set.
    ///
    /// ```swift
    /// server.holdReplays(true)
    /// server.drop()                              // the client restores its session and asks for a replay
    /// server.broadcast(["n": 42], to: identifier)  // arrives first, past the gap
    /// server.holdReplays(false)                  // the replay, then confirm_history
    /// ```
    public func holdReplays(_ held: Bool) {
        core.perform(.holdReplays(held))
    }

    /// Sends the welcome now to the target's open connections that have not had it (see ``welcome``), then
    /// runs the commands they sent meanwhile.
    public func sendWelcome(_ target: Target = .all) {
        core.perform(.welcome(target))
    }

    /// Fault: closes the listening socket, so new connections are refused at the TCP level (`ECONNREFUSED`)
    /// until ``acceptConnections()``; open connections are unaffected. Idempotent.
    public func refuseConnections() {
        core.perform(.refuse)
    }

    /// Listens again on ``port`` after ``refuseConnections()``; does nothing while listening.
    ///
    /// - Throws: ``LocalCableServerError`` when the port cannot be bound again (another process took it) or the
    ///   server has stopped.
    public func acceptConnections() throws(LocalCableServerError) {
        guard !snapshot.value.isAccepting else { return }
        guard !core.isStopped else { throw LocalCableServerError(.stopped) }
        let (listener, _) = try Socket.listen(port: port)
        core.perform(.listen(listener))
    }

    /// Stops the server: closes every connection (without close frames) and the listener, and ends the server
    /// thread. Returns once all of that is done, except when called on the server thread (then it happens right
    /// after the current callback). Idempotent; `deinit` calls it.
    public func stop() {
        core.stop()
    }
}
