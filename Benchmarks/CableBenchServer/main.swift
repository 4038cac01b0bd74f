// A loopback Action Cable bench sender for CableBench (and any other client).
//
//     CableBenchServer N SUBS [MESSAGE_BYTES [RATE]]
//
// Listens on 127.0.0.1 (port chosen by the kernel), prints `listening <port>`, serves one client and exits:
// welcome, a confirm for every subscribe, then, once SUBS distinct subscriptions are confirmed, N data frames
// round-robin over them (`message` = MESSAGE_BYTES of JSON, default 64) and one `{"end":true}` message, on the
// first subscription. See `CableWorkload`.
//
// RATE (messages per second, default 0 = as fast as the socket takes them) paces the data frames on absolute
// deadlines and stamps each with `"t"`, CLOCK_MONOTONIC nanoseconds at its write (the latency workload, for
// CableBench's latency mode and cable-latency.js); after the client has gone, the server then prints one
// `paced messages=… rate=… achieved=… sends=… lag_mean_us=… lag_max_us=…` line (`PacingReport`).

#if os(Linux)
    import BenchSupport
    import Foundation

    let arguments = CommandLine.arguments.dropFirst().map { Int($0) }
    guard (2...4).contains(arguments.count), let messages = arguments[0], let subscriptions = arguments[1],
        messages >= 0, subscriptions > 0, arguments.dropFirst(2).allSatisfy({ $0 != nil && $0 ?? 0 >= 0 })
    else {
        FileHandle.standardError.write(Data("usage: CableBenchServer N SUBS [MESSAGE_BYTES [RATE]]\n".utf8))
        exit(2)
    }
    var workload = CableWorkload(messages: messages, subscriptions: subscriptions)
    if arguments.count > 2, let size = arguments[2] { workload.messageSize = size }
    if arguments.count > 3, let rate = arguments[3] { workload.rate = rate }
    // Before the sender's thread exists: it inherits this thread's timer slack.
    if workload.rate > 0 { CableSender.reduceTimerSlack() }
    let sender = CableSender()
    let finished = DispatchSemaphore(value: 0)
    sender.serve(workload) { finished.signal() }
    FileHandle.standardOutput.write(Data("listening \(sender.port)\n".utf8))
    finished.wait()
    if let pacing = sender.pacing { FileHandle.standardOutput.write(Data((pacing.line + "\n").utf8)) }
#else
    print("CableBenchServer uses POSIX sockets and runs on Linux only.")
#endif
