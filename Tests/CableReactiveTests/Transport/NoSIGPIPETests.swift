#if os(Linux) && canImport(CCableReactiveOpenSSL) && canImport(Glibc)
    import Glibc
    import Testing

    @testable import CableReactive

    /// The socket transport writes to sockets whose peer may be gone at any moment. This test process keeps
    /// SIGPIPE at its default action (end the process), so if `Syscall.send` lost `MSG_NOSIGNAL` the test
    /// would not fail: it would end the whole run.
    @Suite("No SIGPIPE")
    struct NoSIGPIPETests {
        @Test("a send to a closed peer fails with EPIPE instead of raising SIGPIPE")
        func sendToClosedPeer() throws {
            var current = sigaction()
            try #require(sigaction(SIGPIPE, nil, &current) == 0)
            try #require(
                current.__sigaction_handler.sa_handler == nil,
                "SIGPIPE is not at its default action here, so this test would prove nothing")
            var fds: [Int32] = [-1, -1]
            let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            try #require(socketpair(AF_UNIX, type, 0, &fds) == 0)
            defer { Syscall.close(fds[0]) }
            Syscall.close(fds[1])
            let bytes: [UInt8] = [1, 2, 3]
            var failure: (any Error)?
            do {
                _ = try bytes.withUnsafeBytes { buffer in try Syscall.send(fds[0], buffer) }
            } catch {
                failure = error
            }
            #expect(failure as? WebSocketError == WebSocketError(.io(errno: EPIPE)))
        }
    }
#endif
