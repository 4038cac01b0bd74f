import CableReactive
import Foundation
import Signals

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

/// Where the servers are. `Scripts/test.d/50-rails-integration` starts them and exports these variables;
/// without `CABLE_RAILS_URL` every suite is disabled (see README.md), so a plain `swift test` leaves them out.
enum Env {
    static let values = ProcessInfo.processInfo.environment
    static let isConfigured = values["CABLE_RAILS_URL"] != nil

    static func require(_ name: String) throws -> String {
        guard let value = values[name], !value.isEmpty else { throw Failure("environment variable \(name) not set") }
        return value
    }

    /// `ws://127.0.0.1:P/cable` of the main server (async adapter, 1 s pings).
    static func railsURL() throws -> String { try require("CABLE_RAILS_URL") }
    /// `http://127.0.0.1:P/control` of the main server.
    static func control() throws -> String { try require("CABLE_CONTROL_URL") }
    /// The two pumas on one redis.
    static func redisA() throws -> String { try require("CABLE_REDIS_A") }
    static func redisB() throws -> String { try require("CABLE_REDIS_B") }
    /// `redis://127.0.0.1:P/0`, for tests that start their own redis pumas.
    static func redisURL() throws -> String { try require("CABLE_REDIS_URL") }
    /// The fault proxy in front of the main server, and its control port.
    static func proxyURL() throws -> String { try require("CABLE_PROXY_URL") }
    static func proxyControl() throws -> String { try require("CABLE_PROXY_CONTROL") }
    /// A second proxy in front of the first one (modes do not combine within one proxy).
    static func proxy2URL() throws -> String { try require("CABLE_PROXY2_URL") }
    static func proxy2Control() throws -> String { try require("CABLE_PROXY2_CONTROL") }

    /// The repository root (for Scripts/rails-server).
    static let root: String =
        values["CABLE_REPO_ROOT"]
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path
}

struct Failure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

// MARK: - time

/// Seconds on CLOCK_MONOTONIC, the clock of the fault proxy's `accepts`.
func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Runs `body`, failing with a timeout after `seconds`. `body` must end when cancelled.
func within<T: Sendable>(
    _ seconds: Double,
    _ what: String,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw Failure("timed out after \(seconds) s waiting for \(what)")
        }
        return value
    }
}

/// Waits for a value of `signal` that satisfies `predicate` (a state's current value counts).
@discardableResult
func waitFor<S: Signal>(
    _ signal: S,
    _ seconds: Double,
    _ what: String,
    where predicate: @escaping @Sendable (S.Element) -> Bool
) async throws -> S.Element {
    let found = try await within(seconds, what) { await signal.first(where: predicate) }
    guard let found else { throw Failure("\(what): the signal finished") }
    return found
}

/// Polls `condition` every 20 ms until it holds; fails after `seconds`. For values the API does not publish
/// as a signal (counters on the server, drop counts, /proc).
func eventually(
    _ seconds: Double,
    _ what: String,
    _ condition: @escaping @Sendable () async throws -> Bool
) async throws {
    let deadline = monotonicNow() + seconds
    while true {
        if try await condition() { return }
        if monotonicNow() > deadline { throw Failure("timed out after \(seconds) s waiting for \(what)") }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
}

/// Reads messages until one satisfies `predicate`; the others are consumed and dropped.
@discardableResult
func nextMessage(
    _ subscription: ChannelSubscription,
    _ seconds: Double = 5,
    _ what: String,
    where predicate: @escaping @Sendable (JSONValue) -> Bool
) async throws -> JSONValue {
    let found = try await within(seconds, what) { () -> JSONValue? in
        for await message in subscription.messages where predicate(message) { return message }
        return nil
    }
    guard let found else { throw Failure("\(what): messages finished") }
    return found
}

// MARK: - recording states

/// Every value a signal published, with the monotonic time it was seen.
final class Recorder<Value: Sendable>: Sendable {
    private let entries = Locked<[(time: Double, value: Value)]>([])
    private let token = Locked<SignalObservation?>(nil)

    init<S: Signal>(_ signal: S) where S.Element == Value {
        let observation = signal.observe { [entries] value in
            entries.withLock { $0.append((monotonicNow(), value)) }
        }
        token.withLock { $0 = observation }
    }

    var all: [(time: Double, value: Value)] { entries.withLock { $0 } }
    var values: [Value] { all.map(\.value) }
}

/// A tiny lock for test bookkeeping (the package's own `Locked` is internal).
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

// MARK: - clients

extension CableOptions {
    /// Short timings for tests. The main server pings every second, so 4 s of silence means stale.
    static func test(
        stale: Double = 4, min: Double = 0.2, max: Double = 1, attempts: Int? = nil, buffer: Int = 128
    ) -> CableOptions {
        var options = CableOptions()
        options.staleTimeout = stale
        options.minReconnectDelay = min
        options.maxReconnectDelay = max
        options.maxReconnectAttempts = attempts
        options.messageBufferSize = buffer
        return options
    }
}

/// A unique suffix for users and streams, so tests never see each other's traffic.
func unique(_ prefix: String) -> String {
    "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())"
}

func makeClient(
    _ base: String,
    query: String? = nil,
    options: CableOptions = .test(),
    network: StateValue<NetworkPath?> = CablePlatform.networkPath,
    onRequest: (@Sendable (inout CableRequest) async throws -> Void)? = nil,
    onUnauthorized: (@Sendable () async throws -> Bool)? = nil
) throws -> ActionCableClient {
    let text = query.map { base + (base.contains("?") ? "&" : "?") + $0 } ?? base
    guard let url = URL(string: text) else { throw Failure("bad url \(text)") }
    return try ActionCableClient(
        url: url, options: options, network: network, onRequest: onRequest, onUnauthorized: onUnauthorized)
}

func isSubscribed(_ state: SubscriptionState) -> Bool {
    if case .subscribed = state { return true }
    return false
}

func isConnecting(_ state: CableState, atLeast attempt: Int = 0) -> Bool {
    if case .connecting(let n) = state { return n >= attempt }
    return false
}

/// Subscribes to an EchoChannel on its own stream and waits for the confirmation.
func echoSubscription(
    _ client: ActionCableClient, stream: String = unique("echo"), seconds: Double = 5
) async throws -> ChannelSubscription {
    let subscription = try client.subscribe(["channel": "EchoChannel", "stream": .string(stream)])
    try await waitFor(subscription.state, seconds, "EchoChannel \(stream) confirmed", where: isSubscribed)
    return subscription
}

/// Performs `echo` with a unique id and waits for the answer.
@discardableResult
func echo(_ subscription: ChannelSubscription, _ data: JSONValue = [:], seconds: Double = 5) async throws -> JSONValue {
    let id = UUID().uuidString
    var payload = data.objectValue ?? [:]
    payload["id"] = .string(id)
    guard subscription.perform("echo", .object(payload)) else { throw Failure("perform echo returned false") }
    return try await nextMessage(subscription, seconds, "echo \(id)") { $0["id"]?.stringValue == id }
}

// MARK: - HTTP

struct HTTPResponse: Sendable {
    var status: Int
    var body: Data
    var text: String { String(decoding: body, as: UTF8.self) }
    func json() throws -> JSONValue { try JSONValue(parsing: text) }
}

/// Plain HTTP to the control endpoints (URLSession; FoundationNetworking on Linux). No proxies.
enum HTTP {
    static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.connectionProxyDictionary = [:]
        configuration.timeoutIntervalForRequest = 30
        return URLSession(configuration: configuration)
    }()

    @discardableResult
    static func request(_ method: String, _ url: String, body: String? = nil) async throws -> HTTPResponse {
        guard let target = URL(string: url) else { throw Failure("bad url \(url)") }
        var request = URLRequest(url: target)
        request.httpMethod = method
        if let body { request.httpBody = Data(body.utf8) }
        // The completion-handler form: the async `data(for:)` needs macOS 12 / iOS 15, above the package's targets.
        let session = session
        return try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                if let error { return continuation.resume(throwing: error) }
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                continuation.resume(returning: HTTPResponse(status: status, body: data ?? Data()))
            }.resume()
        }
    }

    /// POST that must answer 2xx; returns the JSON answer (or the text as a string).
    @discardableResult
    static func post(_ url: String, body: String? = nil) async throws -> JSONValue {
        let response = try await request("POST", url, body: body)
        guard (200..<300).contains(response.status) else {
            throw Failure("POST \(url) → \(response.status) \(response.text)")
        }
        return (try? response.json()) ?? .string(response.text)
    }

    static func get(_ url: String) async throws -> JSONValue {
        let response = try await request("GET", url)
        guard (200..<300).contains(response.status) else {
            throw Failure("GET \(url) → \(response.status) \(response.text)")
        }
        return try response.json()
    }
}

/// The control base (`http://127.0.0.1:P/control`) of a `ws://127.0.0.1:P/cable` URL.
func controlURL(of cableURL: String) -> String {
    var text = cableURL.replacingOccurrences(of: "ws://", with: "http://")
    if let range = text.range(of: "/cable") { text = String(text[..<range.lowerBound]) }
    return text + "/control"
}

/// How many of `user`'s connections are open on the server of `control`.
func connectionCount(_ control: String, user: String? = nil) async throws -> Int {
    let answer = try await HTTP.get(control + "/connections")
    if let user { return answer["users"]?[user]?.intValue ?? 0 }
    return answer["count"]?.intValue ?? -1
}

// MARK: - processes

/// Child processes, without Foundation.Process.
///
/// Foundation.Process (swift-corelibs-foundation) learns that its child exited from EOF on a socket pair
/// whose other end it deliberately leaves open in the child, and only then calls `waitpid`. A child that
/// starts a server in the background (`Scripts/rails-server start`: puma, detached with `setsid`) hands that
/// descriptor on to the server, so the EOF never comes while the server runs: `waitUntilExit()` hangs, with
/// the script already a zombie, until the server dies (see README.md, "Known problem (resolved)").
///
/// Here: `posix_spawn` with stdin `/dev/null`, stdout and stderr into a file, every other descriptor closed
/// (`closefrom`), default signal dispositions and an empty signal mask (nothing of this process's state
/// leaks into a server that outlives the call); then `waitpid` on that one pid.
enum Subprocess {
    struct Exit: Sendable {
        var status: Int32
        /// stdout and stderr, interleaved.
        var output: String
    }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc ≥ 2.34 (Debian 12 has 2.36); not in Swift's Glibc module, so looked up at run time.
    private static let addCloseFrom: CloseFrom? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()

    /// Starts `executable` and returns its pid; the caller must `wait` for it.
    static func spawn(_ executable: String, _ arguments: [String], output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        try check(posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0), "addopen stdin")
        try check(
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644),
            "addopen stdout")
        try check(posix_spawn_file_actions_adddup2(&actions, 1, 2), "dup2 stderr")
        if let addCloseFrom {
            try check(addCloseFrom(&actions, 3), "addclosefrom")
        } else {
            // Older glibc: close what is open now (descriptors opened concurrently may still leak).
            let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            for fd in open.compactMap(Int32.init) where fd > 2 {
                try check(posix_spawn_file_actions_addclose(&actions, fd), "addclose")
            }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        try check(posix_spawnattr_setsigdefault(&attributes, &all), "setsigdefault")
        try check(posix_spawnattr_setsigmask(&attributes, &none), "setsigmask")
        try check(
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)),
            "setflags")

        let argv = ([executable] + arguments).map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        var pid = pid_t()
        let status = (argv + [nil]).withUnsafeBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return EINVAL }
            return posix_spawn(&pid, executable, &actions, &attributes, base, environ)
        }
        try check(status, "posix_spawn \(executable)")
        return pid
    }

    /// Blocks until `pid` ends; returns its exit code, or 128 + the signal that ended it.
    static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 {
            if errno != EINTR { return -1 }
        }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Runs a command to completion, blocking the calling thread.
    static func runBlocking(_ executable: String, _ arguments: [String]) throws -> Exit {
        let output = NSTemporaryDirectory() + "/cable-integration-\(UUID().uuidString).log"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let pid = try spawn(executable, arguments, output: output)
        let status = wait(pid)
        return Exit(status: status, output: (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    /// Runs a command to completion; the wait blocks a thread of its own, not one of the cooperative pool.
    static func run(_ executable: String, _ arguments: [String]) async throws -> Exit {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Swift.Result { try runBlocking(executable, arguments) })
            }
            thread.start()
        }
    }

    private static func check(_ status: Int32, _ what: String) throws {
        guard status == 0 else { throw Failure("\(what): \(String(cString: strerror(status)))") }
    }
}

/// Runs a command to completion; throws on a non-zero exit, with its output.
@discardableResult
func run(_ executable: String, _ arguments: [String]) async throws -> String {
    let result = try await Subprocess.run(executable, arguments)
    guard result.status == 0 else {
        throw Failure(
            "\(executable) \(arguments.joined(separator: " ")) exited \(result.status): \(result.output)")
    }
    return result.output
}

/// A puma started by a test (its own, so it can be stopped or killed); watched by this process's pid.
final class RailsServer: Sendable {
    let port: Int
    let pid: Int32
    private let arguments: [String]

    var cableURL: String { "ws://127.0.0.1:\(port)/cable" }
    var control: String { "http://127.0.0.1:\(port)/control" }

    private static var script: String { Env.root + "/Scripts/rails-server" }

    private init(port: Int, pid: Int32, arguments: [String]) {
        self.port = port
        self.pid = pid
        self.arguments = arguments
    }

    /// `extra` are `Scripts/rails-server start` options (`--redis URL`, `--env K=V`). The puma logs into
    /// `CABLE_LOG_DIR` when the script set it (kept when the run fails).
    static func start(port: Int? = nil, _ extra: [String] = []) async throws -> RailsServer {
        let out = NSTemporaryDirectory() + "/cable-integration-\(UUID().uuidString).out"
        defer { try? FileManager.default.removeItem(atPath: out) }
        var arguments = ["start", "--watch-pid", String(getpid()), "--max-lifetime", "900", "--out", out] + extra
        if let port { arguments += ["--port", String(port)] }
        if let logs = Env.values["CABLE_LOG_DIR"], !logs.isEmpty { arguments += ["--log-dir", logs] }
        try await run(script, arguments)
        let output = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        let fields = output.split(whereSeparator: \.isWhitespace)
        guard fields.count >= 2, let port = Int(fields[0]), let pid = Int32(fields[1]) else {
            throw Failure("rails-server start wrote \(output)")
        }
        return RailsServer(port: port, pid: pid, arguments: extra)
    }

    /// A new puma on the same port, with the same options.
    func restarted() async throws -> RailsServer { try await Self.start(port: port, arguments) }

    /// TERM, then KILL after 5 s (`rails-server stop`): clients see a TCP close without a close frame.
    /// Blocking, so that `defer` can call it.
    func stop() { _ = try? Subprocess.runBlocking(Self.script, ["stop", String(pid)]) }

    /// SIGKILL to the process group: no close frame, no goodbye. Returns once the process is gone.
    func kill() async throws {
        _ = Glibc.kill(-pid, SIGKILL)
        try await run(Self.script, ["stop", String(pid)])  // confirms it is gone (a zombie counts as gone)
    }
}

/// Whether SIGPIPE still has its default action (end the process) here. The suites deliberately do not ignore
/// it: a write to a reset socket without `MSG_NOSIGNAL` anywhere in the client then ends the whole run
/// ("Exited with unexpected signal code 13") instead of passing unnoticed.
func sigpipeEndsTheProcess() -> Bool {
    var current = sigaction()
    guard sigaction(SIGPIPE, nil, &current) == 0 else { return false }
    return current.__sigaction_handler.sa_handler == nil && current.sa_flags & SA_SIGINFO == 0  // SIG_DFL
}

/// Counts of this process's threads and file descriptors.
func taskCount() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1 }
func fdCount() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1 }
