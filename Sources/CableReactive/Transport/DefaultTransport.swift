/// The platform's default transport: `SocketTransport` where OpenSSL is available (Linux), otherwise
/// `URLSessionTransport` (Apple platforms).
func defaultTransport() -> any WebSocketTransport {
    #if canImport(CCableReactiveOpenSSL)
        SocketTransport()
    #else
        URLSessionTransport()
    #endif
}
