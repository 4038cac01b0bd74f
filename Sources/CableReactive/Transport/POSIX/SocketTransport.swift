#if os(Linux) && canImport(CCableReactiveOpenSSL)
    import Dispatch

    #if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
        import FoundationEssentials
    #else
        import Foundation
    #endif

    /// RFC 6455 WebSockets over POSIX sockets, with TLS from OpenSSL: the default transport on Linux.
    ///
    /// Each connection gets one dedicated I/O thread. That thread resolves the host (`getaddrinfo`, on a
    /// helper thread it can abandon, never on the caller's thread), connects with Happy Eyeballs
    /// (RFC 8305: IPv6 and IPv4 addresses interleaved, the next one started every
    /// ``Options-swift.struct/connectionAttemptDelay`` while earlier ones go on, the first to connect wins),
    /// runs the TLS handshake and the HTTP upgrade, and then waits in `poll` on the socket and a wake-up
    /// socket pair. `send` and `close` only queue work under a lock and wake that thread, so they are cheap
    /// and safe from any thread, including from inside the handler.
    ///
    /// **Threading.** The handler runs on the connection's I/O thread, serially and in wire order.
    /// Do not block in it: while it runs, the connection reads and writes nothing.
    ///
    /// **Lifetime.** The I/O thread keeps the connection (and the handler) alive until `.closed` has
    /// been delivered; then it releases the handler and exits. You need not keep a reference to the
    /// connection to keep receiving, only to send or close.
    ///
    /// **Closing.** `close(code:reason:)` sends a close frame and waits up to
    /// ``Options-swift.struct/closeTimeout`` for the peer's; `.closed(.closed(code:reason:))` then
    /// carries your code and reason (or `.failed` with `.timeout` if the peer never answered). Called
    /// before the connection opened, it abandons the attempt and reports your code and reason the same
    /// way. A close started by the peer reports the peer's code (1005 when its frame had none). A peer
    /// that breaks the protocol gets a close frame with 1002, 1003 (binary messages: this transport is
    /// text-only), 1007 or 1009, and you get `.failed` with `.protocolViolation(closeCode:)`.
    ///
    /// **Exiting.** A process may exit at any moment, also while connections are resolving, connecting or
    /// in their TLS handshake: OpenSSL is initialized without its at-exit cleanup, so exit never frees
    /// OpenSSL's state under a running I/O thread, and an attempt closed before its TLS setup never starts
    /// it. `close` does not wait for the I/O thread (nothing needs to): when the process exits first, the
    /// kernel closes the socket and the server sees the connection end, as it would after a close frame.
    ///
    /// **Logging.** Each attempt logs one `transport_route` line before it connects: `proxy=host:port` (INFO)
    /// when it tunnels through an HTTP proxy, `proxy=none bypassed=true` (INFO) when the proxy's bypass list or
    /// `no_proxy` sends it directly, and `proxy=none` (DEBUG) when no proxy applies; never the proxy's
    /// credentials, never the URL's path or query. The transport has no logger: it reports the route to the
    /// `ActionCableClient` that uses it, which logs the line with its own logger, host and label
    /// (`transport_route host=example.com proxy=proxy.corp:3128`). A transport used on its own logs nothing.
    ///
    /// **TLS.** The configured OpenSSL context (system trust store plus
    /// ``Options-swift.struct/tlsCAFilePath``) is made once per CA file and shared by every connection.
    ///
    /// Available where OpenSSL is (Linux); on Apple platforms use `URLSessionTransport`.
    ///
    /// ```swift
    /// let transport = SocketTransport(options: .init(connectTimeout: 5))
    /// let request = CableRequest(url: URL(string: "wss://example.com/cable")!)
    /// let connection = transport.connect(request: request, protocols: ["actioncable-v1-json"]) { event in
    ///     switch event {
    ///     case .opened(let chosen): print("open, protocol", chosen ?? "none")
    ///     case .text(let message): print(message)
    ///     case .closed(let info): print("closed:", info)
    ///     }
    /// }
    /// connection.send(text: #"{"command":"subscribe","identifier":"{}"}"#)  // false until opened
    /// connection.close(code: .normalClosure, reason: "bye")
    /// ```
    public struct SocketTransport: WebSocketTransport {
        /// Limits and settings for every connection the transport opens.
        public struct Options: Sendable {
            /// Seconds allowed for name resolution, TCP connect, TLS handshake and HTTP upgrade
            /// together. Default 10: generous for mobile networks, short enough to retry soon. A resolver
            /// that has not answered by then fails the attempt with `.timeout` ("name resolution"), and
            /// `close` abandons a lookup at once: `getaddrinfo` runs on a helper thread that is left to
            /// finish on its own.
            public var connectTimeout: Double
            /// Seconds to wait for a pending TCP connect before also trying the next resolved address
            /// (Happy Eyeballs, RFC 8305 §5); the earlier attempts go on, the first to connect wins and
            /// the others are closed at once. An attempt that fails outright (refused, unreachable) starts
            /// the next address without waiting. Addresses alternate between IPv6 and IPv4, IPv6 first, so
            /// a dual-stack host whose IPv6 route drops packets connects over IPv4 this much later instead
            /// of after the whole ``connectTimeout``. Default 0.25; clamped to 0.01...2 (the range RFC 8305
            /// allows: shorter floods the network with attempts, longer gives up the point of racing).
            public var connectionAttemptDelay: Double
            /// Seconds to wait for the peer's close frame after we sent ours before dropping the
            /// connection (reported as a `.timeout` failure). Default 5.
            public var closeTimeout: Double
            /// The largest frame payload accepted; a bigger frame closes the connection with 1009
            /// before any of its payload is buffered. Default 1 MiB.
            public var maxFrameSize: Int
            /// The largest message accepted, summed over its fragments and measured after inflating;
            /// bigger closes with 1009. Default 1 MiB: Action Cable messages are a few KiB.
            public var maxMessageSize: Int
            /// The most bytes that may wait to be sent: text that `send` queued plus the frames the socket has
            /// not accepted yet (TLS records under TLS). A `send` that would pass it returns `false` (so no
            /// single message can be larger); once the peer takes more, `send` succeeds again. Reading goes on
            /// meanwhile, so a slow uplink never stops pings, data or close frames from arriving. Default
            /// 8 MiB; at most 4 GiB.
            public var maxPendingSendBytes: Int
            /// A PEM file of extra trusted CA certificates, used in addition to the system store
            /// (for a private CA or a test server). Default `nil`.
            public var tlsCAFilePath: String?
            /// Public keys the server must present, in addition to a certificate that verifies: the
            /// connection fails with `.certificate` unless some certificate in the chain the server sends
            /// has one of these keys. Pin a backup key too, or a key rotation locks every client out.
            /// Default empty: no pinning. `URLSessionTransport` has the same option.
            public var tlsPins: Set<CertificatePin>
            /// Offers permessage-deflate (RFC 7692) in the upgrade. Default `false`: Action Cable
            /// messages are small and compressing them mostly costs CPU.
            public var enablePerMessageDeflate: Bool
            /// How connections reach the server: ``Proxy-swift.enum/direct`` (the default), through an
            /// ``HTTPProxy`` with `CONNECT`, or as `https_proxy` / `http_proxy` / `no_proxy` say
            /// (``Proxy-swift.enum/environment``).
            public var proxy: Proxy
            /// Makes the random source of the `Sec-WebSocket-Key` and frame masking keys, once per
            /// connection. Default: `SystemRandomNumberGenerator`. Inject a seeded one in tests.
            public var makeRandomNumberGenerator: @Sendable () -> any RandomNumberGenerator
            /// Resolves a host name that is not an IP literal to its TCP addresses, in preference order. It
            /// runs on a helper thread of its own, which the connection abandons at its deadline or on
            /// `close`, so it may block. Default ``AddressResolver/resolve(host:port:)``; tests inject one.
            package var resolver: @Sendable (String, UInt16) throws(WebSocketError) -> [SocketAddress]

            /// Creates options; every parameter defaults to the value documented on its property.
            public init(
                connectTimeout: Double = 10,
                connectionAttemptDelay: Double = 0.25,
                closeTimeout: Double = 5,
                maxFrameSize: Int = 1 << 20,
                maxMessageSize: Int = 1 << 20,
                maxPendingSendBytes: Int = 8 << 20,
                tlsCAFilePath: String? = nil,
                tlsPins: Set<CertificatePin> = [],
                enablePerMessageDeflate: Bool = false,
                proxy: Proxy = .direct,
                makeRandomNumberGenerator: @escaping @Sendable () -> any RandomNumberGenerator = {
                    SystemRandomNumberGenerator()
                }
            ) {
                precondition(maxFrameSize >= 125 && maxMessageSize >= 0, "API misuse: limits too small")
                // zlib and the 64-bit frame length handle more, but no sane message needs 4 GiB.
                precondition(maxPendingSendBytes <= Int(UInt32.max), "API misuse: maxPendingSendBytes above 4 GiB")
                self.connectTimeout = connectTimeout
                self.connectionAttemptDelay = connectionAttemptDelay
                self.closeTimeout = closeTimeout
                self.maxFrameSize = maxFrameSize
                self.maxMessageSize = maxMessageSize
                self.maxPendingSendBytes = maxPendingSendBytes
                self.tlsCAFilePath = tlsCAFilePath
                self.tlsPins = tlsPins
                self.enablePerMessageDeflate = enablePerMessageDeflate
                self.proxy = proxy
                self.makeRandomNumberGenerator = makeRandomNumberGenerator
                resolver = { host, port throws(WebSocketError) in try AddressResolver.resolve(host: host, port: port) }
            }
        }

        /// The settings of every connection this transport opens.
        public var options: Options

        /// Creates a transport whose connections all use `options`.
        public init(options: Options = Options()) {
            self.options = options
        }

        /// Starts a connection on a new I/O thread and returns at once; see the type's discussion.
        public func connect(
            request: CableRequest,
            protocols: [String],
            handler: @escaping @Sendable (WebSocketEvent) -> Void
        ) -> any WebSocketConnection {
            start(request: request, protocols: protocols, receiver: nil, handler: handler)
        }
    }

    extension SocketTransport.Options: CustomStringConvertible, CustomReflectable {
        /// Every setting by name, except the random source and the resolver (closures, nothing to read), and
        /// with the proxy as ``SocketTransport/Proxy-swift.enum/description`` shows it, never with its
        /// credentials; pins are public keys' hashes, not secrets. What `print`, `"\(options)"` and
        /// `String(reflecting:)` show, so options may be logged:
        ///
        ///     SocketTransport.Options(connectTimeout: 10.0, connectionAttemptDelay: 0.25, closeTimeout: 5.0,
        ///     maxFrameSize: 1048576, maxMessageSize: 1048576, maxPendingSendBytes: 8388608, tlsCAFilePath: nil,
        ///     tlsPins: [], enablePerMessageDeflate: false, proxy: http(http://proxy.corp:3128 (credentials)))
        public var description: String {
            let fields = Self.describedFields(of: self).map { "\($0.name): \($0.value)" }
            return "SocketTransport.Options(\(fields.joined(separator: ", ")))"
        }

        /// The same settings as ``description``, for `dump` and the debugger: no closures, no credentials.
        public var customMirror: Mirror {
            Mirror(
                self,
                children: [
                    "connectTimeout": connectTimeout, "connectionAttemptDelay": connectionAttemptDelay,
                    "closeTimeout": closeTimeout, "maxFrameSize": maxFrameSize, "maxMessageSize": maxMessageSize,
                    "maxPendingSendBytes": maxPendingSendBytes, "tlsCAFilePath": tlsCAFilePath as Any,
                    "tlsPins": tlsPins.map(\.description).sorted(), "enablePerMessageDeflate": enablePerMessageDeflate,
                    "proxy": proxy,
                ],
                displayStyle: .struct)
        }

        private static func describedFields(of options: Self) -> [(name: String, value: String)] {
            [
                ("connectTimeout", "\(options.connectTimeout)"),
                ("connectionAttemptDelay", "\(options.connectionAttemptDelay)"),
                ("closeTimeout", "\(options.closeTimeout)"),
                ("maxFrameSize", "\(options.maxFrameSize)"),
                ("maxMessageSize", "\(options.maxMessageSize)"),
                ("maxPendingSendBytes", "\(options.maxPendingSendBytes)"),
                ("tlsCAFilePath", options.tlsCAFilePath.map { String(reflecting: $0) } ?? "nil"),
                ("tlsPins", "[\(options.tlsPins.map(\.description).sorted().joined(separator: ", "))]"),
                ("enablePerMessageDeflate", "\(options.enablePerMessageDeflate)"),
                ("proxy", options.proxy.description),
            ]
        }
    }

    extension SocketTransport: NativeTransport {
        /// Like ``connect(request:protocols:handler:)``, but text messages go to `receiver` as validated UTF-8
        /// bytes (no `String` per message) instead of reaching `handler` as `.text` events. `handler` still
        /// gets `.opened` and `.closed`. See `TextReceiver`.
        package func connect(
            request: CableRequest,
            protocols: [String],
            receiver: TextReceiver,
            handler: @escaping @Sendable (WebSocketEvent) -> Void
        ) -> any WebSocketConnection {
            start(request: request, protocols: protocols, receiver: receiver, handler: handler)
        }

        /// Its connections send pings (``PingingConnection``) and report the pongs to the receiver.
        package var pings: Bool { true }

        private func start(
            request: CableRequest,
            protocols: [String],
            receiver: TextReceiver?,
            handler: @escaping @Sendable (WebSocketEvent) -> Void
        ) -> any WebSocketConnection {
            let connection = SocketConnection(maxPendingBytes: options.maxPendingSendBytes)
            let options = options
            let started = IOThread.start {
                ConnectionWorker(
                    connection: connection,
                    request: request,
                    protocols: protocols,
                    options: options,
                    receiver: receiver,
                    handler: handler
                ).run()
            }
            if started != 0 {
                // No thread for this connection (the process is at its thread limit): it ends at once,
                // reported off the caller's thread as every event is.
                connection.markClosed()
                let failure = WebSocketError(.io(errno: started), detail: "pthread_create failed")
                DispatchQueue.global().async { handler(.closed(.failed(failure))) }
            }
            return connection
        }
    }
#endif
