import Testing

@testable import CableReactive

/// AnyCable session recovery (../shared/docs/ANYCABLE-EXT.md, rules 9 and 13), one event sequence per row.
@Suite("SessionRestore")
struct SessionRestoreTests {
    typealias Event = SessionRestore.Event
    typealias Restored = ServerFrame.Restored

    static let all = Restored(identifiers: nil)
    static let onlyA = Restored(identifiers: [#"{"channel":"A"}"#])

    /// Attempt `id` starts, its handshake chooses the extended protocol, and it is welcomed.
    static func extended(_ id: UInt64, sid: String?, restored: Restored? = nil) -> [Event] {
        [.attemptStarted(id: id), .extendedHandshake(id: id), .welcome(id: id, sessionID: sid, restored: restored)]
    }

    /// Attempt `id` starts and is welcomed on the plain protocol.
    static func plain(_ id: UInt64, sid: String?, restored: Restored? = nil) -> [Event] {
        [.attemptStarted(id: id), .welcome(id: id, sessionID: sid, restored: restored)]
    }

    /// One `takeRestored(forSession:)` call and what it returns.
    struct Take: Sendable {
        let session: UInt64
        let restored: Restored?
    }

    static func take(_ session: UInt64, _ restored: Restored? = nil) -> Take {
        Take(session: session, restored: restored)
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let name: String
        let events: [Event]
        /// The sid to present on the next request after the events.
        let sid: String?
        /// The one attempt that speaks the extended protocol after the events, if any.
        let extended: UInt64?
        /// `takeRestored(forSession:)` calls after the events, in order.
        let takes: [Take]
        var testDescription: String { name }

        init(_ name: String, _ events: [Event], sid: String?, extended: UInt64?, takes: [Take] = []) {
            self.name = name
            self.events = events
            self.sid = sid
            self.extended = extended
            self.takes = takes
        }
    }

    static let rows: [Row] = [
        Row(
            "nothing yet: no sid, no extended attempt, nothing restored", [], sid: nil, extended: nil,
            takes: [take(1)]),
        Row(
            "an extended session's welcome keeps its sid for the next attempt", extended(1, sid: "s1"), sid: "s1",
            extended: 1, takes: [take(1)]),
        Row(
            "the next attempt presents the sid, and is not extended until its handshake says so",
            extended(1, sid: "s1") + [.attemptStarted(id: 2)], sid: "s1", extended: nil),
        Row(
            "a restoring welcome replaces the sid with its new one and says what was restored",
            extended(1, sid: "s1") + extended(2, sid: "s2", restored: onlyA), sid: "s2", extended: 2,
            takes: [take(2, onlyA)]),
        Row(
            "what was restored is consumed once", extended(1, sid: "s1", restored: all), sid: "s1", extended: 1,
            takes: [take(1, all), take(1)]),
        Row(
            "what was restored is not consumed by another session", extended(1, sid: "s1", restored: onlyA),
            sid: "s1", extended: 1, takes: [take(2), take(0), take(1, onlyA)]),
        Row(
            "a plain session forgets the sid", extended(1, sid: "s1") + plain(2, sid: "s2"), sid: nil, extended: nil,
            takes: [take(2)]),
        Row(
            "a plain welcome that claims a restore restores nothing", plain(1, sid: "s1", restored: all), sid: nil,
            extended: nil, takes: [take(1)]),
        Row(
            "a welcome on an attempt that is not the extended one is a plain session's",
            extended(1, sid: "s1") + [
                .attemptStarted(id: 2), .extendedHandshake(id: 2), .attemptStarted(id: 3),
                .welcome(id: 3, sessionID: "s3", restored: all),
            ], sid: nil, extended: nil, takes: [take(3), take(2)]),
        Row(
            "a late handshake of an old attempt does not make the current one extended",
            [
                .attemptStarted(id: 1), .attemptStarted(id: 2), .extendedHandshake(id: 1),
                .welcome(id: 2, sessionID: "s2", restored: nil),
            ], sid: nil, extended: nil),
        Row(
            "a late welcome from an old attempt changes nothing",
            extended(1, sid: "s1") + [
                .attemptStarted(id: 2), .extendedHandshake(id: 2), .welcome(id: 1, sessionID: "late", restored: all),
            ], sid: "s1", extended: 2, takes: [take(1), take(2)]),
        Row(
            "a late welcome from an old attempt does not forget the sid while the next attempt is open",
            extended(1, sid: "s1") + [.attemptStarted(id: 2), .welcome(id: 1, sessionID: nil, restored: nil)],
            sid: "s1", extended: nil),
        Row(
            "a handshake and a welcome before any attempt started are ignored",
            [.extendedHandshake(id: 1), .welcome(id: 1, sessionID: "s1", restored: all)], sid: nil, extended: nil,
            takes: [take(1)]),
        Row(
            "a new attempt drops what the previous attempt's welcome said was restored",
            extended(1, sid: "s1", restored: all) + [.attemptStarted(id: 2)], sid: "s1", extended: nil,
            takes: [take(1), take(2)]),
        Row(
            "a second welcome on the same attempt replaces the first",
            extended(1, sid: "s1", restored: all) + [.welcome(id: 1, sessionID: "s2", restored: nil)], sid: "s2",
            extended: 1, takes: [take(1)]),
        Row(
            "an extended welcome without a sid leaves none to present",
            extended(1, sid: "s1") + extended(2, sid: nil), sid: nil, extended: 2),
        Row(
            "a server disconnect forgets the sid", extended(1, sid: "s1") + [.serverDisconnect], sid: nil,
            extended: 1),
        Row(
            "a server disconnect before the next attempt's welcome forgets the sid too",
            extended(1, sid: "s1") + [.attemptStarted(id: 2), .serverDisconnect], sid: nil, extended: nil),
        Row(
            "an unauthorized answer's credentials refresh forgets the sid",
            extended(1, sid: "s1") + [.attemptStarted(id: 2), .credentialsRefresh], sid: nil, extended: nil),
        Row(
            "the app's disconnect forgets the sid", extended(1, sid: "s1") + [.appDisconnect], sid: nil, extended: 1),
        Row(
            "after a forget, the next extended session's sid is kept again",
            extended(1, sid: "s1") + [.serverDisconnect] + extended(2, sid: "s2"), sid: "s2", extended: 2),
    ]

    @Test("each event sequence leaves its sid, extended attempt and restored answers", arguments: rows)
    func table(_ row: Row) {
        var restore = SessionRestore()
        for event in row.events { restore.handle(event) }
        #expect(restore.sessionIDToPresent == row.sid)
        for id: UInt64 in 0...4 {
            #expect(restore.isExtended(id) == (id == row.extended), "attempt \(id)")
        }
        for take in row.takes {
            #expect(restore.takeRestored(forSession: take.session) == take.restored, "session \(take.session)")
        }
    }

    @Test("the printed forms say whether there is a sid, never what it is")
    func sidNotPrinted() {
        var restore = SessionRestore()
        for event in Self.extended(1, sid: "secret-sid", restored: Self.onlyA) { restore.handle(event) }
        var dumped = ""
        dump(restore, to: &dumped)
        for text in [String(describing: restore), String(reflecting: restore), "\(restore)", dumped] {
            #expect(!text.contains("secret-sid"), "\(text)")
            #expect(text.contains("hasSessionID"), "\(text)")
        }
    }
}
