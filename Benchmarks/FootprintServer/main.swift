// The server side of ClientFootprint: a LocalCableServer in a process of its own, so that the client process
// ClientFootprint measures does not load Foundation (CableTesting uses full Foundation; the library does not).
//
//     FootprintServer    (ClientFootprint starts it from its own directory; see Benchmarks/ClientFootprint)
//
// Listens on 127.0.0.1 (port chosen by the kernel), confirms every subscription, pings every 3 s as Rails does,
// takes up to 100,000 connections (RLIMIT_NOFILE's soft limit is raised to the hard one), prints one line
// `listening <port>` and serves until it is killed or its standard input ends (so it never outlives
// ClientFootprint, which holds the other end of that pipe). Never part of `swift test`.

#if os(Linux)
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
    let server: LocalCableServer
    do {
        server = try LocalCableServer(options: options)
    } catch {
        FileHandle.standardError.write(Data("FootprintServer: \(error)\n".utf8))
        exit(1)
    }
    // Unbuffered, so the line reaches the pipe at once.
    FileHandle.standardOutput.write(Data("listening \(server.port)\n".utf8))

    // Serves until end of input (the parent exited or closed its end of the pipe); input itself is ignored.
    var byte: UInt8 = 0
    while true {
        let count = read(STDIN_FILENO, &byte, 1)
        if count == 0 || (count < 0 && errno != EINTR) { break }
    }
    server.stop()
#else
    print("FootprintServer measures Linux processes and runs on Linux only.")
#endif
