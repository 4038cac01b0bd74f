import Foundation
import Signals

/// One channel subscription of an ``ActionCableClient``.
///
/// Created by ``ActionCableClient/subscribe(_:)-(JSONValue)``. It is (re)sent after every welcome until the server
/// confirms or rejects it, and its messages wait in a bounded buffer until you consume them.
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
/// Lifetime: the handle keeps the subscription. Releasing it, or calling ``unsubscribe()``, ends it for good.
/// The handle does not keep the client alive; when the client is released or closed, the subscription
/// becomes ``SubscriptionState/unsubscribed``.
public final class ChannelSubscription: Sendable {
    /// The identifier string sent to the server: the params as compact JSON with sorted keys.
    public let identifier: String
    /// The subscription's state; changes arrive on the client's callback queue.
    public let state: StateValue<SubscriptionState>
    /// The messages, untyped.
    public let messages: CableMessages<JSONValue>

    let serial: Int
    private let engineRef: Locked<WeakEngine>
    private var engine: ClientEngine? { engineRef.withLock { $0.engine } }

    init(identifier: String, serial: Int, box: SubscriptionBox, engine: ClientEngine?) {
        self.identifier = identifier
        self.serial = serial
        engineRef = Locked(WeakEngine(engine: engine))
        state = box.state.readOnly
        messages = CableMessages(buffer: box.buffer, callbacks: box.callbacks) { $0 }
    }

    deinit { engine?.unsubscribe(identifier: identifier, serial: serial) }

    /// The messages decoded as `T`; a message that does not decode is skipped (and logged at DEBUG).
    ///
    /// ```swift
    /// struct Chat: Decodable, Sendable { let user: String; let text: String }
    /// for await chat in room.messages(as: Chat.self) { print(chat.user, chat.text) }
    /// ```
    public func messages<T: Decodable & Sendable>(as type: T.Type) -> CableMessages<T> {
        let buffer = messages.buffer
        return CableMessages(buffer: buffer, callbacks: messages.callbacks) { message in
            do {
                return try message.decode(T.self)
            } catch {
                CableLog.emit(
                    LogEvent(
                        level: .debug, name: "decode_failed",
                        fields: [.subscription(buffer.serial), .errorType(String(describing: Swift.type(of: error)))]),
                    host: buffer.host)
                return nil
            }
        }
    }

    /// Sends `action` with `data` to the channel.
    ///
    /// - Returns: `true` only when the subscription is confirmed on the live connection and the command was
    ///   queued to it. Nothing is queued offline: while connecting, pending, rejected or unsubscribed, it
    ///   returns `false` and sends nothing.
    @discardableResult
    public func perform(_ action: String, _ data: JSONValue = [:]) -> Bool {
        engine?.perform(identifier: identifier, action: action, data: data) ?? false
    }

    /// Sends `action` with an `Encodable` payload; see ``perform(_:_:)``.
    ///
    /// - Returns: `false` also when `data` does not encode to a JSON object.
    @discardableResult
    public func perform(_ action: String, _ data: some Encodable) -> Bool {
        guard let value = try? JSONValue(encoding: data) else { return false }
        return perform(action, value)
    }

    /// Ends the subscription for good: sends `unsubscribe` if the subscribe went out on the live connection,
    /// finishes ``messages`` and frees the identifier. Idempotent.
    public func unsubscribe() {
        engine?.unsubscribe(identifier: identifier, serial: serial)
    }
}

/// The client's side of a subscription: its state and its buffer.
final class SubscriptionBox: Sendable {
    let serial: Int
    let identifier: String
    let state: MutableStateValue<SubscriptionState>
    let buffer: MessageBuffer
    let callbacks: CallbackExecutor

    init(serial: Int, identifier: String, capacity: Int, host: String, callbacks: CallbackExecutor) {
        self.serial = serial
        self.identifier = identifier
        state = MutableStateValue(.pending)
        buffer = MessageBuffer(capacity: capacity, serial: serial, host: host)
        self.callbacks = callbacks
    }
}

/// A weak reference to the engine: a handle must not keep its client alive.
struct WeakEngine {
    weak var engine: ClientEngine?
}
