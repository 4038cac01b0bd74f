#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Routes by the JSON string token of an identifier as it appears in a server frame (between the quotes,
/// escapes included): how the I/O thread finds a data frame's subscription without unescaping the identifier
/// into a `String` and hashing it.
///
/// The ``SubscriptionTable`` keeps one entry per spelling it knows: each identifier as our JSON writer
/// escapes it (what Rails, AnyCable and `LocalCableServer` echo for ordinary identifiers), and the other
/// spellings servers wrote back (its aliases). A server that escapes differently (Rails writes `<`, `>` and
/// `&` as `\u003c`, `\u003e`, `\u0026`) misses here, and the frame is resolved by the table under the
/// engine's lock. Equal tokens always unescape to equal strings, so a hit is never wrong.
///
/// A value: the table publishes copies of it for the I/O thread to read without a lock.
struct RouteIndex: Sendable {
    private struct Entry: Sendable {
        var hash: UInt64
        var token: [UInt8]
        var route: DeliveryRoute
    }

    /// Chained buckets indexed by the low bits of ``tokenHash(_:)`` (a power-of-two count, at least one
    /// bucket per entry), so a lookup costs one hash of the token and no `Hasher`.
    private var buckets: [[Entry]] = Array(repeating: [], count: 8)
    private(set) var count = 0

    /// Routes `spelling` (an identifier as a server writes it) to `route`, replacing any route it had.
    mutating func set(_ route: DeliveryRoute, for spelling: String) {
        let token = Self.token(for: spelling)
        let hash = token.withUnsafeBufferPointer(Self.tokenHash)
        let bucket = bucketIndex(hash)
        if let index = buckets[bucket].firstIndex(where: { $0.token == token }) {
            buckets[bucket][index].route = route
            return
        }
        count += 1
        if count > buckets.count { grow() }  // one bucket per entry at least
        buckets[bucketIndex(hash)].append(Entry(hash: hash, token: token, route: route))
    }

    /// Removes the route of `spelling`, if any.
    mutating func remove(_ spelling: String) {
        let token = Self.token(for: spelling)
        let bucket = bucketIndex(token.withUnsafeBufferPointer(Self.tokenHash))
        let before = buckets[bucket].count
        buckets[bucket].removeAll { $0.token == token }
        count -= before - buckets[bucket].count
    }

    private mutating func grow() {
        let entries = buckets.joined()
        buckets = Array(repeating: [], count: buckets.count * 2)
        for entry in entries { buckets[bucketIndex(entry.hash)].append(entry) }
    }

    private func bucketIndex(_ hash: UInt64) -> Int {
        Int(truncatingIfNeeded: hash) & (buckets.count - 1)
    }

    /// The route whose JSON string token is exactly `token`, if any.
    func lookup(token: UnsafeBufferPointer<UInt8>) -> DeliveryRoute? {
        let hash = Self.tokenHash(token)
        for entry in buckets[bucketIndex(hash)] where entry.hash == hash && entry.token.count == token.count {
            guard let base = token.baseAddress, !token.isEmpty else { return entry.route }  // both empty
            let equal = entry.token.withUnsafeBufferPointer { stored in
                stored.baseAddress.map { memcmp($0, base, token.count) == 0 } ?? false
            }
            if equal { return entry.route }
        }
        return nil
    }

    /// `identifier` as our JSON writer escapes it, without the quotes.
    static func token(for identifier: String) -> [UInt8] {
        var writer = JSONWriter()
        writer.writeString(identifier)
        return Array(writer.bytes.dropFirst().dropLast())
    }

    /// A fast hash of a token, eight bytes at a time (collisions only cost a comparison).
    static func tokenHash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash = UInt64(truncatingIfNeeded: bytes.count) &* 0x9E37_79B9_7F4A_7C15
        guard let base = bytes.baseAddress else { return hash }
        let raw = UnsafeRawPointer(base)
        var index = 0
        while index + 8 <= bytes.count {
            hash = (hash ^ raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            hash ^= hash >> 29
            index += 8
        }
        var tail: UInt64 = 0
        while index < bytes.count {
            tail = tail << 8 | UInt64(bytes[index])
            index += 1
        }
        hash = (hash ^ tail) &* 0x94D0_49BB_1331_11EB
        return hash ^ (hash >> 32)
    }
}
