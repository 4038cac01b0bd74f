#if os(Linux)
    import Testing

    @testable import CableReactive

    /// The caller's side of a SocketTransport connection: what `send` accepts while the I/O thread's socket
    /// is backed up. Driven by hand (no I/O thread): `takeCommands` is what the I/O thread calls each turn.
    @Suite("SocketConnection: the outbound byte limit")
    struct SocketConnectionTests {
        static func open(limit: Int) -> SocketConnection {
            let connection = SocketConnection(maxPendingBytes: limit)
            #expect(connection.markOpen())
            return connection
        }

        static func text(_ count: Int) -> String { String(repeating: "x", count: count) }

        @Test("refuses a send once queued text plus the socket's unsent bytes would pass the limit")
        func countsUnsentBytes() {
            let connection = Self.open(limit: 100)
            #expect(connection.send(text: Self.text(60)))
            #expect(!connection.send(text: Self.text(41)))
            // The I/O thread takes the 60 bytes: until it reports, they count as unsent.
            let taken = connection.takeCommands(unsentBytes: 0)
            #expect(taken.messages.map(\.count) == [60])
            #expect(!connection.send(text: Self.text(41)))
            #expect(connection.send(text: Self.text(40)))
            // The socket has not accepted 70 bytes of frames yet: 40 queued + 70 leaves room for 30 only.
            _ = connection.takeCommands(unsentBytes: 30)
            #expect(!connection.send(text: Self.text(31)))
            #expect(connection.send(text: Self.text(30)))
            // Everything went out: the whole limit is free again.
            _ = connection.takeCommands(unsentBytes: 0)
            _ = connection.takeCommands(unsentBytes: 0)
            #expect(connection.send(text: Self.text(100)))
            connection.markClosed()
        }

        @Test("gives the close request with the messages queued before it, and refuses sends after close")
        func closeAfterMessages() {
            let connection = Self.open(limit: 100)
            #expect(connection.send(text: "a"))
            connection.close(code: .normalClosure, reason: "bye")
            #expect(!connection.send(text: "b"))
            let commands = connection.takeCommands(unsentBytes: 0)
            #expect(commands.messages == [Array("a".utf8)])
            #expect(commands.close?.code == .normalClosure)
            connection.markClosed()
        }

        @Test("after the I/O thread closed it, nothing is accepted and nothing counts")
        func closedRefuses() {
            let connection = Self.open(limit: 100)
            _ = connection.takeCommands(unsentBytes: 90)
            connection.markClosed()
            #expect(!connection.send(text: "x"))
        }
    }
#endif
