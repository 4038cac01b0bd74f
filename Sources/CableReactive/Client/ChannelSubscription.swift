import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// One handle on a channel subscription of an ``ActionCableClient``.
///
/// Created by ``ActionCableClient/subscribe(_:)-(JSONValue)``. The subscribe is (re)sent after every welcome
/// until the server confirms or rejects it. Subscribing again with equal params gives another handle on the
/// same server subscription: the server sees one `subscribe`, and one `unsubscribe` when the last handle
/// goes. Each handle has its own ``state`` and ``messages``.
///
/// ```swift
/// let room = try client.subscribe(["channel": "ChatChannel", "room": "lobby"])
/// Task {
///     for await message in room.messages { print(message) }
/// }
/// if room.perform("speak", ["text": "hello"]) == false { /* not confirmed on a live connection */ }
/// room.unsubscribe()
/// ```
///
/// Lifetime: the subscription lives while anything of this handle is in use: the handle, its ``state`` or
/// ``messages``, or any observation or loop on them (the end of a chain holds the chain). So
/// `let token = try client.subscribe(params).messages.observe { ... }` keeps the subscription until `token`
/// goes. When all of them are released, or on ``unsubscribe()``, this handle ends for good. Nothing of it
/// keeps the client alive; when the client is released or closed, every handle becomes
/// ``SubscriptionState/unsubscribed``.
public final class ChannelSubscription: Sendable {
    /// The identifier string sent to the server: the params as compact JSON with sorted keys.
    public let identifier: String
    /// This handle's state; changes arrive on the client's callback queue.
    public let state: StateValue<SubscriptionState>
    /// This handle's messages, untyped.
    public let messages: CableMessages<JSONValue>
    /// What the last reconnect did to this subscription: ``SubscriptionReconnect/resubscribed`` (a new server
    /// subscription: reload), ``SubscriptionReconnect/restored`` (AnyCable restored it and is replaying what
    /// was missed), ``SubscriptionReconnect/recovered`` (the replay is complete: nothing was missed) or
    /// ``SubscriptionReconnect/historyRejected`` (AnyCable could not replay: reload). `nil` until the first
    /// reconnect after the first confirmation. Changes arrive on the client's callback queue.
    ///
    /// ```swift
    /// let watch = room.lastReconnect.observe { reconnect in
    ///     if let reconnect, reconnect.mayHaveMissedMessages { reload() }
    /// }
    /// ```
    public let lastReconnect: StateValue<SubscriptionReconnect?>

    let lease: SubscriptionLease
    var serial: Int { lease.serial }

    init(lease: SubscriptionLease, sink: HandleSink) {
        identifier = lease.identifier
        self.lease = lease
        state = sink.state.view(keeping: lease)
        lastReconnect = sink.reconnect.view(keeping: lease)
        messages = CableMessages(storage: sink.messages, lease: lease) { $0 }
    }

    /// The messages decoded as `T`: ``messages`` with a decoding step. A message that does not decode is
    /// skipped, counted in the view's ``CableMessages/undecodableCount``, and logged at DEBUG with the key path
    /// where decoding failed (the names of your type's keys and array indexes, never values).
    ///
    /// ```swift
    /// struct Chat: Decodable, Sendable { let user: String; let text: String; let sentAt: Date }
    /// // {"user":"ada","text":"hi","sentAt":"2026-12-02T00:52:17.123Z"}: the client's ISO 8601 dates
    /// for await chat in room.messages(as: Chat.self) { print(chat.user, chat.text) }
    ///
    /// let snakeCase = CableCoding(keys: .snakeCase).makeDecoder()  // for a channel that sends sent_at
    /// for await chat in room.messages(as: Chat.self, decoder: snakeCase) { print(chat.sentAt) }
    /// ```
    ///
    /// - Parameters:
    ///   - type: the type of each message.
    ///   - decoder: the decoder to use, with its strategies; `nil` (the default) for the client's, made from
    ///     ``CableOptions/coding``. It is used from the consumers' threads: do not change it afterwards.
    /// - Returns: a view of this handle's messages with its own ``CableMessages/undecodableCount``; its
    ///   ``CableMessages/droppedCount`` is the handle's.
    public func messages<T: Decodable & Sendable>(
        as type: T.Type, decoder: JSONDecoder? = nil
    ) -> CableMessages<T> {
        let lease = lease
        let decoder = decoder ?? lease.coders.decoder
        let undecodable = Locked(0)
        return CableMessages(storage: messages.storage, lease: lease, undecodable: undecodable) { message in
            do {
                return try message.decode(T.self, decoder: decoder)
            } catch {
                undecodable.withLock { $0 += 1 }
                var fields: [LogField] = [
                    .subscription(lease.serial), .errorType(String(describing: Swift.type(of: error))),
                ]
                if let path = DecodingFailure.keyPath(of: error) { fields.append(.keyPath(path)) }
                lease.log.emit(LogEvent(level: .debug, name: "decode_failed", fields: fields))
                return nil
            }
        }
    }

    /// How many `subscribe` commands went out for this subscription on the current connection: 0 before a
    /// welcome, 1 once it was sent, more while the server leaves it unanswered (re-sent after
    /// ``CableOptions/subscribeRetryDelays``). A long ``SubscriptionState/pending`` with a count above 1 is a
    /// server that is not answering this channel. 0 also for a subscription AnyCable restored (see
    /// ``lastReconnect``): none was needed.
    public var subscribesSent: Int { lease.engine?.subscribesSent(identifier: identifier) ?? 0 }

    /// Sends `action` with `data` to the channel.
    ///
    /// - Returns: `true` only when the subscription is confirmed on the live connection, this handle is not
    ///   unsubscribed, and the command was queued to the connection. Nothing is queued offline: while
    ///   connecting, pending, rejected or unsubscribed, it returns `false` and sends nothing. Also `false`
    ///   when `data` is not a JSON object, which is logged at WARN as `perform_data_not_object`, or holds a NaN
    ///   or infinite number, logged at WARN as `perform_unencodable` with its key path (programming errors, not
    ///   network conditions).
    @discardableResult
    public func perform(_ action: String, _ data: JSONValue = [:]) -> Bool {
        guard data.objectValue != nil else {
            lease.log.emit(
                LogEvent(level: .warn, name: "perform_data_not_object", fields: [.subscription(lease.serial)]))
            return false
        }
        guard let engine = lease.engine else { return false }
        do {
            return try engine.perform(identifier: identifier, sink: lease.sinkID, action: action, data: data)
        } catch {
            logUnencodable(error)
            return false
        }
    }

    /// Logs why `perform` data did not encode: where (the key path), never the value.
    private func logUnencodable(_ error: CableError) {
        var fields: [LogField] = [.subscription(lease.serial)]
        if let path = error.codingPath { fields.append(.keyPath(path)) }
        lease.log.emit(LogEvent(level: .warn, name: "perform_unencodable", fields: fields))
    }

    /// Sends `action` with data built from variables, without wrapping each value; see ``perform(_:_:)-(String,JSONValue)``.
    ///
    /// ```swift
    /// room.perform("speak", ["body": body, "count": n])
    /// ```
    ///
    /// Each value is encoded to JSON on its own, with the client's coders (``CableOptions/coding``), so the
    /// frame is the one the literal form gives, and a `Date` goes out as ISO 8601 by default
    /// (`["at": date]` sends `{"action":"…","at":"2026-12-02T00:52:17.123Z"}`). A `nil` Optional value is sent
    /// as `null`.
    ///
    /// - Returns: `false` also when a value does not encode, which is logged at WARN as `perform_unencodable`
    ///   with the key path (the member's name first).
    @discardableResult
    public func perform(_ action: String, _ data: [String: any Encodable & Sendable]) -> Bool {
        do {
            return perform(action, .object(try JSONValue.encodingEach(data, encoder: lease.coders.encoder)))
        } catch {
            logUnencodable(error)
            return false
        }
    }

    /// Sends `action` with an `Encodable` payload; see ``perform(_:_:)-(String,JSONValue)``.
    ///
    /// ```swift
    /// struct Speak: Encodable { let text: String; let replyTo: Int?; let sentAt: Date }
    /// room.perform("speak", Speak(text: "hi", replyTo: nil, sentAt: Date()))
    /// // data: {"action":"speak","sentAt":"2026-12-02T00:52:17.123Z","text":"hi"}  (a nil Optional is left out)
    /// room.perform("speak", Speak(text: "hi", replyTo: 7, sentAt: Date()),
    ///              encoder: CableCoding(keys: .snakeCase).makeEncoder())
    /// // data: {"action":"speak","reply_to":7,"sent_at":"2026-12-02T00:52:17.123Z","text":"hi"}
    /// ```
    ///
    /// - Parameters:
    ///   - action: the channel method to call.
    ///   - data: the payload; it must encode to a JSON object.
    ///   - encoder: the encoder to use; `nil` (the default) for the client's, made from ``CableOptions/coding``
    ///     (ISO 8601 dates with milliseconds, keys as declared).
    /// - Returns: `false` also when `data` does not encode (logged at WARN as `perform_unencodable`, with the
    ///   key path), or encodes to something other than a JSON object (logged at WARN, as for
    ///   ``perform(_:_:)-(String,JSONValue)``).
    @discardableResult
    public func perform(_ action: String, _ data: some Encodable, encoder: JSONEncoder? = nil) -> Bool {
        let value: JSONValue
        do {
            value = try JSONValue(encoding: data, encoder: encoder ?? lease.coders.encoder)
        } catch {
            logUnencodable(CableError.unencodableData(error))
            return false
        }
        return perform(action, value)
    }

    /// Ends this handle for good: its ``state`` becomes ``SubscriptionState/unsubscribed`` and its
    /// ``messages`` finish. The server subscription ends with it if no other handle shares it (an
    /// `unsubscribe` is sent if the subscribe went out on the live connection). Idempotent.
    public func unsubscribe() {
        lease.release()
    }
}

/// One handle's share of a server subscription. Everything of the handle (the handle, its state and message
/// views, their observations and loops) holds it; the last of them to go releases the share.
final class SubscriptionLease: Sendable {
    let identifier: String
    let serial: Int
    let sinkID: UInt64
    let context: SubscriptionContext
    var engine: ClientEngine? { context.engine }
    var bufferSize: Int { context.bufferSize }
    var log: LogContext { context.log }
    var callbacks: CallbackExecutor { context.callbacks }
    var coders: CableCoders { context.coders }

    init(box: SubscriptionBox, sinkID: UInt64) {
        identifier = box.identifier
        serial = box.serial
        self.sinkID = sinkID
        context = box.context
    }

    deinit { release() }

    /// Gives the share back; idempotent (the engine knows each share once).
    func release() {
        engine?.release(identifier: identifier, serial: serial, sink: sinkID)
    }
}

/// The client's side of one handle: what the engine publishes to it. It holds the Signals storages themselves
/// (one object and one lock each): the handle only ever hands out views of them.
final class HandleSink: Sendable {
    let id: UInt64
    /// The handle's message stream: the engine sends to it, the handle's ``CableMessages`` observe it.
    let messages: StreamStorage<JSONValue>
    let state: StateStorage<SubscriptionState>
    let reconnect: StateStorage<SubscriptionReconnect?>

    init(id: UInt64, bufferSize: Int, state: SubscriptionState, reconnect: SubscriptionReconnect? = nil) {
        self.id = id
        messages = StreamStorage(holding: .bufferingNewest(bufferSize))
        self.state = StateStorage(state)
        // Every reconnect is news, even one with the outcome of the last: equal values are published again.
        self.reconnect = StateStorage(reconnect, isDuplicate: nil)
    }

    /// A handle the engine lets go of without ending it (the client was released): its loops end.
    deinit { messages.finish() }

    /// Ends the handle: its messages finish and its state becomes unsubscribed (on `callbacks`).
    func end(callbacks: CallbackExecutor) {
        messages.finish()
        let state = state
        callbacks.run { state.update { $0 = .unsubscribed } }
    }
}

/// What every subscription of one client shares, held once by the client instead of in each handle and box:
/// the buffer size, the log, the callback queue, the coders, and a weak reference to the engine (a handle must
/// not keep its client alive).
final class SubscriptionContext: Sendable {
    let bufferSize: Int
    /// The client's encoder and decoder, made from ``CableOptions/coding``: what `perform` and
    /// `messages(as:)` use when the call passes none.
    let coders: CableCoders
    /// How many messages a ``DeliveryBatch`` stages for one subscription before handing them over: half the
    /// buffer, so that staging never costs a drop while the consumers keep up.
    let handOverThreshold: Int
    let log: LogContext
    let callbacks: CallbackExecutor
    private let engineRef = Locked(WeakEngine())
    /// The stream positions (AnyCable) of this client's subscriptions, by serial, so that every box that
    /// replaces another keeps its sequencer. Only a subscription that saw a positioned message or awaits a
    /// replay has one: a Rails subscription pays for none (a lock each cost 96 bytes a subscription).
    private let sequencers = Locked<[Int: StreamSequencer]>([:])
    /// The client's engine; nil once it is gone, and for the handles a closed client gives out.
    var engine: ClientEngine? { engineRef.withLock { $0.engine } }

    init(bufferSize: Int, log: LogContext, callbacks: CallbackExecutor, coders: CableCoders = .standard) {
        self.bufferSize = bufferSize
        self.coders = coders
        handOverThreshold = max(1, bufferSize / 2)
        self.log = log
        self.callbacks = callbacks
    }

    /// Runs `body` on subscription `serial`'s sequencer, made if it has none.
    func withSequencer<R>(of serial: Int, _ body: (inout StreamSequencer) -> R) -> R {
        sequencers.withLock { body(&$0[serial, default: StreamSequencer(holdLimit: bufferSize)]) }
    }

    /// Whether subscription `serial` has seen stream positions.
    func hasStreamPositions(_ serial: Int) -> Bool {
        sequencers.withLock { $0[serial].map { !$0.marks.isEmpty } ?? false }
    }

    /// Ends the awaited replay of subscription `serial`: what waited for it, in stream order.
    func historyEnded(_ serial: Int) -> [JSONValue] {
        sequencers.withLock { $0[serial]?.historyEnded() ?? [] }
    }

    /// The session ended: every sequencer stops waiting for what it asked.
    func sessionEnded() {
        sequencers.withLock { table in
            for index in table.indices { table.values[index].sessionEnded() }
        }
    }

    /// How many subscriptions have a sequencer (for tests).
    var sequencerCount: Int { sequencers.withLock { $0.count } }

    /// Forgets subscription `serial`'s positions: it ended.
    func forgetSequencer(of serial: Int) {
        _ = sequencers.withLock { $0.removeValue(forKey: serial) }
    }

    /// Called once, by the engine that owns this context, at the end of its init.
    func attach(_ engine: ClientEngine) {
        engineRef.withLock { $0.engine = engine }
    }
}

/// The client's side of one server subscription: its identity, and the handles that share it.
///
/// Immutable: when a handle joins or leaves, the engine replaces the box (under its lock, in every index that
/// leads to it), so the network thread delivers to a box's handles without a lock. A read that staged messages
/// for the old box hands them to the old set of handles: a handle that joined meanwhile starts with the next
/// read, and one that left is already finished.
final class SubscriptionBox: Sendable {
    let serial: Int
    let identifier: String
    let context: SubscriptionContext
    var bufferSize: Int { context.bufferSize }
    var log: LogContext { context.log }
    var handOverThreshold: Int { context.handOverThreshold }
    /// The handles, in the order they subscribed.
    let sinks: [HandleSink]
    /// Their message streams, what ``deliver(_:wakes:)`` sends to: a pointer hop fewer per hand-over than
    /// through each sink, which counts when a thousand subscriptions take turns (each hop a cache miss).
    private let messageStorages: [StreamStorage<JSONValue>]
    init(serial: Int, identifier: String, context: SubscriptionContext, sinks: [HandleSink] = []) {
        self.serial = serial
        self.identifier = identifier
        self.context = context
        self.sinks = sinks
        messageStorages = sinks.map(\.messages)
    }

    /// This box with `sink` added.
    func adding(_ sink: HandleSink) -> SubscriptionBox {
        SubscriptionBox(serial: serial, identifier: identifier, context: context, sinks: sinks + [sink])
    }

    /// Stages `message` for the handles, through the stream sequencer when it carries a position: a repeat
    /// is dropped, and a message past a gap waits while a history replay is awaited.
    func stage(_ message: JSONValue, at position: StreamPosition?, in batch: DeliveryBatch) {
        guard let position else { return batch.stage(message, for: self) }
        for ready in context.withSequencer(of: serial, { $0.accept(message, at: position) }) {
            batch.stage(ready, for: self)
        }
    }

    /// This box without the handle `id`, and that handle; nil if it is not (or no longer) here.
    func removing(sink id: UInt64) -> (box: SubscriptionBox, removed: HandleSink)? {
        guard let index = sinks.firstIndex(where: { $0.id == id }) else { return nil }
        var rest = sinks
        let removed = rest.remove(at: index)
        let box = SubscriptionBox(serial: serial, identifier: identifier, context: context, sinks: rest)
        return (box, removed)
    }

    func contains(sink id: UInt64) -> Bool { sinks.contains { $0.id == id } }

    /// Hands `messages` to every handle, in order. Runs on the network thread.
    ///
    /// - Returns: how many messages the handles' consumers dropped (summed over the handles).
    @discardableResult
    func deliver(_ messages: some Collection<JSONValue>, wakes: inout WakeList) -> Int {
        var dropped = 0
        for storage in messageStorages { dropped += storage.send(contentsOf: messages, wakes: &wakes) ?? 0 }
        return dropped
    }
}

/// A weak reference to the engine: a handle must not keep its client alive.
struct WeakEngine {
    weak var engine: ClientEngine?
}
