import Signals

#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(os)
    import os
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The severity of a log line.
public enum CableLogLevel: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// Details for debugging: ignored input, timers, transport events.
    case debug
    /// State changes: connected, subscribed, reconnecting.
    case info
    /// Something the app may want to know: dropped messages, a rejected subscription, and every stop
    /// (`stopped kind=…`: the client gave up retrying; forward WARN and above to see it).
    case warn
    /// A fault inside the client itself. Nothing the network or the server does logs at this level: a stop
    /// is a WARN.
    case error

    /// Orders levels from `debug` to `error`.
    public static func < (lhs: CableLogLevel, rhs: CableLogLevel) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The level's name in capitals, as printed in log lines.
    public var description: String {
        switch self {
        case .debug: "DEBUG"
        case .info: "INFO"
        case .warn: "WARN"
        case .error: "ERROR"
        }
    }
}

/// Where log lines go. Lines are `event key=value …` and are redacted by construction: they hold only
/// host[:port] (the server's, and that of the HTTP proxy a connection goes through), state names, attempt numbers, subscription serials (`#3`), close codes, counts and error
/// type names, never headers, URL paths or queries, identifiers' params, payloads or error messages, so they
/// are safe to send to a crash reporter.
///
/// ```swift
/// CableLog.logger = .platform                          // os.Logger on Apple platforms, stderr on Linux
/// CableLog.logger = CableLogger(minimumLevel: .warn) { level, line in myReporter.add("\(level) \(line)") }
/// ```
///
/// The sink is called on the client's threads, outside its locks; it must not block for long.
/// A sink that throws cannot exist, and one that crashes is the app's own.
public struct CableLogger: Sendable {
    /// Lines below this level are not rendered at all.
    public var minimumLevel: CableLogLevel
    private let sink: @Sendable (CableLogLevel, String) -> Void

    /// A logger that passes lines at or above `minimumLevel` to `sink`.
    public init(minimumLevel: CableLogLevel = .debug, _ sink: @escaping @Sendable (CableLogLevel, String) -> Void) {
        self.minimumLevel = minimumLevel
        self.sink = sink
    }

    /// Logs nothing: the default.
    public static let none = CableLogger(minimumLevel: .error) { _, _ in }

    /// `os.Logger` (subsystem "CableReactive") on Apple platforms; standard error elsewhere. INFO and up.
    public static let platform = CableLogger(minimumLevel: .info) { level, line in
        #if canImport(os)
            if #available(iOS 14, macOS 11, tvOS 14, watchOS 7, *) {
                let logger = PlatformLogger.cable.logger
                switch level {
                case .debug: logger.debug("\(line, privacy: .public)")
                case .info: logger.info("\(line, privacy: .public)")
                case .warn: logger.warning("\(line, privacy: .public)")
                case .error: logger.error("\(line, privacy: .public)")
                }
            } else {
                NSLog("%@ %@", level.description, line)
            }
        #else
            // One unbuffered write per line, so lines from several threads never interleave mid-line.
            var text = "CableReactive \(level) \(line)\n"
            text.withUTF8 { bytes in _ = write(STDERR_FILENO, bytes.baseAddress, bytes.count) }
        #endif
    }

    func log(_ level: CableLogLevel, _ line: String) {
        guard level >= minimumLevel else { return }
        sink(level, line)
    }
}

#if canImport(os)
    /// The `os.Logger` of ``CableLogger/platform``: made once for the process, not once per line.
    ///
    /// A `static let` must hold a `Sendable` value in Swift 6 mode, and whether `os.Logger` is marked `Sendable`
    /// depends on the SDK, so the logger is kept in this wrapper, which compiles either way. `@unchecked
    /// Sendable` claims what the compiler cannot check here, and it holds: `logger` is immutable, and an
    /// `os.Logger` may be used from any thread at once (it only hands each message to the unified logging
    /// system; Apple's developer forums thread 747816). With an SDK that marks `Logger` `Sendable`, the wrapper
    /// is merely redundant.
    @available(iOS 14, macOS 11, tvOS 14, watchOS 7, *)
    private struct PlatformLogger: @unchecked Sendable {
        static let cable = PlatformLogger(logger: Logger(subsystem: "CableReactive", category: "cable"))

        let logger: Logger
    }
#endif

/// The process-wide logger of every ``ActionCableClient``. Silent until the app sets it.
public enum CableLog {
    private static let current = Locked(CableLogger.none)

    /// The logger; set it once at start-up. Reading and writing are thread-safe.
    public static var logger: CableLogger {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

}

/// Where one client's log lines go and what identifies them: the host, the app's label for the client, and
/// the client's own logger (the process-wide ``CableLog/logger`` when it has none).
struct LogContext: Sendable {
    static let maxLabelLength = 32

    let host: String
    /// Reduced to safe characters (ASCII letters, digits, `.`, `_`, `-`; anything else becomes `?`) and
    /// 32 characters, so a label cannot break a line's `key=value` shape.
    let label: String?
    let logger: CableLogger?

    init(host: String, label: String? = nil, logger: CableLogger? = nil) {
        self.host = host
        self.label = label.map { loggableText($0, limit: Self.maxLabelLength, extra: "-.") }
        self.logger = logger
    }

    func emit(_ event: LogEvent) {
        let logger = logger ?? CableLog.logger
        guard event.level >= logger.minimumLevel else { return }
        logger.log(event.level, event.render(host: host, label: label))
    }
}

/// One typed field of a log line; the closed set is what keeps lines free of secrets.
enum LogField: Sendable, Equatable {
    case attempt(Int)
    case state(CableState)
    case subscription(Int)
    case closeCode(UInt16)
    case delay(TimeInterval)
    case count(Int)
    /// A yes/no fact under its own name (`reconnect=false`, `open=true`), so a line says what it means.
    case flag(StaticString, Bool)
    case operation(StaticString)
    /// A server disconnect reason: only known reasons are printed, anything else is `other`.
    case reason(String?)
    /// An error, printed as its type name only.
    case errorType(String)
    case frameType(StaticString)
    /// Why the client stopped: the kind's fixed name only.
    case stopKind(CableStopReason.Kind)
    /// Where decoding failed: coding keys and indexes, already reduced to safe characters (``DecodingFailure``).
    case keyPath(String)
    /// A channel's class name (`ChatChannel`, `$pubsub`), never its other params; reduced to safe characters.
    case channel(String)
    /// A size limit in bytes.
    case limit(Int)
    /// A size in bytes.
    case size(Int)
    /// What made the client check its connection (`network`, `foreground`, `wake`).
    case trigger(StaticString)
    /// The HTTP proxy a connection tunnels through: `proxy=host:port` (an IPv6 host in brackets), the host
    /// reduced to safe characters; never credentials.
    case proxy(host: String, port: UInt16)
    /// A connection that goes to its server directly: `proxy=none`.
    case noProxy

    static func == (lhs: LogField, rhs: LogField) -> Bool { lhs.rendered == rhs.rendered }

    static let knownReasons: Set<String> = [
        "unauthorized", "token_expired", "server_restart", "remote", "invalid_request", "idle_timeout", "no_pong",
        "too_slow", "max_reconnect_attempts",
    ]

    var rendered: String {
        switch self {
        case .attempt(let attempt): "attempt=\(attempt)"
        case .state(let state): "state=\(state.name)"
        case .subscription(let serial): "sub=#\(serial)"
        case .closeCode(let code): "code=\(code)"
        case .delay(let delay): "delay=\(DecimalText.threePlaces(delay))s"
        case .count(let count): "count=\(count)"
        case .flag(let name, let value): "\(name)=\(value)"
        case .operation(let name): "op=\(name)"
        case .reason(let reason):
            "reason=\(reason.map { Self.knownReasons.contains($0) ? $0 : "other" } ?? "none")"
        case .errorType(let name): "error=\(name)"
        case .frameType(let name): "frame=\(name)"
        case .stopKind(let kind): "kind=\(kind.name)"
        case .keyPath(let path): "path=\(path)"
        case .channel(let name): "channel=\(loggableText(name, limit: 64, extra: ":$"))"
        case .limit(let bytes): "limit=\(bytes)"
        case .size(let bytes): "size=\(bytes)"
        case .trigger(let name): "trigger=\(name)"
        case .proxy(let host, let port):
            host.contains(":")
                ? "proxy=[\(loggableText(host, limit: 64, extra: ":.%"))]:\(port)"
                : "proxy=\(loggableText(host, limit: 253, extra: ".-")):\(port)"
        case .noProxy: "proxy=none"
        }
    }
}

/// A structured log event, rendered to `name host=… key=value …` only when a logger wants it.
struct LogEvent: Sendable, Equatable {
    var level: CableLogLevel
    var name: StaticStringBox
    var fields: [LogField]

    init(level: CableLogLevel, name: StaticString, fields: [LogField]) {
        self.level = level
        self.name = StaticStringBox(name)
        self.fields = fields
    }

    func render(host: String, label: String? = nil) -> String {
        let client = label.map { ["client=\($0)"] } ?? []
        return ([name.description, "host=\(host)"] + client + fields.map(\.rendered)).joined(separator: " ")
    }
}

extension LogEvent {
    /// A connection's `transport_route` line: `proxy=host:port` (INFO) through a proxy, `proxy=none
    /// bypassed=true` (INFO) when the bypass list sent it directly, `proxy=none` (DEBUG) when no proxy applies.
    /// Never the proxy's credentials (the route has none), never the server's path or query.
    static func route(_ route: ConnectionRoute) -> LogEvent {
        switch route {
        case .direct: LogEvent(level: .debug, name: "transport_route", fields: [.noProxy])
        case .bypassed: LogEvent(level: .info, name: "transport_route", fields: [.noProxy, .flag("bypassed", true)])
        case .proxy(let host, let port):
            LogEvent(level: .info, name: "transport_route", fields: [.proxy(host: host, port: port)])
        }
    }
}

/// A `StaticString` that can be compared: log event names are literals, never runtime text.
struct StaticStringBox: Sendable, Equatable, CustomStringConvertible {
    let value: StaticString
    init(_ value: StaticString) { self.value = value }
    var description: String { value.description }
    static func == (lhs: StaticStringBox, rhs: StaticStringBox) -> Bool { lhs.description == rhs.description }
}

extension URL {
    /// `host[:port]` and nothing else: the only part of the URL that logs may show.
    var logHost: String {
        let host = self.host ?? "?"
        let shown = host.contains(":") ? "[\(host)]" : host
        return port.map { "\(shown):\($0)" } ?? shown
    }
}

/// Numbers in log lines, without Foundation's formatter (not in FoundationEssentials).
package enum DecimalText {
    /// `value` with three decimals (`1.250`, `-0.020`); a non-finite or huge value prints as Swift prints it.
    package static func threePlaces(_ value: Double) -> String {
        let scaled = (value * 1000).rounded()
        guard scaled.magnitude < 1e15 else { return "\(value)" }
        let total = Int(scaled.magnitude)
        let fraction = String(total % 1000)
        let sign = scaled < 0 ? "-" : ""
        return "\(sign)\(total / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
