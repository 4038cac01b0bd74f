// What /proc says about this process, and FootprintServer as a child process: shared by ClientFootprint and
// SoakBenchmark, which measure a client process that must not load Foundation (the server, on CableTesting and
// full Foundation, runs in the other process for that reason).

#if os(Linux)
    import Glibc

    /// RSS, peak RSS, threads and open descriptors of this process, from /proc/self.
    package struct ProcessSample: Sendable {
        package var rssKiB: Int
        package var peakKiB: Int
        package var threads: Int
        package var fds: Int

        /// Now; nil when /proc/self cannot be read.
        package static func now() -> ProcessSample? {
            guard let status = readFile("/proc/self/status"), let fds = openDescriptors() else { return nil }
            func field(_ name: String) -> Int? {
                let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                return line?.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap { Int($0) }
            }
            guard let rss = field("VmRSS"), let peak = field("VmHWM"), let threads = field("Threads") else {
                return nil
            }
            return ProcessSample(rssKiB: rss, peakKiB: peak, threads: threads, fds: fds)
        }

        /// The whole of a small file such as /proc/self/status, or nil.
        private static func readFile(_ path: String) -> String? {
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { return nil }
            defer { close(fd) }
            var bytes: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else { return nil }
                if count == 0 { return String(decoding: bytes, as: UTF8.self) }
                bytes += buffer[0..<count]
            }
        }

        /// The open descriptors, not counting the one that lists them.
        private static func openDescriptors() -> Int? {
            guard let directory = opendir("/proc/self/fd") else { return nil }
            defer { closedir(directory) }
            var count = 0
            while let entry = readdir(directory) {
                if entry.pointee.d_name.0 != CChar(UInt8(ascii: ".")) { count += 1 }
            }
            return count - 1
        }
    }

    /// FootprintServer (a LocalCableServer in a process of its own) started from this executable's directory,
    /// with its standard input on a pipe: commands go there one per line (see Benchmarks/FootprintServer), and
    /// closing it stops the server.
    package struct FootprintServerProcess {
        package let pid: pid_t
        package let port: Int
        private let input: Int32

        /// Starts it and reads its `listening <port>` line; the error says what failed.
        package static func start() -> Result<FootprintServerProcess, Failure> {
            var executable = CommandLine.arguments[0]
            if !executable.contains("/") {
                var path = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
                let length = readlink("/proc/self/exe", &path, path.count - 1)
                guard length > 0 else { return .failure(Failure("cannot find this executable")) }
                executable = String(decoding: path[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            let server =
                String(executable[..<(executable.lastIndex(of: "/") ?? executable.startIndex)]) + "/FootprintServer"
            guard access(server, X_OK) == 0 else {
                return .failure(
                    Failure("missing \(server); build it: swift build -c release --product FootprintServer"))
            }
            var input: [Int32] = [-1, -1]
            var output: [Int32] = [-1, -1]
            guard pipe(&input) == 0, pipe(&output) == 0 else { return .failure(Failure("pipe: errno \(errno)")) }
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_adddup2(&actions, input[0], STDIN_FILENO)
            posix_spawn_file_actions_adddup2(&actions, output[1], STDOUT_FILENO)
            for fd in input + output { posix_spawn_file_actions_addclose(&actions, fd) }
            let argv: [UnsafeMutablePointer<CChar>?] = [strdup(server), nil]
            defer { free(argv[0]) }
            var pid = pid_t()
            let spawned = posix_spawn(&pid, server, &actions, nil, argv, environ)
            guard spawned == 0 else { return .failure(Failure("posix_spawn \(server): errno \(spawned)")) }
            close(input[0])
            close(output[1])
            defer { close(output[0]) }
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while line.last != UInt8(ascii: "\n") {
                let count = read(output[0], &byte, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { return .failure(Failure("FootprintServer exited before it listened")) }
                line.append(byte)
            }
            let words = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace)
            guard words.count == 2, words[0] == "listening", let port = Int(words[1]) else {
                return .failure(Failure("FootprintServer said \(String(decoding: line, as: UTF8.self))"))
            }
            return .success(FootprintServerProcess(pid: pid, port: port, input: input[1]))
        }

        /// Sends one command line (`drop`, `restart`, …); false when the server has gone.
        @discardableResult
        package func send(_ command: String) -> Bool {
            let bytes = Array((command + "\n").utf8)
            return bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) } == bytes.count
        }

        /// Closes its input, which stops it, and waits for it to exit.
        package func stop() {
            close(input)
            kill(pid, SIGTERM)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }

        package struct Failure: Error, CustomStringConvertible {
            package let description: String
            init(_ description: String) { self.description = description }
        }
    }

    /// Writes `"<executable>: message"` to standard error and exits with `status`: how the measuring tools
    /// (ClientFootprint, SoakBenchmark) give up.
    package func fail(_ message: String, status: Int32 = 1) -> Never {
        let name = CommandLine.arguments.first.flatMap { $0.split(separator: "/").last }.map(String.init) ?? "benchmark"
        let line = Array("\(name): \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        exit(status)
    }

    /// `value` with `places` decimals (FoundationEssentials has no `String(format:)`).
    package func fixed(_ value: Double, _ places: Int = 2) -> String {
        var scale = 1
        for _ in 0..<places { scale *= 10 }
        let scaled = Int((abs(value) * Double(scale)).rounded())
        let fraction = String(scaled % scale)
        let sign = value < 0 && scaled != 0 ? "-" : ""
        let decimals = places > 0 ? "." + String(repeating: "0", count: places - fraction.count) + fraction : ""
        return sign + String(scaled / scale) + decimals
    }

    /// KiB as MiB with two decimals.
    package func mib(_ kib: Int) -> String { fixed(Double(kib) / 1024) }
#endif
