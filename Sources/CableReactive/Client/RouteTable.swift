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
/// `\u0026`) simply misses here, and the engine reads the identifier out of the token
/// (``CableProtocol/identifier(token:in:)``) and looks that up. Equal tokens always unescape to equal strings,
/// so a hit is never wrong.
///
/// A server may also re-encode the identifier itself (other escapes, spaces, key order): ``resolve(_:)`` then
/// finds the subscription by the identifier's canonical form and remembers that spelling as an alias, so the
/// next frames spelled that way take the fast path too. Aliases go with their subscription's route, and there
/// are at most ``maxAliases`` of them per subscription.
struct RouteTable {
    /// Spellings remembered per subscription; a server that keeps inventing new ones still routes (through
    /// the canonical form), just without the fast path.
    static let maxAliases = 4

    private struct Entry {
        var hash: UInt64
        var token: [UInt8]
        var box: SubscriptionBox
    }

    private var byIdentifier: [String: SubscriptionBox] = [:]
    /// The aliases of each subscription's identifier (only for subscriptions that have any).
    private var aliases: [String: [String]] = [:]
    /// Chained buckets indexed by the low bits of ``tokenHash(_:)`` (a power-of-two count, at least one
    /// bucket per entry), so a lookup costs one hash of the token and no `Hasher`.
    private var buckets: [[Entry]] = Array(repeating: [], count: 8)

    subscript(identifier: String) -> SubscriptionBox? { byIdentifier[identifier] }

    /// The subscription for `identifier` as a server spelled it: by its exact text (our spelling, or an alias
    /// seen before), else by its canonical form, in which case that spelling is remembered as an alias. The
    /// canonical form costs a JSON parse, paid only on this miss path.
    mutating func resolve(_ identifier: String) -> SubscriptionBox? {
        if let box = byIdentifier[identifier] { return box }
        guard let canonical = CableProtocol.canonicalIdentifier(identifier), let box = byIdentifier[canonical],
            box.identifier == canonical
        else { return nil }
        if aliases[canonical, default: []].count < Self.maxAliases {
            aliases[canonical, default: []].append(identifier)
            insert(box, for: identifier)
        }
        return box
    }

    /// Routes `identifier` to `box`, replacing any earlier route for it.
    mutating func set(_ box: SubscriptionBox, for identifier: String) {
        if byIdentifier[identifier] != nil { remove(identifier) }
        insert(box, for: identifier)
    }

    private mutating func insert(_ box: SubscriptionBox, for identifier: String) {
        byIdentifier[identifier] = box
        let token = Self.token(for: identifier)
        let hash = token.withUnsafeBufferPointer(Self.tokenHash)
        if byIdentifier.count > buckets.count { grow() }  // one entry per identifier or alias
        buckets[bucketIndex(hash)].append(Entry(hash: hash, token: token, box: box))
    }

    /// Makes every route (the identifier's and its aliases) that leads to `old` lead to `new`.
    mutating func replace(_ old: SubscriptionBox, with new: SubscriptionBox) {
        let identifier = old.identifier
        guard byIdentifier[identifier] === old else { return }
        for spelling in [identifier] + (aliases[identifier] ?? []) {
            byIdentifier[spelling] = new
            let token = Self.token(for: spelling)
            let bucket = bucketIndex(token.withUnsafeBufferPointer(Self.tokenHash))
            for entry in buckets[bucket].indices where buckets[bucket][entry].token == token {
                buckets[bucket][entry].box = new
            }
        }
    }

    /// Removes the route for `identifier`, and its aliases, if it leads to `box`.
    mutating func remove(_ identifier: String, ifLeadingTo box: SubscriptionBox) {
        guard byIdentifier[identifier] === box else { return }
        remove(identifier)
    }

    private mutating func remove(_ identifier: String) {
        for alias in aliases.removeValue(forKey: identifier) ?? [] { removeEntry(alias) }
        removeEntry(identifier)
    }

    private mutating func removeEntry(_ identifier: String) {
        byIdentifier.removeValue(forKey: identifier)
        let token = Self.token(for: identifier)
        buckets[bucketIndex(token.withUnsafeBufferPointer(Self.tokenHash))].removeAll { $0.token == token }
    }

    private mutating func grow() {
        let entries = buckets.joined()
        buckets = Array(repeating: [], count: buckets.count * 2)
        for entry in entries { buckets[bucketIndex(entry.hash)].append(entry) }
    }

    private func bucketIndex(_ hash: UInt64) -> Int {
        Int(truncatingIfNeeded: hash) & (buckets.count - 1)
    }

    /// The subscription whose identifier's JSON string token is exactly `token`, if any.
    func lookup(token: UnsafeBufferPointer<UInt8>) -> SubscriptionBox? {
        let hash = Self.tokenHash(token)
        for entry in buckets[bucketIndex(hash)] where entry.hash == hash && entry.token.count == token.count {
            guard let base = token.baseAddress, !token.isEmpty else { return entry.box }  // both empty
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
