import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// AnyCable's presence for one subscription: who is in the room, with join and leave events. From
/// ``ChannelSubscription/presence``.
///
/// The server decides whether a subscription has presence: AnyCable 1.6 with a broker enables it on public
/// `$pubsub` streams, on signed streams unless `--streams_presence=false`, and on Rails channels that call
/// `join_presence`. Elsewhere the server never answers, so ``members`` stays `nil` and ``info(timeout:)``
/// times out. Rails' own Action Cable has no presence. Use the extended protocol
/// (``CableWireProtocol/anyCableExtended``): on plain Action Cable, AnyCable lets a join expire after its
/// presence TTL even while the socket is open.
///
/// ```swift
/// @MainActor @Observable final class RoomModel {
///     private(set) var online: [PresenceMember] = []
///     private var watch: SignalObservation?
///
///     func start(_ room: ChannelSubscription, me: String) throws {
///         try room.presence.join(id: me, info: ["name": .string(me)])
///         watch = room.presence.members.observe(on: .main) { [weak self] members in
///             self?.online = (members ?? [:]).values.sorted { $0.id < $1.id }
///         }
///     }
/// }
/// ```
///
/// The presence is the server subscription's: handles with equal params share the join (a ``leave()`` through
/// one leaves for all), and each has its own views of the set and events. A join belongs to the handle that
/// made it: when that handle is released, the subscription leaves, unless another handle joined too (the newest
/// other join is then the subscription's), and a released handle's join is never sent again. What keeps things
/// alive: like the handle's ``ChannelSubscription/messages``, ``members`` and ``events`` (and observations of
/// them) keep the subscription.
///
/// After a reconnect the client joins again with what the app joined (in the `subscribe` when it subscribes
/// again, with `join` after AnyCable restores the session) until ``leave()`` or the end of the subscription,
/// and asks for the set again. A disconnect resets ``members`` to `nil`: missed events are not replayed.
public final class ChannelPresence: Sendable {
    /// The presence set by id: the server's last answer, with the join and leave events since. `nil` while it
    /// is not known on the live connection: before the first answer (the client asks once the app has joined
    /// or called ``info(timeout:)``, and again after every reconnect), and after a disconnect. Changes arrive
    /// on the client's callback queue.
    public let members: StateValue<[String: PresenceMember]?>
    /// Joins (of ids new to the stream) and leaves (the last connection holding an id left, or its presence
    /// expired after a disconnect), the app's own included, as the server sends them. Events that come while
    /// nobody observes are not kept. Observers run on the client's callback queue unless they name one.
    public let events: EventStream<PresenceEvent>

    private let lease: SubscriptionLease
    private let sink: PresenceSink

    init(lease: SubscriptionLease, sink: PresenceSink) {
        self.lease = lease
        self.sink = sink
        members = sink.members.view(keeping: lease, lane: lease.callbacks.lane)
        events = sink.events.view(keeping: lease, lane: lease.callbacks.lane)
    }

    /// Joins the presence set as `id` with `info` (any JSON the others see; `nil` for none). Declarative: the
    /// client keeps the join and sends it whenever the subscription is confirmed (at once if it is now, in
    /// the `subscribe` after a fresh reconnect, as `join` after a restore) until ``leave()``. Joining again
    /// with another id leaves the old one first (a connection holds one id per stream); with the same id it
    /// replaces the info (the server sends no event for that). From then on ``members`` is kept.
    ///
    /// There is no acknowledgement: your own ``PresenceEvent/joined(_:)`` comes when `id` is new in the
    /// stream, and ``members`` shows you once the server answers.
    ///
    /// - Throws: ``CableError`` `unencodableData` when `info` holds NaN or infinity (nothing is kept).
    public func join(id: String, info: JSONValue? = nil) throws(CableError) {
        try join(PresenceMember(id: id, info: info))
    }

    /// Joins with an `Encodable` info, encoded with `encoder` or the client's (``CableOptions/coding``); see
    /// ``join(id:info:)-(String,JSONValue?)``.
    ///
    /// ```swift
    /// struct Profile: Encodable { let name: String; let avatar: URL }
    /// try room.presence.join(id: user.id, info: Profile(name: user.name, avatar: user.avatar))
    /// ```
    ///
    /// - Throws: ``CableError`` `unencodableData` when `info` does not encode.
    public func join(id: String, info: some Encodable, encoder: JSONEncoder? = nil) throws(CableError) {
        let value: JSONValue
        do {
            value = try JSONValue(encoding: info, encoder: encoder ?? lease.coders.encoder)
        } catch {
            throw .unencodableData(error)
        }
        try join(PresenceMember(id: id, info: value))
    }

    /// The one path of both `join`s: checks the info, then hands the join to the engine.
    private func join(_ member: PresenceMember) throws(CableError) {
        if let path = member.info?.nonFinitePath { throw .unencodableData(nonFiniteAt: path) }
        lease.engine?.join(identifier: lease.identifier, sink: lease.sinkID, as: member)
    }

    /// Leaves the presence set: sent if the server has the join, and forgotten, so no reconnect joins again.
    /// The server sends ``PresenceEvent/left(id:)`` when no other connection holds the id. Idempotent.
    public func leave() {
        lease.engine?.leave(identifier: lease.identifier, sink: lease.sinkID)
    }

    /// Asks the server for the presence set and waits for the answer, at most `timeout` seconds (of the
    /// client's scheduler): a server that does not enable presence never answers. Also updates ``members``,
    /// which is kept from then on.
    ///
    /// ```swift
    /// do {
    ///     let members = try await room.presence.info()
    ///     print(members.count, "online")
    /// } catch .timedOut {
    ///     print("no presence on this channel")
    /// } catch {
    ///     print("not now:", error)
    /// }
    /// ```
    ///
    /// - Throws: ``PresenceError``: `notSubscribed` at once when the subscription is not confirmed on a live
    ///   connection (nothing is sent); `timedOut`, `disconnected`, `serverError`, or `cancelled` when the task
    ///   is.
    public func info(timeout: TimeInterval = 5) async throws(PresenceError) -> [String: PresenceMember] {
        let waiters = sink.waiters
        let id = waiters.makeID()  // before the request: its answer may come before this task waits
        if let engine = lease.engine, let scheduler = lease.context.scheduler {
            // The timer first, so that its deadline counts from the request.
            waiters.setTimer(id, scheduler.schedule(after: timeout) { waiters.resolve(id, .failure(.timedOut)) })
            if !engine.requestPresence(identifier: lease.identifier, sink: lease.sinkID) {
                waiters.resolve(id, .failure(.notSubscribed))
            }
        } else {
            waiters.resolve(id, .failure(.notSubscribed))
        }
        return try await wait(id, in: waiters).get()
    }

    private func wait(_ id: UInt64, in waiters: PresenceWaiters) async -> PresenceWaiters.Answer {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if let answer = waiters.add(id, continuation) { continuation.resume(returning: answer) }
            }
        } onCancel: {
            waiters.resolve(id, .failure(.cancelled))
        }
    }
}
