// A loopback Action Cable bench sender for CableBench (and any other client).
//
//     CableBenchServer N SUBS [MESSAGE_BYTES]
//
// Listens on 127.0.0.1 (port chosen by the kernel), prints `listening <port>`, serves one client and exits:
// welcome, a confirm for every subscribe, then, once SUBS distinct subscriptions are confirmed, N data frames
// round-robin over them (`message` = MESSAGE_BYTES of JSON, default 64) and one `{"end":true}` message, on the
// first subscription. See `CableWorkload`.

#if os(Linux)
    import BenchSupport
    import Foundation

    let arguments = CommandLine.arguments.dropFirst().map { Int($0) }
    guard arguments.count >= 2, let messages = arguments[0], let subscriptions = arguments[1], messages >= 0,
        subscriptions > 0
    else {
        FileHandle.standardError.write(Data("usage: CableBenchServer N SUBS [MESSAGE_BYTES]\n".utf8))
        exit(2)
    }
    var workload = CableWorkload(messages: messages, subscriptions: subscriptions)
    if arguments.count > 2, let size = arguments[2] { workload.messageSize = size }
    let sender = CableSender()
    let finished = DispatchSemaphore(value: 0)
    sender.serve(workload) { finished.signal() }
    FileHandle.standardOutput.write(Data("listening \(sender.port)\n".utf8))
    finished.wait()
#else
    print("CableBenchServer uses POSIX sockets and runs on Linux only.")
#endif
