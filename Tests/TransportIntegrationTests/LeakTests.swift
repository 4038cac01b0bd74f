#if os(Linux)
    import CableReactive
    import Foundation
    import Testing

    extension TransportIntegrationTests {
        /// Entries in a /proc/self directory: open descriptors or live threads of this process.
        static func count(_ directory: String) -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/\(directory)").count) ?? -1
        }

        /// Polls until the counts drop back to the baseline or the deadline passes; returns the last counts.
        static func settle(fds baselineFDs: Int, threads baselineThreads: Int, timeout: Double = 10) -> (Int, Int) {
            let deadline = Date(timeIntervalSinceNow: timeout)
            while true {
                let counts = (count("fd"), count("task"))
                if (counts.0 <= baselineFDs && counts.1 <= baselineThreads) || Date() > deadline { return counts }
                // Let exiting I/O threads finish; this is a bounded poll, not a fixed wait.
                Thread.sleep(forTimeInterval: 0.01)
            }
        }

        @Test("leaves no descriptor or thread behind after 200 connections, ws and wss, opened and closed")
        func noLeaks() throws {
            let plain = try Peers.plain.get()
            let secure = try Peers.tls.get()
            let options = try tlsOptions()
            func cycle(_ index: Int) {
                let url =
                    index % 4 == 0 ? "wss://localhost:\(secure.port)/echo" : "ws://127.0.0.1:\(plain.port)/echo"
                let (connection, recorder) = connect(url, options: options)
                recorder.waitOpened()
                #expect(connection.send(text: "cycle \(index)"))
                #expect(recorder.waitTexts(1) == ["cycle \(index)"])
                connection.close(code: .normalClosure, reason: "")
                #expect(recorder.waitClosed() == .closed(code: .normalClosure, reason: ""))
            }
            for index in 0..<8 { cycle(index) }  // warm up: lazily created runtime threads and caches
            let (fds, threads) = Self.settle(fds: 0, threads: 0, timeout: 0)
            for index in 0..<200 { cycle(index) }
            // Also abandon connections before they open, and let the server drop some.
            for _ in 0..<20 {
                let (connection, recorder) = connect("ws://127.0.0.1:\(plain.port)/hang")
                connection.close(code: .normalClosure, reason: "")
                _ = recorder.waitClosed()
                let (_, dropped) = connect("ws://127.0.0.1:\(plain.port)/drop")
                _ = dropped.waitClosed()
            }
            let (fdsAfter, threadsAfter) = Self.settle(fds: fds, threads: threads)
            #expect(fdsAfter <= fds, "descriptors: \(fds) before, \(fdsAfter) after")
            #expect(threadsAfter <= threads, "threads: \(threads) before, \(threadsAfter) after")
        }
    }
#endif
