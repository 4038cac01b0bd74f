import Signals

/// The client's side of one handle: what the engine publishes to it. It holds the Signals storages themselves
/// (one object and one lock each): the handle only ever hands out views of them.
final class HandleSink: Sendable {
    let id: UInt64
    /// The handle's message stream: the engine sends to it, the handle's ``CableMessages`` observe it.
    let messages: StreamStorage<MessageJSON>
    let state: StateStorage<SubscriptionState>
    let reconnect: StateStorage<SubscriptionReconnect?>
    /// What only some handles use, made on first use (under the engine's lock): most handles never touch
    /// presence or positions, and a thousand of them should not pay four objects each for it.
    private let extras = Locked(Extras())

    private struct Extras {
        var presence: PresenceSink?
        var positioned: StreamStorage<PositionedMessage>?
        var readsValues = false
    }

    init(id: UInt64, bufferSize: Int, state: SubscriptionState, reconnect: SubscriptionReconnect? = nil) {
        self.id = id
        messages = StreamStorage(holding: .bufferingNewest(bufferSize))
        self.state = StateStorage(state)
        // Every reconnect is news, even one with the outcome of the last: equal values are published again.
        self.reconnect = StateStorage(reconnect, isDuplicate: nil)
    }

    /// The handle's presence, if it was asked for.
    var presence: PresenceSink? { extras.withLock { $0.presence } }

    /// The handle's messages with their positions, if it asked for them. Read by each route made for it.
    var positioned: StreamStorage<PositionedMessage>? { extras.withLock { $0.positioned } }

    /// Whether a consumer of the handle's untyped messages has started: from then on its route parses messages
    /// into values (``DeliveryRoute/wantsValues``). Read by each route made for it.
    var readsValues: Bool { extras.withLock { $0.readsValues } }

    /// Notes that a consumer of the handle's untyped messages started; returns whether it is the first.
    func startReadingValues() -> Bool {
        extras.withLock { extras in
            defer { extras.readsValues = true }
            return !extras.readsValues
        }
    }

    /// The handle's presence, made with the set `members` if it has none.
    func makePresence(members: [String: PresenceMember]?) -> PresenceSink {
        extras.withLock { extras in
            if let presence = extras.presence { return presence }
            let made = PresenceSink(members: members)
            extras.presence = made
            return made
        }
    }

    /// The handle's positioned stream, made with `bufferSize` if it has none; `made` says whether it is new.
    func makePositioned(bufferSize: Int) -> (storage: StreamStorage<PositionedMessage>, made: Bool) {
        extras.withLock { extras in
            if let storage = extras.positioned { return (storage, false) }
            let made = StreamStorage<PositionedMessage>(holding: .bufferingNewest(bufferSize))
            extras.positioned = made
            return (made, true)
        }
    }

    /// A handle the engine lets go of without ending it (the client was released): its loops end.
    deinit { finishStreams() }

    /// Ends the handle: its streams finish after what they hold, its waiting `info()` calls fail, and its state
    /// becomes unsubscribed. Run in the engine's FIFO, so after every message handed to the handle before.
    func end() {
        finishStreams()
        state.update { $0 = .unsubscribed }
    }

    private func finishStreams() {
        let extras = extras.withLock { $0 }
        extras.positioned?.finish()
        messages.finish()
        extras.presence?.end()
    }
}

/// One handle's presence: the set as it sees it, its events, and its `info()` calls waiting for an answer.
final class PresenceSink: Sendable {
    /// The subscription's presence set (nil: not known on this connection).
    let members: StateStorage<[String: PresenceMember]?>
    let events = StreamStorage<PresenceEvent>(holding: nil)
    let waiters = PresenceWaiters()

    init(members: [String: PresenceMember]?) {
        self.members = StateStorage(members)
    }

    /// An ended handle's: no set, no events, and every `info()` fails.
    static func ended() -> PresenceSink {
        let sink = PresenceSink(members: nil)
        sink.end()
        return sink
    }

    /// The handle ended: the events finish and waiting `info()` calls fail.
    func end() {
        events.finish()
        waiters.resolveAll(.failure(.notSubscribed))
    }

    /// Publishes a presence change: the set (when `members` is given), the event, then the answer to the
    /// waiting `info()` calls. Runs on the callback queue.
    func publish(
        members: [String: PresenceMember]??, event: PresenceEvent?,
        answer: Result<[String: PresenceMember], PresenceError>?
    ) {
        if let members { self.members.update { $0 = members } }
        if let event { _ = events.send(contentsOf: CollectionOfOne(event)) }
        if let answer { waiters.resolveAll(answer) }
    }
}

/// The `info()` calls of one handle waiting for the server's presence answer, each with its timeout. A waiter
/// is resumed once: by the answer, its timeout, the end of the connection or the handle, or its task's
/// cancellation. It exists from ``makeID()`` on, so an answer or a cancellation that comes before its
/// continuation is kept for it. Continuations are resumed, and timers cancelled, outside the lock.
final class PresenceWaiters: Sendable {
    typealias Answer = Result<[String: PresenceMember], PresenceError>

    private struct Waiter {
        var continuation: CheckedContinuation<Answer, Never>?
        var timer: (any ScheduledWork)?
        /// The answer that came before the continuation.
        var early: Answer?
    }

    private struct State {
        var next: UInt64 = 0
        var waiting: [UInt64: Waiter] = [:]
    }

    private let state = Locked(State())

    /// A new waiter, still without its continuation.
    func makeID() -> UInt64 {
        state.withLock { state in
            state.next += 1
            state.waiting[state.next] = Waiter()
            return state.next
        }
    }

    /// Gives waiter `id` its continuation. Returns the answer to resume it with at once when one came
    /// already (the waiter is then gone).
    func add(_ id: UInt64, _ continuation: CheckedContinuation<Answer, Never>) -> Answer? {
        state.withLock { state in
            guard let waiter = state.waiting[id] else { return .failure(.cancelled) }
            if let early = waiter.early {
                state.waiting[id] = nil
                return early
            }
            state.waiting[id]?.continuation = continuation
            return nil
        }
    }

    /// Gives waiter `id` its timeout timer; cancels the timer at once if the waiter was resumed meanwhile.
    func setTimer(_ id: UInt64, _ timer: any ScheduledWork) {
        let stale = state.withLock { state -> Bool in
            guard let waiter = state.waiting[id], waiter.early == nil else { return true }
            state.waiting[id]?.timer = timer
            return false
        }
        if stale { timer.cancel() }
    }

    /// Resumes waiter `id` with `answer` if it still waits (or keeps `answer` for it).
    func resolve(_ id: UInt64, _ answer: Answer) {
        let (waiter, timer) = state.withLock { state -> (Waiter?, (any ScheduledWork)?) in
            guard var waiter = state.waiting[id] else { return (nil, nil) }
            guard waiter.continuation != nil else {
                return (nil, Self.keep(answer, for: &waiter, id, in: &state))
            }
            state.waiting[id] = nil
            return (waiter, nil)
        }
        timer?.cancel()
        waiter?.timer?.cancel()
        waiter?.continuation?.resume(returning: answer)
    }

    /// Resumes every waiter with `answer`.
    func resolveAll(_ answer: Answer) {
        let (waiters, timers) = state.withLock { state -> ([Waiter], [any ScheduledWork]) in
            var resumed: [Waiter] = []
            var timers: [any ScheduledWork] = []
            for (id, var waiter) in state.waiting {
                if waiter.continuation != nil {
                    resumed.append(waiter)
                    state.waiting[id] = nil
                } else if let timer = Self.keep(answer, for: &waiter, id, in: &state) {
                    timers.append(timer)
                }
            }
            return (resumed, timers)
        }
        for timer in timers { timer.cancel() }
        for waiter in waiters {
            waiter.timer?.cancel()
            waiter.continuation?.resume(returning: answer)
        }
    }

    /// Keeps the first `answer` for a waiter without its continuation yet; returns its timer, now useless,
    /// to cancel outside the lock.
    private static func keep(
        _ answer: Answer, for waiter: inout Waiter, _ id: UInt64, in state: inout State
    ) -> (any ScheduledWork)? {
        guard waiter.early == nil else { return nil }
        waiter.early = answer
        let timer = waiter.timer
        waiter.timer = nil
        state.waiting[id] = waiter
        return timer
    }
}
