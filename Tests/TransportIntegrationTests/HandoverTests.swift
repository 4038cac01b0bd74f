#if os(Linux)
    import CableReactive
    import CableTesting
    import Foundation
    import Signals
    import Testing

    /// A handover that kills the socket, over real sockets: the client talks to a LocalCableServer acting as
    /// AnyCable (a `sid` in its welcome, pongs to `{"command":"ping"}`) through `faultproxy.py`, which silences the
    /// live connection for good at the moment the fake path source reports Wi-Fi giving way to cellular. The
    /// server pings every 3 s, as Rails and AnyCable do; the stale watchdog alone would take 15 s.
    extension TransportIntegrationTests {
        @Test("a killing handover: probed, replaced, and messages flow again within 2 s (LocalCableServer as AnyCable)")
        func handoverThroughTheFaultProxy() async throws {
            var serverOptions = LocalCableServer.Options()
            serverOptions.pingInterval = 3
            serverOptions.includesSessionID = true
            let server = try LocalCableServer(options: serverOptions)
            server.onPerform("echo") { call in call.reply(call.data) }
            let proxy = try FaultProxyProcess(target: server.port)
            var url = URLComponents(url: server.url, resolvingAgainstBaseURL: false)
            url?.port = proxy.port
            let path = MutableStateValue<NetworkPath?>(
                NetworkPath(status: .satisfied, interfaces: [NetworkInterface(name: "en0", kind: .wifi)]))
            let client = try ActionCableClient(
                url: try #require(url?.url), network: path.readOnly, transport: SocketTransport())
            defer { client.close() }
            let room = try client.subscribe(["channel": "EchoChannel"])
            client.connect()
            #expect(await room.state.first(within: 5) { $0 == .subscribed(confirmations: 1) } != nil)

            // One probe answered, so that the session's checks trust the probe's timeout.
            path.value = NetworkPath(
                status: .satisfied,
                interfaces: [NetworkInterface(name: "en0", kind: .wifi), NetworkInterface(name: "utun0", kind: .other)])
            #expect(await eventually(seconds: 5) { server.commands.contains { $0.command == "ping" } })
            try await Task.sleep(nanoseconds: 200_000_000)  // the pong's way back, over real sockets
            #expect(client.state.value == .connected)

            try proxy.post("handover")
            let start = DispatchTime.now().uptimeNanoseconds
            path.value = NetworkPath(
                status: .satisfied, interfaces: [NetworkInterface(name: "pdp_ip0", kind: .cellular)])
            #expect(await room.state.first(within: 8) { $0 == .subscribed(confirmations: 2) } != nil)
            var messages = room.messages.makeAsyncIterator()
            #expect(room.perform("echo", ["n": 1]))
            let echoed = await messages.next()
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            print(
                "handover: messages flow again \(String(format: "%.2f", seconds)) s after the change (LocalCableServer as AnyCable)"
            )
            #expect(echoed?["n"] == 1)
            #expect(client.lastDisconnect.value?.kind == .checkFailed)
            #expect(seconds < 2, "messages flowed again after \(seconds) s")
            room.unsubscribe()
        }
    }

    /// A running `faultproxy.py` (Tests/Fixtures/faultproxy) in front of `target`, with its control API.
    final class FaultProxyProcess: Sendable {
        let port: Int
        let control: Int
        private let process: Process

        init(target: UInt16) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [
                "python3", PeerProcess.root.appendingPathComponent("Tests/Fixtures/faultproxy/faultproxy.py").path,
                "--target", "127.0.0.1:\(target)", "--parent-pid", "\(ProcessInfo.processInfo.processIdentifier)",
                "--max-lifetime", "120",
            ]
            let stdout = Pipe()
            process.standardOutput = stdout
            try process.run()
            self.process = process
            let line = try PeerProcess.firstLine(of: stdout)
            let ports = try? JSONValue(parsing: line)
            guard let port = ports?["listen"]?.intValue, let control = ports?["control"]?.intValue else {
                process.terminate()
                throw PeerError("faultproxy did not report its ports: \(line)")
            }
            self.port = port
            self.control = control
        }

        /// `POST /<endpoint>` on the control API (a raw HTTP/1.0 request: no URLSession needed).
        func post(_ endpoint: String) throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw PeerError("socket: \(errno)") }
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(control).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { throw PeerError("connect to the proxy's control port: \(errno)") }
            let request = Array("POST /\(endpoint) HTTP/1.0\r\nContent-Length: 0\r\n\r\n".utf8)
            guard write(fd, request, request.count) == request.count else { throw PeerError("write: \(errno)") }
            var answer = [UInt8](repeating: 0, count: 512)
            let count = read(fd, &answer, answer.count)
            guard count > 0, String(decoding: answer[..<count], as: UTF8.self).contains(" 200 ") else {
                throw PeerError("the proxy refused /\(endpoint)")
            }
        }

        deinit {
            try? post("shutdown")  // it outlives SIGTERM until its lifetime is up
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
#endif
