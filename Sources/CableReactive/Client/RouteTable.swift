#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Subscriptions by identifier, findable two ways: by the identifier `String`, and by the identifier's
/// JSON string token as it appears in a server frame (between the quotes, escapes included).
///
/// The second way is the hot path for data frames: the engine routes a message without unescaping the
/// identifier into a new `String` and hashing it. The token the table knows is the one our own JSON writer
/// produces, which is what Rails, AnyCable and `LocalCableServer` echo for ordinary
/// identifiers; a server that escapes differently (Rails writes `<`, `>` and `&` as `\u003c`, `\u003e`,
/// `\u0026`) simply misses here, and the frame takes the full decode. Equal tokens always unescape to equal
/// strings, so a hit is never wrong.
struct RouteTable {
    private var byIdentifier: [String: SubscriptionBox] = [:]
    /// Keyed by ``tokenHash(_:)``; each bucket holds the tokens with that hash.
    private var byToken: [UInt64: [(token: [UInt8], box: SubscriptionBox)]] = [:]

    subscript(identifier: String) -> SubscriptionBox? { byIdentifier[identifier] }

    /// Routes `identifier` to `box`, replacing any earlier route for it.
    mutating func set(_ box: SubscriptionBox, for identifier: String) {
        if byIdentifier[identifier] != nil { remove(identifier) }
        byIdentifier[identifier] = box
        let token = Self.token(for: identifier)
        let hash = token.withUnsafeBufferPointer(Self.tokenHash)
        byToken[hash, default: []].append((token, box))
    }

    /// Removes the route for `identifier` if it leads to `box`.
    mutating func remove(_ identifier: String, ifLeadingTo box: SubscriptionBox) {
        guard byIdentifier[identifier] === box else { return }
        remove(identifier)
    }

    private mutating func remove(_ identifier: String) {
        byIdentifier.removeValue(forKey: identifier)
        let token = Self.token(for: identifier)
        let hash = token.withUnsafeBufferPointer(Self.tokenHash)
        byToken[hash]?.removeAll { $0.token == token }
        if byToken[hash]?.isEmpty == true { byToken.removeValue(forKey: hash) }
    }

    /// The subscription whose identifier's JSON string token is exactly `token`, if any.
    func lookup(token: UnsafeBufferPointer<UInt8>) -> SubscriptionBox? {
        guard let bucket = byToken[Self.tokenHash(token)] else { return nil }
        guard let base = token.baseAddress else {
            return bucket.first { $0.token.isEmpty }?.box
        }
        for entry in bucket where entry.token.count == token.count {
            let equal = entry.token.withUnsafeBufferPointer { stored in
                stored.baseAddress.map { memcmp($0, base, token.count) == 0 } ?? false
            }
            if equal { return entry.box }
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
