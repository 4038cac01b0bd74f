import CableReactive
import CableTesting
import Foundation
import Testing

#if os(Linux)
    /// What this process holds, read from /proc: used to prove that a stopped server leaves nothing behind.
    enum ProcessResources {
        /// Entries in /proc/self/`directory`: open descriptors ("fd") or live threads ("task").
        static func count(_ directory: String) -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/\(directory)").count) ?? -1
        }

        /// The names of this process's threads.
        static func threadNames() -> [String] {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.compactMap { task in
                (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }

        /// The socket inodes this process holds open.
        static func socketInodes() -> Set<String> {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return Set(
                fds.compactMap { fd in
                    guard
                        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                        target.hasPrefix("socket:[")
                    else { return nil }
                    return String(target.dropFirst("socket:[".count).dropLast())
                })
        }

        /// The inodes of the TCP sockets whose local port is `port` (the server's listener and its accepted
        /// connections; client sockets have other local ports).
        static func inodes(localPort port: UInt16) -> Set<String> {
            // Read to the end: /proc files report size 0, and a read sized by it would stop after one page.
            guard let data = FileHandle(forReadingAtPath: "/proc/net/tcp")?.readDataToEndOfFile() else { return [] }
            let table = String(decoding: data, as: UTF8.self)
            var result: Set<String> = []
            for line in table.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, let colon = fields[1].lastIndex(of: ":"),
                    UInt16(fields[1][fields[1].index(after: colon)...], radix: 16) == port, fields[9] != "0"
                else { continue }
                result.insert(String(fields[9]))
            }
            return result
        }

    }

    @Suite("LocalCableServer: stop and leaks (stress: 30 servers, every connection state)", .serialized)
    struct ServerLeakStressTests {
        /// One server with a connection in every state, then stopped (or released); checks that its thread and
        /// every one of its sockets are gone, and that each client sees its connection end.
        func cycle(_ n: Int) async throws {
            var options = LocalCableServer.Options()
            options.closeTimeout = 5  // the closing connection must still be closing when the server stops
            var server: LocalCableServer? = try LocalCableServer(options: options)
            let port = try #require(server?.port)
            let upgraded = try RawSocket(port: port, timeout: 2)
            _ = await upgraded.upgrade()
            let halfway = try RawSocket(port: port, timeout: 2)
            halfway.send("GET /cable HTTP/1.1\r\nHost: x\r\n")
            let stalled = try RawSocket(port: port, timeout: 2)
            _ = await stalled.upgrade()
            let closing = try RawSocket(port: port, timeout: 2)
            _ = await closing.upgrade()
            _ = await upgraded.nextText()
            _ = await closing.nextText()
            #expect(await server?.snapshot.first(within: 10) { $0.acceptedCount == 4 } != nil)
            server?.stall(.connection(LocalCableServer.ConnectionID(3)))
            server?.disconnect(.connection(LocalCableServer.ConnectionID(4)), reason: "bye", reconnect: true)
            // The count is published by the server thread after it handles each event: wait for it (a client
            // can read its welcome before the loop has published the upgrade that preceded it).
            #expect(await server?.connectionCount.first(within: 5) { $0 == 3 } != nil)
            #expect(await eventually(timeout: 10) { ProcessResources.threadNames().contains("LCServer:\(port)") })
            #expect(!ProcessResources.inodes(localPort: port).isDisjoint(with: ProcessResources.socketInodes()))
            if n.isMultiple(of: 2) {
                server?.stop()
                #expect(server?.connectionCount.value == 0)
            }
            server = nil  // deinit stops (again, for the even rounds)
            // stop returns after every socket is closed: none of the server's sockets is open any more.
            #expect(ProcessResources.inodes(localPort: port).isDisjoint(with: ProcessResources.socketInodes()))
            #expect(await eventually(timeout: 10) { !ProcessResources.threadNames().contains("LCServer:\(port)") })
            for socket in [upgraded, halfway, stalled, closing] { #expect(await socket.waitForClose().ended) }
        }

        @Test("30 servers with open, half-sent, stalled and closing connections leave no descriptor or thread")
        func noLeaks() async throws {
            for n in 0..<3 { try await cycle(n) }  // warm up: runtime threads and caches created lazily
            let fds = ProcessResources.count("fd")
            let threads = ProcessResources.count("task")
            for n in 0..<30 { try await cycle(n) }
            // Other suites run in parallel and hold descriptors and threads of their own, so allow a little noise;
            // a leak here would be at least 30 (every server has a thread, a listener and a wake pipe).
            var after = (fds: 0, threads: 0)
            _ = await eventually(timeout: 10) {
                after = (ProcessResources.count("fd"), ProcessResources.count("task"))
                return after.fds <= fds && after.threads <= threads
            }
            #expect(after.fds <= fds + 10, "descriptors: \(fds) before, \(after.fds) after")
            #expect(after.threads <= threads + 4, "threads: \(threads) before, \(after.threads) after")
        }
    }
#endif

@Suite("LocalCableServer: stop from the server thread")
struct ServerStopTests {
    @Test("a handler may stop the server; stop and deinit then return without deadlocking")
    func stopFromHandler() async throws {
        let server = try LocalCableServer()
        let stopped = ServerBox()
        server.onPerform("stop") { _ in stopped.server?.stop() }
        stopped.server = server
        let socket = try RawSocket(port: server.port)
        _ = await socket.upgrade()
        _ = await socket.nextText()
        socket.sendText(#"{"command":"subscribe","identifier":"{\"channel\":\"A\"}"}"#)
        _ = await socket.nextText()
        socket.sendText(#"{"command":"message","identifier":"{\"channel\":\"A\"}","data":"{\"action\":\"stop\"}"}"#)
        #expect(await socket.waitForClose() == (nil, true))
        #expect(await server.wait { !$0.isAccepting })
        server.stop()
        stopped.server = nil
    }
}

/// A weak reference a handler can use to reach its server without keeping it alive.
final class ServerBox: @unchecked Sendable {
    // Written before the server thread can call the handler, then only read; the lock orders both.
    private let lock = NSLock()
    private weak var value: LocalCableServer?

    var server: LocalCableServer? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}
