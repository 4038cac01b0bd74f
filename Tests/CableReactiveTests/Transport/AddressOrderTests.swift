#if os(Linux) && canImport(Glibc)
    @testable import CableReactive
    import Glibc
    import Testing

    @Suite("Happy Eyeballs address order")
    struct TransportAddressOrderTests {
        /// The literal `host` as one address.
        private func address(_ host: String) throws -> SocketAddress {
            try #require(AddressResolver.literal(host: host, port: 443)?.first)
        }

        /// The text form of each address, to compare orders.
        private func names(_ addresses: [SocketAddress]) -> [String] {
            addresses.map { address in
                var storage = address.storage
                var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
                withUnsafeBytes(of: &storage) { bytes in
                    let offset = address.family == AF_INET6 ? 8 : 4  // sin6_addr / sin_addr
                    _ = inet_ntop(address.family, bytes.baseAddress.map { $0 + offset }, &text, socklen_t(text.count))
                }
                return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }

        @Test("IPv6 first, then alternating, each family in the resolver's order, the rest at the end")
        func interleavesFamilies() throws {
            let mixed = try ["10.0.0.1", "10.0.0.2", "2001:db8::1", "10.0.0.3", "2001:db8::2", "10.0.0.4"].map(address)
            #expect(
                names(TCPConnector.interleave(mixed))
                    == ["2001:db8::1", "10.0.0.1", "2001:db8::2", "10.0.0.2", "10.0.0.3", "10.0.0.4"])
            #expect(
                names(TCPConnector.interleave(mixed, preferring: AF_INET))
                    == ["10.0.0.1", "2001:db8::1", "10.0.0.2", "2001:db8::2", "10.0.0.3", "10.0.0.4"])
        }

        @Test("one family, or none, keeps the resolver's order")
        func singleFamily() throws {
            let four = try ["10.0.0.2", "10.0.0.1"].map(address)
            #expect(names(TCPConnector.interleave(four)) == ["10.0.0.2", "10.0.0.1"])
            let six = try ["2001:db8::2", "2001:db8::1", "::1"].map(address)
            #expect(names(TCPConnector.interleave(six)) == ["2001:db8::2", "2001:db8::1", "::1"])
            #expect(TCPConnector.interleave([]).isEmpty)
        }

        @Test("the connection-attempt delay is clamped to RFC 8305's 10 ms...2 s")
        func clampsDelay() {
            #expect(TCPConnector.clampedAttemptDelay(0.25) == 0.25)
            #expect(TCPConnector.clampedAttemptDelay(0) == 0.01)
            #expect(TCPConnector.clampedAttemptDelay(-1) == 0.01)
            #expect(TCPConnector.clampedAttemptDelay(60) == 2)
            #expect(TCPConnector.clampedAttemptDelay(.nan) == 0.25)
            #expect(TCPConnector.clampedAttemptDelay(.infinity) == 0.25)
            #expect(SocketTransport.Options().connectionAttemptDelay == 0.25)
        }
    }
#endif
