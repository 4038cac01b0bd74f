import CableReactive
import Foundation

extension LocalCableServer {
    /// How the server answers an upgrade request that reached the mount path; see ``connectionRule``.
    public enum ConnectionDecision: Sendable, Hashable {
        /// Upgrade (101) and welcome per the ``WelcomePolicy``.
        case accept
        /// Answer with this HTTP status (for example 401, 403 or 404) and a short text body, then close.
        case reject(status: Int)
        /// Upgrade (101), then send `{"type":"disconnect","reason":…,"reconnect":…}` and close with 1000, and
        /// never welcome: what Rails does when `connect` calls `reject_unauthorized_connection`.
        case disconnect(reason: String?, reconnect: Bool)

        /// Rails' rejection of a connection's credentials: 101, then `disconnect` with reason `unauthorized`
        /// and `reconnect: false`.
        public static let unauthorized = ConnectionDecision.disconnect(reason: "unauthorized", reconnect: false)
    }

    /// What the server does with a `subscribe` command; see ``subscriptionRule``.
    public enum SubscriptionDecision: Sendable, Hashable {
        /// Send `confirm_subscription` and remember the subscription.
        case confirm
        /// Send `reject_subscription`; the identifier is not remembered, so a later subscribe is decided again.
        case reject
        /// Send nothing and remember nothing, like Rails for an unknown channel class.
        case ignore
    }

    /// Decides each upgrade request; runs on the server thread. See ``LocalCableServer/connectionRule``.
    public typealias ConnectionRule = @Sendable (_ request: Request) -> ConnectionDecision

    /// Decides each `subscribe` whose identifier is a JSON object: receives the decoded identifier (the
    /// channel params) and the connection's upgrade request; runs on the server thread.
    public typealias SubscriptionRule = @Sendable (_ params: JSONValue, _ request: Request) -> SubscriptionDecision

    /// Handles one performed action; runs on the server thread. See ``LocalCableServer/onPerform(_:_:)``.
    public typealias PerformHandler = @Sendable (_ call: PerformCall) -> Void

    /// One `perform` a client made on a confirmed subscription, handed to a ``PerformHandler``.
    ///
    /// Its methods may be called from any thread, also after the handler returned; after the server stopped
    /// they do nothing. Frames they send go out in call order, after the handler returns.
    ///
    /// ```swift
    /// server.onPerform("speak") { call in
    ///     call.broadcast(["text": call.data["text"] ?? nil, "from": .int(call.connection.rawValue)])
    /// }
    /// ```
    public struct PerformCall: Sendable {
        /// The connection that performed.
        public let connection: ConnectionID
        /// The subscription's identifier, exactly as the client sent it.
        public let identifier: String
        /// The identifier decoded (the channel params).
        public let params: JSONValue
        /// The action: `data["action"]`, or `receive` when absent.
        public let action: String
        /// The decoded `data` object, including its `action` member (as Rails passes it).
        public let data: JSONValue
        /// The connection's upgrade request.
        public let request: Request

        let core: ServerCore

        /// Sends `message` to this subscription on this connection: `{"identifier":…,"message":…}`
        /// (Rails' `transmit`).
        public func reply(_ message: JSONValue) {
            core.submit(.transmit(connection, identifier: identifier, message: message))
        }

        /// Sends `message` to every connection subscribed with this identifier, this one included.
        public func broadcast(_ message: JSONValue) {
            core.submit(.broadcast(message, .identifier(identifier)))
        }

        /// Sends `message` to every subscription whose params satisfy `matcher` (on every connection);
        /// `matcher` runs on the server thread.
        public func broadcast(_ message: JSONValue, where matcher: @escaping @Sendable (JSONValue) -> Bool) {
            core.submit(.broadcast(message, .matching(matcher)))
        }

        /// Disconnects this connection: `{"type":"disconnect",…}`, then a close frame.
        public func disconnect(reason: String?, reconnect: Bool) {
            core.submit(.disconnect(.connection(connection), reason: reason, reconnect: reconnect))
        }
    }
}
