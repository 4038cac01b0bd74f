#if os(Linux) && canImport(CCableReactiveOpenSSL)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// One resolved socket address, copied out of `getaddrinfo`'s list.
    package struct SocketAddress: Sendable {
        package var family: Int32
        var storage: sockaddr_storage
        var length: socklen_t
    }

    /// Host name resolution with `getaddrinfo`, which blocks for as long as the system resolver takes (it
    /// cannot be interrupted): a connection calls ``resolve(host:port:)`` on a helper thread it can abandon
    /// (``PendingLookup``), never on its I/O thread or the caller's.
    package enum AddressResolver {
        /// Every TCP address for `host` and `port`, IPv4 and IPv6, in the resolver's order. IP literals
        /// resolve to themselves without a DNS query.
        ///
        /// - Throws: `WebSocketError(.dnsFailure)` when nothing resolves.
        package static func resolve(host: String, port: UInt16) throws(WebSocketError) -> [SocketAddress] {
            try lookUp(host: host, port: port, flags: AI_NUMERICSERV)
        }

        /// The address of an IPv4 or IPv6 literal `host`, or `nil` when `host` is a name. Never queries DNS
        /// (`AI_NUMERICHOST`), so it is safe on any thread.
        package static func literal(host: String, port: UInt16) -> [SocketAddress]? {
            try? lookUp(host: host, port: port, flags: AI_NUMERICSERV | AI_NUMERICHOST)
        }

        private static func lookUp(host: String, port: UInt16, flags: Int32) throws(WebSocketError) -> [SocketAddress] {
            var hints = addrinfo()
            hints.ai_family = AF_UNSPEC
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            hints.ai_flags = flags
            var list: UnsafeMutablePointer<addrinfo>?
            let status = getaddrinfo(host, String(port), &hints, &list)
            guard status == 0, let first = list else {
                let reason = status == 0 ? "no addresses" : String(cString: gai_strerror(status))
                throw WebSocketError(.dnsFailure, detail: reason)
            }
            defer { freeaddrinfo(first) }
            var addresses: [SocketAddress] = []
            var node: UnsafeMutablePointer<addrinfo>? = first
            while let current = node {
                let info = current.pointee
                if let address = info.ai_addr, info.ai_family == AF_INET || info.ai_family == AF_INET6,
                    Int(info.ai_addrlen) <= MemoryLayout<sockaddr_storage>.size
                {
                    var storage = sockaddr_storage()
                    withUnsafeMutableBytes(of: &storage) { target in
                        target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(info.ai_addrlen)))
                    }
                    addresses.append(SocketAddress(family: info.ai_family, storage: storage, length: info.ai_addrlen))
                }
                node = info.ai_next
            }
            guard !addresses.isEmpty else { throw WebSocketError(.dnsFailure, detail: "no TCP addresses") }
            return addresses
        }
    }
#endif
