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
/// The params are the value encoded with the client's encoder, plus `"channel"`: ``channel`` (an encoded
/// `channel` property is replaced by it). Messages are decoded with the client's decoder; a message that does
/// not decode is skipped and counted. Give the channel coders of its own with ``encoder`` and ``decoder``.
public protocol CableChannel: Encodable, Sendable {
    /// The type of the channel's messages.
    associatedtype Message: Decodable & Sendable

    /// The channel's class name on the server, such as `"ChatChannel"`: the identifier's `"channel"`.
    static var channel: String { get }

    /// The encoder of this channel's params and actions; `nil` (the default) uses the client's.
    static var encoder: JSONEncoder? { get }

    /// The decoder of this channel's messages; `nil` (the default) uses the client's.
    static var decoder: JSONDecoder? { get }
}

extension CableChannel {
    /// The client's encoder.
    public static var encoder: JSONEncoder? { nil }
    /// The client's decoder.
    public static var decoder: JSONDecoder? { nil }
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
    /// decode is skipped (logged at DEBUG with its key path, and counted in the messages' `undecodableCount`).
    public let messages: CableMessages<Channel.Message>
    private let encoder: JSONEncoder

    init(channel: Channel, untyped: ChannelSubscription, encoder: JSONEncoder, decoder: JSONDecoder) {
        self.channel = channel
        self.untyped = untyped
        self.encoder = encoder
        messages = untyped.messages(as: Channel.Message.self, decoder: decoder)
    }

    /// The identifier sent to the server; see ``ChannelSubscription/identifier``.
    public var identifier: String { untyped.identifier }
    /// This handle's state; see ``ChannelSubscription/state``.
    public var state: StateValue<SubscriptionState> { untyped.state }
    /// What the last reconnect did to this subscription; see ``ChannelSubscription/lastReconnect``.
    public var lastReconnect: StateValue<SubscriptionReconnect?> { untyped.lastReconnect }

    /// Sends `action`, encoded with the channel's encoder, under its ``CableAction/action`` name.
    ///
    /// - Returns: `true` only when the command was queued on the live connection, as
    ///   ``ChannelSubscription/perform(_:_:)-(String,JSONValue)``; `false` also when the action does not encode
    ///   to a JSON object.
    @discardableResult
    public func perform(_ action: some CableAction) -> Bool {
        untyped.perform(action.action, action, encoder: encoder)
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
        let encoder = Channel.encoder ?? JSONEncoder()
        let decoder = Channel.decoder ?? JSONDecoder()
        let value: JSONValue
        do {
            value = try JSONValue(encoding: channel, encoder: encoder)
        } catch {
            throw CableError.unencodableData()
        }
        guard var params = value.objectValue else { throw CableError(.dataNotObject) }
        params["channel"] = .string(Channel.channel)
        let untyped = try subscribe(.object(params))
        return TypedSubscription(channel: channel, untyped: untyped, encoder: encoder, decoder: decoder)
    }
}
