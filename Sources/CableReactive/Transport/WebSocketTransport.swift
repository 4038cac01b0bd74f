#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// A source of WebSocket connections: the seam between the Action Cable client and the network.
///
/// The client asks its transport for one connection per attempt. The package ships two:
/// `SocketTransport` (RFC 6455 over POSIX sockets with OpenSSL, the default on Linux) and
/// `URLSessionTransport` (the default on Apple platforms). Plug in your own to use another stack,
/// or a fake one in tests.
///
/// Implementation requirements:
/// - `connect` returns at once; the work (DNS, TCP, TLS, upgrade) happens elsewhere.
/// - `handler` receives events serially, in order, never concurrently with itself, on a thread the
///   transport owns. The first event is `.opened` or `.closed`; `.closed` is always the last event and
///   arrives exactly once, also after ``WebSocketConnection/close(code:reason:)``.
/// - The connection keeps itself alive until `.closed` has been delivered, then releases `handler`.
///
/// What the client promises in return:
/// - It never holds a lock of its own while it calls `connect`, `send` or `close`, and it never blocks in
///   `handler`: `handler` returns once the event is decided on; what it leads to (sends, timers, callbacks)
///   runs outside the client's lock.
/// - While `handler` runs, the transport may hold its own locks, including a non-recursive one that `send`
///   and `close` also take: the client defers any call it makes into that connection from inside the
///   delivery, on the delivering thread, until the delivery has returned, keeping the calls in order (a
///   deferred `send` returns `true`: queued). Calls from other threads, at any time, go straight through.
/// - `connect` may be called from any thread, including from inside the delivery of an earlier connection's
///   `.closed` event (a retry with no delay): it must not take a lock that the delivery holds.
public protocol WebSocketTransport: Sendable {
    /// Starts opening a connection for `request` (a `ws` or `wss` URL), offering `protocols` in
    /// `Sec-WebSocket-Protocol`, with the request's headers.
    ///
    /// - Parameters:
    ///   - request: the URL and headers of the upgrade request.
    ///   - protocols: subprotocols to offer, in order of preference. The server must pick one of them or none.
    ///     When the request has an ``CableRequest/anyCableToken``, `ActionCableClient` puts
    ///     `anycable-token.<token>` first: send it like the others, but never report it as chosen (it is a
    ///     credential, not a protocol), and never log it.
    ///   - handler: receives the connection's events; see the protocol's requirements.
    /// - Returns: the connection, usable at once; `send` returns false until it is open.
    func connect(
        request: CableRequest,
        protocols: [String],
        handler: @escaping @Sendable (WebSocketEvent) -> Void
    ) -> any WebSocketConnection
}

/// One WebSocket connection made by a ``WebSocketTransport``.
///
/// Every method is safe to call from any thread.
public protocol WebSocketConnection: AnyObject, Sendable {
    /// Queues a text message.
    ///
    /// - Returns: `true` when the message was queued on an open connection; `false` when the connection
    ///   is not open yet, is closing, or is closed. A queued message is sent in call order.
    @discardableResult
    func send(text: String) -> Bool

    /// Starts the close handshake with `code` and `reason` (at most 123 bytes of UTF-8), or abandons the
    /// attempt if the connection is not open yet. Idempotent. `.closed` follows.
    func close(code: WebSocketCloseCode, reason: String)
}

/// What a ``WebSocketConnection`` reports, in order.
public enum WebSocketEvent: Sendable, Equatable {
    /// The upgrade succeeded; `protocol` is the subprotocol the server chose, if any.
    case opened(protocol: String?)
    /// A complete, UTF-8 validated text message.
    case text(String)
    /// The connection ended. Always the last event.
    case closed(WebSocketCloseInfo)
}

/// How a connection ended.
public enum WebSocketCloseInfo: Sendable, Equatable {
    /// A close frame was exchanged: `code` is the peer's code (or ours, if we closed first) and
    /// `reason` its UTF-8 reason text.
    case closed(code: WebSocketCloseCode, reason: String)
    /// The connection failed or ended without a close frame.
    case failed(WebSocketError)
}

/// A WebSocket close status code (RFC 6455 §7.4).
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric code.
    public var rawValue: UInt16
    /// A code from its number; any value is accepted, including private-use codes (4000–4999).
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection is fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: an endpoint is going away (a server restart, a page navigation).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer broke the protocol.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: a data type the endpoint cannot accept (for example binary where only text is expected).
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: no status code was present in the close frame. Never sent on the wire.
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: the connection closed without a close frame. Never sent on the wire.
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: a text message was not valid UTF-8.
    public static let invalidFramePayloadData = WebSocketCloseCode(rawValue: 1007)
    /// 1008: a message violated the endpoint's policy.
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a message was too big to process.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1010: the server did not negotiate an extension the client requires.
    public static let mandatoryExtension = WebSocketCloseCode(rawValue: 1010)
    /// 1011: the server met an unexpected condition.
    public static let internalServerError = WebSocketCloseCode(rawValue: 1011)

    /// The number, such as `1000`.
    public var description: String { String(rawValue) }
}

/// Why a WebSocket connection failed. Compare with the static members; the message never holds
/// headers, bodies, URL paths or queries, so it is safe to log.
public struct WebSocketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure: compare with the static members, or switch over them with a `default` (new kinds
    /// may be added in later versions without breaking a `switch`). The kinds that carry a value (an HTTP
    /// status, a close code, an `errno`) expose it as a property.
    ///
    ///     if error.kind == .tls { showCertificateHelp() }
    ///     if let status = error.kind.status, status == 404 { showOriginHelp() }
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's name, as logged: `dnsFailure`, `upgradeRejected`, …
        public let name: String
        /// The HTTP status, for ``upgradeRejected(status:)`` and ``proxyRejected(status:)``.
        public let status: Int?
        /// The close code we sent, for ``protocolViolation(closeCode:)``.
        public let closeCode: WebSocketCloseCode?
        /// The socket call's `errno`, for ``io(errno:)``.
        public let errno: Int32?
        /// The size limit in bytes, for ``messageTooBig(limit:)``.
        public let limit: Int?

        private init(
            _ name: String, status: Int? = nil, closeCode: WebSocketCloseCode? = nil, errno: Int32? = nil,
            limit: Int? = nil
        ) {
            self.name = name
            self.status = status
            self.closeCode = closeCode
            self.errno = errno
            self.limit = limit
        }

        /// The host name could not be resolved.
        public static let dnsFailure = Kind("dnsFailure")
        /// No address accepted the TCP connection.
        public static let connectionRefused = Kind("connectionRefused")
        /// The device has no network to connect over, for now: on Apple platforms, URLSession's
        /// `notConnectedToInternet` (-1009), `internationalRoamingOff` (-1018), `callIsActive` (-1019) and
        /// `dataNotAllowed` (-1020). Retried with backoff, as an iPhone is offline only for a while.
        ///
        /// On watchOS it also means that the system refuses the app a WebSocket at all: watchOS allows what
        /// Apple calls low-level networking, `URLSessionWebSocketTask` included, only while the app streams audio
        /// or runs a CallKit call (TN3135), and refuses it otherwise. Retrying cannot change that, so a watch app
        /// should gate its client on ``CablePlatform/networkAvailable``, which stays `false` there.
        public static let networkUnavailable = Kind("networkUnavailable")
        /// The TCP connection, TLS handshake or HTTP upgrade took longer than the connect timeout.
        public static let timeout = Kind("timeout")
        /// The TLS handshake failed for another reason than the certificate (protocol version, cipher, a
        /// connection lost during the handshake). Retried.
        public static let tls = Kind("tls")
        /// The server's certificate was refused: not trusted (unknown CA, self-signed), expired or not yet
        /// valid, issued for another host, or matching none of the pinned keys; or the extra CA file could not
        /// be read. Retrying cannot help, so the client stops (``CableStopReason/Kind-swift.struct/permanentFailure``).
        public static let certificate = Kind("certificate")
        /// The platform refused to open a plain-text connection: App Transport Security on Apple platforms
        /// allows `ws://` only to hosts the app's Info.plist exempts. Use `wss://`. The client stops.
        public static let insecureConnectionBlocked = Kind("insecureConnectionBlocked")
        /// The system's TLS library could not be loaded: on Linux, wss:// needs OpenSSL 3's libssl (Debian:
        /// `libssl3`), which the transport opens on the first wss:// attempt. The client stops.
        public static let tlsUnavailable = Kind("tlsUnavailable")
        /// The server answered the upgrade with a status other than 101.
        public static func upgradeRejected(status: Int) -> Kind { Kind("upgradeRejected", status: status) }
        /// The HTTP proxy refused the tunnel (`CONNECT`) with `status`: 407 when it wants credentials (401 is what
        /// some proxies, tinyproxy among them, answer to wrong ones), 403 when it forbids the destination,
        /// 502/503/504 (or 500) when it could not reach the server. 407, 401 and 403 stop the client (retrying
        /// cannot change the proxy's answer); the others are retried. Not an
        /// ``upgradeRejected(status:)``: the server was never asked, so ``CableDisconnect/httpStatus`` is `nil`
        /// and a 403 here never calls `onUnauthorized`.
        public static func proxyRejected(status: Int) -> Kind { Kind("proxyRejected", status: status) }
        /// The proxy configured (or named by `https_proxy` and the like) cannot be used: a scheme other than
        /// `http://`, no host, a bad port. The client stops rather than bypass a proxy the network may require.
        public static let invalidProxy = Kind("invalidProxy")
        /// The upgrade response was malformed or did not match the request (accept key, headers, subprotocol).
        public static let invalidHandshake = Kind("invalidHandshake")
        /// The peer broke RFC 6455; we closed with `closeCode`.
        public static func protocolViolation(closeCode: WebSocketCloseCode) -> Kind {
            Kind("protocolViolation", closeCode: closeCode)
        }
        /// The peer sent a message (or frame) larger than the transport accepts, `limit` bytes (the smaller of
        /// ``SocketTransport/Options-swift.struct/maxFrameSize`` and
        /// ``SocketTransport/Options-swift.struct/maxMessageSize``, 1 MiB by default); we closed with 1009
        /// (``closeCode``). Retried like any lost connection; if the server keeps sending it, raise the limit.
        public static func messageTooBig(limit: Int) -> Kind {
            Kind("messageTooBig", closeCode: .messageTooBig, limit: limit)
        }
        /// The connection closed without a close frame (code 1006).
        public static let abnormalClosure = Kind("abnormalClosure")
        /// A socket call failed with `errno`.
        public static func io(errno: Int32) -> Kind { Kind("io", errno: errno) }
        /// The URL is not a usable ws or wss URL. The client stops.
        public static let invalidURL = Kind("invalidURL")

        /// Whether retrying cannot help, so the client stops instead of retrying: ``certificate``,
        /// ``insecureConnectionBlocked``, ``tlsUnavailable``, ``invalidURL``, ``invalidProxy``, and a proxy's 407,
        /// 401 or 403. Offline, refused, lost and timed-out connections, rejected upgrades, other proxy refusals and
        /// other TLS failures are retried.
        package var isPermanent: Bool {
            switch self {
            case .certificate, .insecureConnectionBlocked, .tlsUnavailable, .invalidURL, .invalidProxy: true
            case .proxyRejected(status: 407), .proxyRejected(status: 401), .proxyRejected(status: 403): true
            default: false
            }
        }

        /// The name with its value, e.g. `upgradeRejected(status: 404)`.
        public var description: String {
            if let status { return "\(name)(status: \(status))" }
            if let limit { return "\(name)(limit: \(limit))" }
            if let closeCode { return "\(name)(closeCode: \(closeCode))" }
            if let errno { return "\(name)(errno: \(errno))" }
            return name
        }
    }

    /// The kind of failure.
    public var kind: Kind
    /// A short, log-safe explanation.
    public var detail: String

    /// An error of `kind`, with a log-safe `detail`.
    public init(_ kind: Kind, detail: String = "") {
        self.kind = kind
        self.detail = detail
    }

    /// The HTTP status of a rejected upgrade, if this is one.
    package var httpStatus: Int? { kind.name == "upgradeRejected" ? kind.status : nil }

    /// The kind and detail; log-safe.
    public var description: String { detail.isEmpty ? "\(kind)" : "\(kind): \(detail)" }

    /// Errors are equal when their kinds are: `detail` is diagnostics, not identity, so
    /// `error == WebSocketError(.timeout)` holds whatever the detail says.
    public static func == (lhs: WebSocketError, rhs: WebSocketError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind only, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }
}
