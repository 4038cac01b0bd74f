/// The platform's default transport: `SocketTransport` on Linux (where the package's OpenSSL loader is built),
/// otherwise `URLSessionTransport` (Apple platforms).
///
/// The OS is checked as well as the module: Xcode may build a target that Package.swift restricts to Linux
/// (`.when(platforms: [.linux])`, SwiftPM #6554), and an importable loader must not select the POSIX transport,
/// whose files only compile against Glibc or Musl, on an Apple platform.
func defaultTransport() -> any WebSocketTransport {
    #if os(Linux) && canImport(CCableReactiveOpenSSL)
        SocketTransport()
    #else
        URLSessionTransport()
    #endif
}
