import CableReactive
import Foundation

extension LocalCableServer {
    /// An HTTP request the server read: every upgrade attempt, including the ones it answered with an error.
    ///
    /// ```swift
    /// let request = try #require(server.snapshot.value.requests.last)
    /// #expect(request.header("Authorization") == "Bearer tok-alice")
    /// #expect(request.queryValue("token") == "tok-alice")
    /// ```
    public struct Request: Sendable, Hashable {
        /// The TCP connection the request came on.
        public let connection: ConnectionID
        /// The method, e.g. `GET`.
        public let method: String
        /// The request target as sent, e.g. `/cable?token=abc`.
        public let target: String
        /// The target's path, before any `?`.
        public let path: String
        /// The raw query after `?`, without it; `nil` when there is no `?`.
        public let query: String?
        /// The header fields in the order sent; names as sent (compare with ``header(_:)``).
        public let headers: [Header]
        /// The HTTP status the server answered with: 101 for an upgrade; 0 while ``LocalCableServer/connectionRule`` decides.
        public internal(set) var status: Int

        /// One header field.
        public struct Header: Sendable, Hashable {
            /// The field name as the client wrote it.
            public let name: String
            /// The value, with surrounding whitespace removed.
            public let value: String
        }

        /// The value of the header named `name` (case-insensitive); several fields with the name are joined
        /// with `", "`. `nil` when absent.
        public func header(_ name: String) -> String? {
            let values = headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
            return values.isEmpty ? nil : values.joined(separator: ", ")
        }

        /// The subprotocols the client offered in `Sec-WebSocket-Protocol`, in order (every field, split at
        /// commas, trimmed).
        public var subprotocols: [String] {
            (header("Sec-WebSocket-Protocol") ?? "").split(separator: ",")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }

        /// AnyCable's token: what follows `anycable-token.` in the first offered subprotocol that starts with
        /// it (`CableRequest.anyCableToken` on the client), as AnyCable reads it; `nil` when none does or the
        /// token is empty. The server never chooses that subprotocol.
        ///
        /// ```swift
        /// server.connectionRule = { request in request.anyCableToken == "tok-alice" ? .accept : .unauthorized }
        /// ```
        public var anyCableToken: String? {
            let prefix = "anycable-token."
            guard let offered = subprotocols.first(where: { $0.hasPrefix(prefix) }) else { return nil }
            let token = String(offered.dropFirst(prefix.count))
            return token.isEmpty ? nil : token
        }

        /// The first value of the query parameter `name`, percent-decoded (`+` stays `+`); `nil` when absent.
        public func queryValue(_ name: String) -> String? {
            guard let query else { return nil }
            for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let key = String(parts[0]).removingPercentEncoding ?? String(parts[0])
                guard key == name else { continue }
                let value = parts.count > 1 ? String(parts[1]) : ""
                return value.removingPercentEncoding ?? value
            }
            return nil
        }
    }

    /// A text message a client sent on an open connection, decoded as far as it would go.
    ///
    /// Every text message is recorded, including ones Rails would ignore (bad JSON, unknown commands), in the
    /// order received, and before the server acts on it.
    public struct ReceivedCommand: Sendable, Hashable {
        /// The connection it came on.
        public let connection: ConnectionID
        /// The message as sent.
        public let text: String
        /// The `command` member (`subscribe`, `unsubscribe`, `message`, …), or `nil` when the message is not a
        /// JSON object with a string `command`.
        public let command: String?
        /// The `identifier` member, exactly as sent, if it is a string.
        public let identifier: String?
        /// For `message`: the `data` member's JSON text decoded, if it held JSON. For `whisper`: the `data`
        /// member as it is (`null` when absent), since whisper data is JSON, not JSON text.
        public let data: JSONValue?

        /// For `message`: the action performed (`data["action"]`, or `receive` when it has none, as in Rails).
        public var action: String? {
            guard command == "message", let data else { return nil }
            return data["action"]?.stringValue ?? "receive"
        }
    }

    /// One open WebSocket connection, as the server sees it.
    public struct ConnectionInfo: Sendable, Hashable {
        /// The connection's number.
        public let id: ConnectionID
        /// The upgrade request.
        public let request: Request
        /// The identifiers confirmed on this connection and not unsubscribed, in confirmation order, exactly as
        /// the client sent them.
        public var subscriptions: [String]
        /// Whether the welcome was sent.
        public var isWelcomed: Bool
        /// Whether ``LocalCableServer/stall(_:)`` froze it.
        public var isStalled: Bool
        /// Whether the server started closing it (a disconnect, a close frame or a protocol error).
        public var isClosing: Bool
    }

    /// Everything the server has seen, published as one value so a test can wait for any condition on it.
    ///
    /// ```swift
    /// let seen = await server.snapshot.first(within: 5) { $0.commands.contains { $0.action == "speak" } }
    /// ```
    public struct Snapshot: Sendable, Hashable {
        /// The open WebSocket connections (upgraded, socket not yet closed), oldest first.
        public var connections: [ConnectionInfo] = []
        /// The last ``Options/historyLimit`` requests read, oldest first.
        public var requests: [Request] = []
        /// The last ``Options/historyLimit`` text messages received (fewer if their texts pass
        /// ``Options/historyByteLimit``), oldest first.
        public var commands: [ReceivedCommand] = []
        /// Whether the server accepts new TCP connections (false after ``LocalCableServer/refuseConnections()``
        /// and after ``LocalCableServer/stop()``).
        public var isAccepting = true
        /// How many TCP connections were accepted in all.
        public var acceptedCount = 0
        /// With ``Options/pubSub``: the presence ids in each stream that has any, in join order, including
        /// those of ended connections until ``PubSub/presenceTTL`` passes. The stream is a `$pubsub` or Turbo
        /// subscription's plain name, or another subscription's identifier.
        ///
        /// ```swift
        /// #expect(await server.wait { $0.presence["chat/42"] == ["u1"] })
        /// ```
        public var presence: [String: [String]] = [:]

        /// The subscriptions of every open connection, by connection.
        public var subscriptions: [ConnectionID: [String]] {
            Dictionary(uniqueKeysWithValues: connections.map { ($0.id, $0.subscriptions) })
        }
    }
}
