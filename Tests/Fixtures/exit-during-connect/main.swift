// The exit-during-connect pattern of issue 16, run in a child process by ExitDuringConnectTests:
// start TLS connections (through SocketTransport or an ActionCableClient), then exit while they are in
// flight. The process must exit with status 0 every time; OpenSSL's at-exit cleanup used to free its
// global state under a connection thread that was still inside OpenSSL (SIGSEGV/SIGBUS).
//
//     exit-during-connect transport|client URL CA-FILE DELAY-MICROSECONDS
import CableReactive
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

let arguments = CommandLine.arguments
guard arguments.count == 5, let url = URL(string: arguments[2]), let delay = UInt32(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: exit-during-connect transport|client URL CA-FILE DELAY-US\n".utf8))
    exit(2)
}
var options = SocketTransport.Options()
options.tlsCAFilePath = arguments[3]
let transport = SocketTransport(options: options)

switch arguments[1] {
case "transport":
    var connections: [any WebSocketConnection] = []
    for _ in 0..<8 {
        connections.append(transport.connect(request: CableRequest(url: url), protocols: []) { _ in })
    }
    usleep(delay)
    withExtendedLifetime(connections) { exit(0) }
case "client":
    guard let client = try? ActionCableClient(url: url, transport: transport) else { exit(2) }
    client.connect()
    usleep(delay)
    client.close()
    exit(0)
default:
    exit(2)
}
