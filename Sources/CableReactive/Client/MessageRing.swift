/// The FIFO behind a subscription's ``MessageBuffer``: keeps the newest `limit` messages, drops the oldest
/// beyond that and counts the drops.
///
/// A concrete (non-generic) twin of Signals' `PolicyBuffer` with `.bufferingNewest`: that generic type is
/// not specialized across the module boundary, so every push and pop looked up generic metadata at run
/// time, which cost more per message than the buffer's own work (callgrind, 64-byte messages).
struct MessageRing {
    private var storage: ContiguousArray<JSONValue?>
    private var head = 0
    private(set) var count = 0
    private(set) var droppedCount = 0
    let limit: Int

    init(limit: Int) {
        self.limit = limit
        storage = ContiguousArray(repeating: nil, count: min(limit, 16))
    }

    var isEmpty: Bool { count == 0 }

    /// Appends `message`; returns true if the oldest message was dropped to make room.
    mutating func push(_ message: JSONValue) -> Bool {
        var dropped = false
        if count >= limit {
            _ = popFirst()
            droppedCount += 1
            dropped = true
        }
        if count == storage.count { grow() }
        var slot = head + count
        if slot >= storage.count { slot -= storage.count }
        storage[slot] = message
        count += 1
        return dropped
    }

    mutating func popFirst() -> JSONValue? {
        guard count > 0 else { return nil }
        let message = storage[head]
        storage[head] = nil
        head += 1
        if head == storage.count { head = 0 }
        count -= 1
        return message
    }

    private mutating func grow() {
        var grown = ContiguousArray<JSONValue?>(repeating: nil, count: max(4, storage.count * 2))
        for offset in 0..<count {
            var slot = head + offset
            if slot >= storage.count { slot -= storage.count }
            grown[offset] = storage[slot]
        }
        storage = grown
        head = 0
    }
}
