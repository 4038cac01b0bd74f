import CableReactive
import Testing

@testable import CableTesting

/// The presence state on its own (AnyCable's memory broker rules), without sockets or clocks.
@Suite("PresenceBook")
struct PresenceBookTests {
    static let a = LocalCableServer.ConnectionID(1)
    static let b = LocalCableServer.ConnectionID(2)

    @Test("join is new once per id; a known id replaces info; a connection holds one id per stream")
    func join() {
        var book = PresenceBook()
        let first = book.join("s", id: "u1", info: 1, by: Self.a)
        #expect(first)
        let known = book.join("s", id: "u1", info: 2, by: Self.b)
        #expect(!known)
        let second = book.join("s", id: "u2", info: .null, by: Self.a)
        #expect(!second, "refused: A holds u1")
        let other = book.join("t", id: "u2", info: .null, by: Self.a)
        #expect(other, "another stream")
        #expect(book.records(in: "s").map(\.id) == ["u1"])
        #expect(book.records(in: "s").first?.info == 2)
        #expect(book.ids == ["s": ["u1"], "t": ["u2"]])
    }

    @Test("leave reports the id only when its last holder is gone")
    func leave() {
        var book = PresenceBook()
        _ = book.join("s", id: "u1", info: .null, by: Self.a)
        _ = book.join("s", id: "u1", info: .null, by: Self.b)
        let stillHeld = book.leave("s", by: Self.a)
        #expect(stillHeld == nil)
        let again = book.leave("s", by: Self.a)
        #expect(again == nil, "no hold any more")
        let last = book.leave("s", by: Self.b)
        #expect(last == "u1")
        #expect(book.ids.isEmpty)
    }

    @Test("an ended connection's holds linger until their expiry; another holder keeps the id")
    func expiry() {
        var book = PresenceBook()
        _ = book.join("s", id: "u1", info: .null, by: Self.a)
        _ = book.join("s", id: "u2", info: .null, by: Self.b)
        _ = book.join("t", id: "u1", info: .null, by: Self.a)
        #expect(book.nextExpiry == nil)
        let early = book.ended(Self.a, expires: 100)
        #expect(early.isEmpty)
        #expect(book.nextExpiry == 100)
        let none = book.expire(now: 99)
        #expect(none.isEmpty)
        let rejoiner = LocalCableServer.ConnectionID(3)
        let rejoined = book.join("t", id: "u1", info: .null, by: rejoiner)
        #expect(!rejoined, "still present: no join")
        let leaves = book.expire(now: 100)
        #expect(leaves.map(\.stream) == ["s"] && leaves.map(\.id) == ["u1"], "t's u1 is held by the rejoiner")
        #expect(book.nextExpiry == nil)
        #expect(book.ids == ["s": ["u2"], "t": ["u1"]])
    }
}
