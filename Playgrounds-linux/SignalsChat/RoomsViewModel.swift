// The README's "Signals for view models": a chat screen with a room picker whose every rule of time and
// switching is a Signals operator (switchToLatest, scan, prepend, throttle, withLatestFrom, debounce, merge,
// timeout). Compiled and run on Linux by main.swift against an embedded LocalCableServer; the same class
// serves a SwiftUI view on Apple platforms.

import CableReactive
import Foundation
import Signals

/// A message in a room, as the server's ChatChannel broadcasts it.
struct Line: Codable, Sendable, Equatable {
    let user: String
    let text: String
}

/// The whisper a client sends while its user types; it never enters history or a replay.
struct Typing: Codable, Sendable {
    let typing: String
}

/// What became of a message the user sent.
enum Delivery: Sendable, Equatable {
    /// The server broadcast it back to the room.
    case delivered
    /// Sent, but no broadcast of it came back within 5 s.
    case noAnswer
    /// Not sent: the room is not subscribed on a live connection (nothing is queued offline).
    case notSent
}

/// A chat screen with a room picker. Every subscription is made once, in `init`; the screen follows the room the
/// user picked. Observers run on the main actor; the model owns its observations, so releasing it ends them.
@MainActor
final class RoomsViewModel {
    /// The room the screen shows; the picker sets it.
    let selectedRoom: MutableStateValue<String>
    /// The picked room's messages since it was picked (a real app loads the room's history here).
    private(set) var lines: [Line] = []
    /// "bob is typing…" while bob's whispers keep coming in the picked room; nil 3 s after the last one.
    private(set) var typing: String?
    /// "Connecting…" once the client has been connecting for 1 s; nil again as soon as it is connected.
    private(set) var banner: String?
    /// Whether the picked room is subscribed on a live connection, for the send button.
    private(set) var canSend = false

    private let me: String
    private let rooms: [String: ChannelSubscription]
    private let scheduler: any SignalScheduler
    private let keystrokes = MutableEventStream<Void>()
    private var watches: [SignalObservation] = []

    /// - Parameter scheduler: the time of the operators: `DispatchScheduler()` in the app,
    ///   `VirtualTimeScheduler()` in a test that moves time itself.
    init(
        client: ActionCableClient, me: String, rooms names: [String],
        scheduler: some SignalScheduler = DispatchScheduler()
    ) throws {
        let rooms = try Dictionary(
            names.map { name in (name, try client.subscribe(["channel": "ChatChannel", "room": .string(name)])) },
            uniquingKeysWith: { first, _ in first })
        let keystrokes = keystrokes
        let selectedRoom = MutableStateValue(names.first ?? "lobby")
        self.me = me
        self.rooms = rooms
        self.scheduler = scheduler
        self.selectedRoom = selectedRoom

        // snippet:start signals-room-switch
        let pickedRoom = selectedRoom.removeDuplicates().compactMap { rooms[$0] }
        // The picked room's lines, from an empty list at each pick. switchToLatest stops following the room the
        // user left, whose subscription holds what arrives meanwhile, and follows the new one.
        let shownLines = pickedRoom.map { room in
            room.messages(as: Line.self).scan([Line]()) { $0 + [$1] }.prepend([])
        }
        .switchToLatest()
        // The send button follows the picked room's subscription in the same way.
        let canSend = pickedRoom.map { room in room.state.map(\.isSubscribed) }.switchToLatest()
        // snippet:end

        // snippet:start signals-typing
        // Typing: one whisper at most every 2 s however fast the user types (throttle), to the room that was
        // picked at the keystroke (withLatestFrom).
        let typingWhispers = keystrokes.withLatestFrom(selectedRoom)
            .throttle(for: 2, scheduler: scheduler, latest: false)

        // Showing the others' whispers: "bob is typing…" at each one, hidden 3 s after the last (debounce),
        // nothing before the first (prepend), and only in the picked room (switchToLatest).
        let typingShown = pickedRoom.map { room in
            let whispers = room.messages(as: Typing.self)
            let shown = whispers.map { "\($0.typing) is typing…" as String? }
            let hidden = whispers.debounce(for: 3, scheduler: scheduler).map { _ in nil as String? }
            return shown.merge(with: hidden).prepend(nil)
        }
        .switchToLatest()
        // snippet:end

        // snippet:start signals-banner
        // The banner appears only once the client has been connecting for 1 s, so a drop that heals at once
        // shows nothing; it goes at once when connected. Debounce delays both directions, so only the
        // appearance goes through it.
        let connecting = client.state.map { state in
            if case .connecting = state { true } else { false }
        }
        .removeDuplicates()
        let banner = connecting.filter { !$0 }
            .merge(with: connecting.debounce(for: 1, scheduler: scheduler).filter { $0 })
            .map { $0 ? "Connecting…" : nil as String? }
        // snippet:end

        watches = [
            shownLines.observe(on: .main) { [weak self] in self?.lines = $0 },
            typingShown.observe(on: .main) { [weak self] in self?.typing = $0 },
            banner.observe(on: .main) { [weak self] in self?.banner = $0 },
            canSend.observe(on: .main) { [weak self] in self?.canSend = $0 },
            typingWhispers.observe { _, room in _ = rooms[room]?.whisper(Typing(typing: me)) },
        ]
    }

    /// The text field's `onChange`: counts as typing.
    func keystroke() { keystrokes.send(()) }

    // snippet:start signals-send-timeout
    /// Sends `text` to the picked room and waits up to 5 s for the server's broadcast of it.
    func send(_ text: String) async -> Delivery {
        guard let room = rooms[selectedRoom.value] else { return .notSent }
        let echo = room.messages(as: Line.self).filter { [me] in $0.user == me && $0.text == text }
            .map { _ in Delivery.delivered }
            .prefix(1)
            .timeout(5, scheduler: scheduler, fallback: .noAnswer)
        var answer = echo.values.makeAsyncIterator()  // observes from here: the echo cannot come too early
        guard room.perform("speak", ["text": .string(text)]) else { return .notSent }
        return await answer.next() ?? .noAnswer
    }
    // snippet:end
}
