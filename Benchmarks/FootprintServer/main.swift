// The server side of ClientFootprint: a LocalCableServer in a process of its own, so that the client process
// ClientFootprint measures does not load Foundation (CableTesting uses full Foundation; the library does not).
//
//     FootprintServer    (ClientFootprint starts it from its own directory; see Benchmarks/ClientFootprint)
//
// Listens on 127.0.0.1 (port chosen by the kernel), confirms every subscription, pings every 3 s as Rails does,
// takes up to 100,000 connections (RLIMIT_NOFILE's soft limit is raised to the hard one), prints one line
// `listening <port>` and serves until it is killed or its standard input ends (so it never outlives the
// benchmark, which holds the other end of that pipe). Never part of `swift test`.
//
// Commands, one per line on standard input (SoakBenchmark's faults; ClientFootprint sends none), each applied
// to every connection: `drop` (TCP closed without a close frame), `disconnect` (Rails' restart: a disconnect
// frame with reconnect true), `restart` (the server stops and a new one listens on the same port), `refuse`
// (the listener closes: attempts are refused until `accept`), `accept`, and `burst N SIZE` (N broadcasts to
// every subscription, each `{"n":i,"pad":"…"}` of about SIZE bytes). Unknown lines are reported on stderr.

#if os(Linux)
    import CableReactive
    import CableTesting
    import Foundation

    var limit = rlimit()
    if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    var options = LocalCableServer.Options()
    options.maxConnections = 100_000
    // Nothing reads the snapshot's history here: keep the server's own footprint and work small.
    options.historyLimit = 0
    func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("FootprintServer: \(message)\n".utf8))
        exit(1)
    }
    var server: LocalCableServer
    do {
        server = try LocalCableServer(options: options)
    } catch {
        fail("\(error)")
    }
    options.port = server.port  // a restarted server listens where the clients connect
    // Unbuffered, so the line reaches the pipe at once.
    FileHandle.standardOutput.write(Data("listening \(server.port)\n".utf8))

    /// Applies one command line.
    @MainActor func run(_ command: [Substring]) {
        switch command.first {
        case "drop": server.drop()
        case "disconnect": server.disconnect()
        case "refuse": server.refuseConnections()
        case "accept":
            do { try server.acceptConnections() } catch { fail("accept: \(error)") }
        case "restart":
            server.stop()
            do { server = try LocalCableServer(options: options) } catch { fail("restart: \(error)") }
        case "burst":
            guard command.count == 3, let count = Int(command[1]), let size = Int(command[2]), count >= 0, size >= 0
            else { return FileHandle.standardError.write(Data("FootprintServer: bad burst\n".utf8)) }
            let pad = JSONValue.string(String(repeating: "x", count: size))
            for index in 0..<count { server.broadcast(["n": .int(index), "pad": pad]) { _ in true } }
        default:
            FileHandle.standardError.write(Data("FootprintServer: unknown command \(command)\n".utf8))
        }
    }

    // Serves until end of input (the parent exited or closed its end of the pipe), running each line.
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while true {
        let count = read(STDIN_FILENO, &byte, 1)
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        if byte != UInt8(ascii: "\n") {
            line.append(byte)
            continue
        }
        let words = String(decoding: line, as: UTF8.self).split(separator: " ")
        line.removeAll()
        if !words.isEmpty { run(words) }
    }
    server.stop()
#else
    print("FootprintServer measures Linux processes and runs on Linux only.")
#endif
