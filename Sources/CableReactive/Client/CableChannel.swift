import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// A channel described once: its server class, its params (the type's encoded properties), the type of its
/// messages and, next to it, its actions.
///
/// ```swift
/// struct ChatChannel: CableChannel {
///     static let channel = "ChatChannel"
///     let roomID: Int  // a param: {"channel":"ChatChannel","roomID":42}
///
///     struct Message: Decodable, Sendable {
///         let user: String
///         let text: String
///     }
///
///     struct Speak: CableAction {
///         var action: String { "speak" }
///         let text: String
///     }
/// }
///
/// extension TypedSubscription<ChatChannel> {
///     @discardableResult
///     func speak(_ text: String) -> Bool { perform(ChatChannel.Speak(text: text)) }
/// }
///
/// let room = try client.subscribe(ChatChannel(roomID: 42))
/// for await line in room.messages { print(line.user, line.text) }  // ChatChannel.Message
/// room.speak("hi")
/// ```
///
/// The params are the value encoded with the client's coders (``CableOptions/coding``: ISO 8601 dates), plus
/// `"channel"`: ``channel`` (an encoded `channel` property is replaced by it). Messages are decoded with the same
/// coders; a message that does not decode is skipped and counted. A channel whose server speaks another dialect
/// says so with ``coding``:
///
/// ```swift
/// struct LegacyChannel: CableChannel {
///     static let channel = "LegacyChannel"
///     static var coding: CableCoding? { CableCoding(dates: .secondsSince1970, keys: .snakeCase) }
///     let roomID: Int  // {"channel":"LegacyChannel","room_id":7}
///     typealias Message = JSONValue
/// }
/// ```
public protocol CableChannel: Encodable, Sendable {
    /// The type of the channel's messages.
    associatedtype Message: Decodable & Sendable

    /// The channel's class name on the server, such as `"ChatChannel"`: the identifier's `"channel"`.
    static var channel: String { get }

    /// The coders of this channel's params, actions and messages; `nil` (the default) uses the client's
    /// (``CableOptions/coding``).
    static var coding: CableCoding? { get }
}

extension CableChannel {
    /// `nil`: the client's coders.
    public static var coding: CableCoding? { nil }
}

/// A command of a channel: its ``action`` name (the channel method the server runs) and, as the type's encoded
/// properties, its data.
///
/// ```swift
/// struct Speak: CableAction {
///     var action: String { "speak" }
///     let text: String
/// }
/// room.perform(Speak(text: "hi"))  // data {"action":"speak","text":"hi"}
/// ```
public protocol CableAction: Encodable, Sendable {
    /// The action's name: the `"action"` of the command's data (an encoded `action` property is replaced by it).
    var action: String { get }
}

/// A handle on a subscription to a ``CableChannel``: ``ChannelSubscription`` with the channel's types.
///
/// Made by ``ActionCableClient/subscribe(_:)-(Channel)``. Its state, lifetime and sharing rules are those of
/// ``ChannelSubscription`` (``untyped``): the subscription lives while this handle, its ``state`` or
/// ``messages``, or any observation or loop on them, is in use, and nothing of it keeps the client alive.
/// Write a channel's actions as methods in an extension, next to the channel:
///
/// ```swift
/// extension TypedSubscription<ChatChannel> {
///     @discardableResult
///     func speak(_ text: String) -> Bool { perform(ChatChannel.Speak(text: text)) }
/// }
/// ```
public final class TypedSubscription<Channel: CableChannel>: Sendable {
    /// The params this handle subscribed with.
    public let channel: Channel
    /// The untyped handle: JSON messages and dictionary `perform`s.
    public let untyped: ChannelSubscription
    /// The channel's messages, decoded as `Channel.Message`; see ``CableMessages``. A message that does not
    /// decode is skipped (logged at DEBUG with its key path, and counted in ``CableMessages/undecodableCount``).
    public let messages: CableMessages<Channel.Message>
    /// The channel's own coders, or nil for the client's.
    private let coders: CableCoders?

    init(channel: Channel, untyped: ChannelSubscription, coders: CableCoders?) {
        self.channel = channel
        self.untyped = untyped
        self.coders = coders
        // The channel's coding, like the client's, reads straight from the parsed value.
        messages = untyped.messages(
            as: Channel.Message.self, reader: .coding((coders ?? untyped.lease.coders).messageDecoder))
    }

    /// The identifier sent to the server; see ``ChannelSubscription/identifier``.
    public var identifier: String { untyped.identifier }
    /// This handle's state; see ``ChannelSubscription/state``.
    public var state: StateValue<SubscriptionState> { untyped.state }
    /// What the last reconnect did to this subscription; see ``ChannelSubscription/lastReconnect``.
    public var lastReconnect: StateValue<SubscriptionReconnect?> { untyped.lastReconnect }

    /// Sends `action`, encoded with the channel's coders, under its ``CableAction/action`` name.
    ///
    /// - Returns: `true` only when the command was queued on the live connection, as
    ///   ``ChannelSubscription/perform(_:_:)-(String,JSONValue)``; `false` also when the action does not encode
    ///   to a JSON object.
    @discardableResult
    public func perform(_ action: some CableAction) -> Bool {
        untyped.perform(action.action, action, encoder: coders?.encoder)
    }

    /// Sends the action `name` with no data.
    @discardableResult
    public func perform(_ name: String) -> Bool {
        untyped.perform(name)
    }

    /// Ends this handle; see ``ChannelSubscription/unsubscribe()``.
    public func unsubscribe() {
        untyped.unsubscribe()
    }
}

extension ActionCableClient {
    /// Subscribes to a typed channel: `channel`'s encoded properties and ``CableChannel/channel`` are the params.
    ///
    /// ```swift
    /// let room = try client.subscribe(ChatChannel(roomID: 42))
    /// ```
    ///
    /// The rules of ``subscribe(_:)-(JSONValue)`` apply: equal params share one server subscription.
    ///
    /// - Throws: ``CableError`` `unencodableData` when the params do not encode, `dataNotObject` when they do not
    ///   encode to a JSON object.
    public func subscribe<Channel: CableChannel>(_ channel: Channel) throws(CableError) -> TypedSubscription<Channel> {
        let own = Channel.coding.map(CableCoders.init)
        let value: JSONValue
        do {
            value = try JSONValue(encoding: channel, encoder: (own ?? engine.subscriptions.coders).encoder)
        } catch {
            throw CableError.unencodableData(error)
        }
        guard var params = value.objectValue else { throw CableError.dataNotObject() }
        params["channel"] = .string(Channel.channel)
        let untyped = try subscribe(.object(params))
        return TypedSubscription(channel: channel, untyped: untyped, coders: own)
    }
}
