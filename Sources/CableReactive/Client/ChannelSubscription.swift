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
/// goes. When all of them are released, or on ``unsubscribe()``, this handle ends for good (the server
/// subscription lingers for ``CableOptions/unsubscribeDelay``, for the next handle on equal params). Nothing of it
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
    /// reconnect after the first confirmation, or until a first subscribe asks AnyCable for a replay
    /// (``ActionCableClient/subscribe(_:resumingFrom:)`` on a session that replays, or
    /// ``ActionCableClient/subscribe(_:historySince:)``): then ``SubscriptionReconnect/recovering`` and its
    /// outcome, ``SubscriptionReconnect/recovered`` or ``SubscriptionReconnect/historyRejected`` (the
    /// positions are too old or from another epoch: reload). Changes arrive on the client's callback queue.
    ///
    /// ```swift
    /// let watch = room.lastReconnect.observe { reconnect in
    ///     if let reconnect, reconnect.mayHaveMissedMessages { reload() }
    /// }
    /// ```
    public let lastReconnect: StateValue<SubscriptionReconnect?>

    /// AnyCable's presence for this subscription: join and leave the set, watch it and its events. See
    /// ``ChannelPresence``. Made on first use (a handle that never uses presence pays nothing for it); every
    /// use gives a view of the same presence.
    public var presence: ChannelPresence {
        let sink = lease.engine?.presence(identifier: identifier, sink: lease.sinkID) ?? PresenceSink.ended()
        return ChannelPresence(lease: lease, sink: sink)
    }

    let lease: SubscriptionLease
    var serial: Int { lease.serial }
    /// Whether this is an AnyCable `$pubsub` stream, which has no channel to perform on. Identifiers are
    /// written with sorted keys, so a stream's starts with its channel.
    var isStream: Bool { identifier.hasPrefix(#"{"channel":"$pubsub","#) }

    init(lease: SubscriptionLease, sink: HandleSink) {
        identifier = lease.identifier
        self.lease = lease
        state = sink.state.view(keeping: lease, lane: lease.callbacks.lane)
        lastReconnect = sink.reconnect.view(keeping: lease, lane: lease.callbacks.lane)
        messages = CableMessages(storage: sink.messages, lease: lease) { $0.value }
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
        messages(as: type, reader: decoder.map { .json($0) } ?? .coding(lease.coders.messageDecoder))
    }

    /// How a typed view reads its messages: with an app's own `JSONDecoder` (from JSON text, its contract), or
    /// with the ``MessageDecoder`` of a ``CableCoding`` (from the message's bytes, one parse).
    enum MessageReader: Sendable {
        /// An app's decoder, given as `decoder:`.
        case json(JSONDecoder)
        /// A coding's own decoder: the client's, or a ``CableChannel``'s.
        case coding(MessageDecoder)
    }

    /// ``messages(as:decoder:)`` with the reader chosen.
    func messages<T: Decodable & Sendable>(as type: T.Type, reader: MessageReader) -> CableMessages<T> {
        let lease = lease
        let undecodable = Locked(0)
        return CableMessages(storage: messages.storage, lease: lease, undecodable: undecodable) { message in
            do {
                switch reader {
                case .json(let decoder): return try message.decode(T.self, with: decoder)
                case .coding(let decoder): return try message.decode(T.self, with: decoder)
                }
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
    /// server that is not answering this channel: when the second re-send goes unanswered too (about 35 s with
    /// the default delays), the client logs `subscribe_unanswered` at WARN with the channel's class and the
    /// count, and re-sends on. 0 also for a subscription AnyCable restored (see ``lastReconnect``): none was
    /// needed.
    ///
    /// ```swift
    /// // Read it when the screen's "joining…" has gone on for a while:
    /// if room.state.value == .pending, room.subscribesSent >= 2 { showUnavailable() }
    /// ```
    public var subscribesSent: Int { lease.engine?.subscribesSent(identifier: identifier) ?? 0 }

    /// The position of the last message delivered from each of the subscription's streams (AnyCable with its
    /// broker; empty for Rails and for whispers, which have none), sorted by stream. Keep them to resume from
    /// on a later launch (``ActionCableClient/subscribe(_:resumingFrom:)``). Read when you need it: the message
    /// path pays nothing for it.
    ///
    /// ```swift
    /// UserDefaults.standard.set(try JSONEncoder().encode(room.streamPositions), forKey: "lobby.positions")
    /// ```
    public var streamPositions: [StreamPosition] { lease.context.positions(of: lease.serial) }

    /// This handle's messages with their stream positions (``PositionedMessage``): for a channel that streams
    /// from several streams, or an app that keeps a position per message. The same messages as ``messages``,
    /// in the same order, recorded from the first use of this property on (and held, the newest
    /// ``CableOptions/messageBufferSize``, until a consumer starts); a message without a position (Rails, a
    /// whisper) has `nil`. Until a handle asks, the message path stages no positions, so apps that don't pay
    /// nothing. Observers run on the client's callback queue unless they name one; the stream finishes when the
    /// handle ends, and it keeps the subscription alive like ``messages``.
    ///
    /// ```swift
    /// for await message in room.messagesWithPositions.values {
    ///     if let position = message.position { lastSeen[position.stream] = position }
    /// }
    /// ```
    public var messagesWithPositions: EventStream<PositionedMessage> {
        guard let storage = lease.engine?.positionedMessages(identifier: identifier, sink: lease.sinkID) else {
            let ended = StreamStorage<PositionedMessage>(holding: nil)
            ended.finish()
            return ended.view(keeping: lease, lane: lease.callbacks.lane)
        }
        return storage.view(keeping: lease, lane: lease.callbacks.lane)
    }

    /// Sends `action` with `data` to the channel.
    ///
    /// - Returns: `true` only when the subscription is confirmed on the live connection, this handle is not
    ///   unsubscribed, and the command was queued to the connection (or, while another thread is handing the
    ///   client's own commands to that connection, queued right behind them, in call order). Nothing is queued
    ///   offline: while connecting, pending, rejected or unsubscribed, it returns `false` and sends nothing.
    ///   Safe from any thread, also from inside an observer of this client. Also `false`
    ///   when `data` is not a JSON object, which is logged at WARN as `perform_data_not_object`, or holds a NaN
    ///   or infinite number, logged at WARN as `perform_unencodable` with its key path (programming errors, not
    ///   network conditions). `false` when the command is larger than ``CableOptions/maxOutgoingMessageSize``
    ///   (64 KiB), logged at WARN as `perform_too_big`. Always `false` on an AnyCable stream (``ActionCableClient/stream(signed:historySince:)``),
    ///   which has no channel to call, logged at WARN as `perform_on_stream`.
    @discardableResult
    public func perform(_ action: String, _ data: JSONValue = [:]) -> Bool {
        guard data.objectValue != nil else {
            lease.log.emit(
                LogEvent(level: .warn, name: "perform_data_not_object", fields: [.subscription(lease.serial)]))
            return false
        }
        guard !isStream else {
            lease.log.emit(LogEvent(level: .warn, name: "perform_on_stream", fields: [.subscription(lease.serial)]))
            return false
        }
        do {
            return send(try CableProtocol.perform(identifier: identifier, action: action, data: data))
        } catch {
            logUnencodable(error)
            return false
        }
    }

    /// Sends the command `text` on the live connection if this handle's subscription is confirmed there and it
    /// is within ``CableOptions/maxOutgoingMessageSize``.
    private func send(_ text: String) -> Bool {
        let size = text.utf8.count
        guard size <= lease.context.maxOutgoingMessageSize else {
            lease.log.emit(
                LogEvent(
                    level: .warn, name: "perform_too_big",
                    fields: [.subscription(lease.serial), .size(size), .limit(lease.context.maxOutgoingMessageSize)]))
            return false
        }
        return lease.engine?.send(text, identifier: identifier, sink: lease.sinkID) ?? false
    }

    /// Sends `data` to the other clients on this subscription's stream: AnyCable's whisper, for what is not
    /// worth a round trip through the application (a typing indicator, a cursor). Same rules as ``perform(_:_:)-(String,JSONValue)``:
    /// `true` only when the subscription is confirmed on the live connection and the command was queued to
    /// it; nothing is queued offline.
    ///
    /// `data` is sent as a JSON value (any: object, string, number). The receivers get it on their
    /// ``messages`` like any message (with no stream position: it never enters history or a replay); the
    /// sender's own connection gets nothing. The server decides whether whisper is enabled: on public
    /// `$pubsub` streams always, on signed streams with `--streams_whisper`, on Rails channels that stream
    /// with `whisper: true`; elsewhere it drops the whisper silently. Nothing tells the sender whether anyone
    /// received it. AnyCable re-encodes `data`: object keys arrive sorted, numbers as doubles.
    ///
    /// ```swift
    /// room.whisper(["event": "typing", "user": "ada"])
    /// ```
    ///
    /// - Returns: `false` also when `data` holds NaN or infinity, logged at WARN as `whisper_unencodable`.
    @discardableResult
    public func whisper(_ data: JSONValue) -> Bool {
        do {
            return send(try CableProtocol.whisper(identifier: identifier, data: data))
        } catch {
            logUnencodable(error, name: "whisper_unencodable")
            return false
        }
    }

    /// Whispers an `Encodable` value, encoded with `encoder` or the client's (``CableOptions/coding``); see
    /// ``whisper(_:)-(JSONValue)``.
    ///
    /// ```swift
    /// struct Typing: Encodable { let user: String }
    /// room.whisper(Typing(user: "ada"))
    /// ```
    @discardableResult
    public func whisper(_ data: some Encodable, encoder: JSONEncoder? = nil) -> Bool {
        do {
            return whisper(try JSONValue(encoding: data, encoder: encoder ?? lease.coders.encoder))
        } catch {
            logUnencodable(CableError.unencodableData(error), name: "whisper_unencodable")
            return false
        }
    }

    /// Logs why data did not encode: where (the key path), never the value.
    private func logUnencodable(_ error: CableError, name: StaticString = "perform_unencodable") {
        var fields: [LogField] = [.subscription(lease.serial)]
        if let path = error.codingPath { fields.append(.keyPath(path)) }
        lease.log.emit(LogEvent(level: .warn, name: name, fields: fields))
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
    /// ``messages`` finish, after what they hold. The server subscription ends with it if no other handle
    /// shares it: `unsubscribe` is sent after ``CableOptions/unsubscribeDelay`` if the subscribe went out on the
    /// live connection, and a handle for equal params made before then takes the subscription over instead.
    /// Idempotent.
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
    var engine: (any SubscriptionOwner)? { context.owner }
    var bufferSize: Int { context.bufferSize }
    var log: LogContext { context.log }
    var callbacks: CallbackExecutor { context.callbacks }
    var coders: CableCoders { context.coders }

    init(route: DeliveryRoute, sinkID: UInt64) {
        identifier = route.identifier
        serial = route.serial
        self.sinkID = sinkID
        context = route.context
    }

    deinit { release() }

    /// Gives the share back; idempotent (the engine knows each share once).
    func release() {
        engine?.release(identifier: identifier, serial: serial, sink: sinkID)
    }
}
