#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// The engine of the time operators (debounce, throttle, delay, timeout): one upstream observation, at most
/// one armed timer, and one downstream observer, per observation.
///
/// An operator is a pure `step` over its `State`: it gets each upstream event, the firing of its timer, and
/// the start of the observation, with the time and whether a timer is armed, and answers with downstream
/// events and the timer it wants (``Effects``). The relay runs `step` under its lock and queues the
/// downstream events in the downstream ``ObserverBox`` under that same lock (as ``Combiner`` does), so events
/// caused by upstream and by the timer reach the observer in one order. Everything else happens after the
/// lock: reading the clock, scheduling and cancelling timer work, delivering, cancelling the upstream.
///
/// **One timer.** Asking for a timer replaces the armed one. An operator whose deadline moves later (a
/// debounce that got another value) keeps the armed timer and, when it fires early, asks for the remainder.
/// Timers carry a generation id: a timer that fires after it was replaced or cancelled does nothing.
///
/// **Lifetime.** The upstream observation and the timer work hold the relay weakly; the downstream token holds
/// it. Cancelling, or the end, cancels the upstream observation and the timer work, and releases the pending
/// values, the operator's step (and what it captured) and the observer's handler.
final class TimedRelay<Input: Sendable, State: Sendable, Output: Sendable>: Sendable {
    /// What a step reacts to.
    enum Trigger {
        /// The observation started (before upstream is observed).
        case start
        case event(SignalEvent<Input>)
        /// The armed timer fired.
        case timer
    }

    /// What a step sees (the time, whether a timer is armed) and does (send, finish, arm a timer).
    struct Effects {
        /// The scheduler's time, read before the lock.
        let now: TimeInterval
        /// Whether a timer is armed (the one that fired is no longer armed).
        let timerArmed: Bool
        fileprivate let box: ObserverBox<Output>
        fileprivate var wakes = WakeList()
        fileprivate var timer: TimeInterval?
        fileprivate var finished = false
        fileprivate var dropped = 0

        /// Queues `value` for the observer.
        mutating func send(_ value: Output) { wakes.append(box.enqueue(value)) }

        /// Queues the end for the observer; the relay then cancels its timer and upstream.
        mutating func finish() {
            finished = true
            wakes.append(box.enqueueFinish())
        }

        /// Arms one timer `delay` seconds from ``now``, replacing the armed one.
        mutating func arm(after delay: TimeInterval) { timer = delay }

        /// Counts a value the operator dropped (added to the observation's `droppedCount`).
        mutating func countDrop() { dropped += 1 }
    }

    typealias Step = @Sendable (inout State, Trigger, inout Effects) -> Void

    private struct Core {
        var state: State
        /// The operator, and what it captured (a timeout's fallback); released when the relay ends.
        var step: Step?
        /// The generation of the armed timer, if one is armed.
        var armed: UInt64?
        var generation: UInt64 = 0
        /// The armed timer's work, once `schedule` returned it.
        var work: (any ScheduledWork)?
        var upstream: SignalObservation?
        var ended = false
        var dropped = 0
    }

    /// What to do after the lock.
    private struct Outcome {
        var wakes = WakeList()
        var arm: (generation: UInt64, delay: TimeInterval)?
        var cancelWork: (any ScheduledWork)?
        var cancelUpstream: SignalObservation?
        /// The state and step of an ended relay, released after the lock.
        var released: (State, Step?)?
    }

    private let core: Locked<Core>
    private let initial: State
    private let box: ObserverBox<Output>
    private let scheduler: any SignalScheduler

    private init(_ initial: State, box: ObserverBox<Output>, scheduler: any SignalScheduler, step: @escaping Step) {
        core = Locked(Core(state: initial, step: step))
        self.initial = initial
        self.box = box
        self.scheduler = scheduler
    }

    /// A signal that, for each observer, runs `step` over `upstream`'s events and its timer.
    ///
    /// The observer's `queue` and `buffering` apply to the downstream box; upstream is observed on the
    /// sending thread, unbounded (its box only ever holds what concurrent senders bring while `step` runs).
    static func signal<Upstream: Signal>(
        _ upstream: Upstream,
        scheduler: any SignalScheduler,
        initial: State,
        step: @escaping Step
    ) -> AnySignal<Output> where Upstream.Element == Input {
        signal(upstream, scheduler: scheduler, initial: { _ in initial }, step: step)
    }

    /// ``signal(_:scheduler:initial:step:)`` whose state depends on the observer's policy (`delay` bounds
    /// the values waiting for their time by it), as ``Combiner`` allows.
    static func signal<Upstream: Signal>(
        _ upstream: Upstream,
        scheduler: any SignalScheduler,
        initial: @escaping @Sendable (BufferingPolicy) -> State,
        step: @escaping Step
    ) -> AnySignal<Output> where Upstream.Element == Input {
        AnySignal { queue, buffering, handler in
            let box = ObserverBox(queue: queue, buffering: buffering, handler: handler)
            let relay = TimedRelay(initial(buffering), box: box, scheduler: scheduler, step: step)
            relay.handle(.start)
            let observation = upstream.observeEvents(on: nil, buffering: .unbounded) { [weak relay] event in
                relay?.handle(.event(event))
            }
            relay.attach(observation)
            return SignalObservation(cancel: relay.cancel, droppedCount: { relay.droppedCount })
        }
    }

    private func handle(_ trigger: Trigger, generation: UInt64? = nil) {
        let now = scheduler.now
        let outcome = core.withLock { core -> Outcome? in
            guard !core.ended, let step = core.step else { return nil }
            var outcome = Outcome()
            if let generation {
                guard core.armed == generation else { return nil }  // replaced or cancelled meanwhile
                core.armed = nil
                outcome.cancelWork = core.work  // it ran; released after the lock
                core.work = nil
            }
            var effects = Effects(now: now, timerArmed: core.armed != nil, box: box)
            step(&core.state, trigger, &effects)
            core.dropped += effects.dropped
            outcome.wakes = effects.wakes
            if effects.finished {
                core.ended = true
                core.armed = nil
                outcome.cancelWork = core.work ?? outcome.cancelWork
                outcome.cancelUpstream = core.upstream
                core.work = nil
                core.upstream = nil
                outcome.released = (core.state, core.step)
                core.state = initial
                core.step = nil
            } else if let delay = effects.timer {
                if let work = core.work { outcome.cancelWork = work }
                core.work = nil
                core.generation += 1
                core.armed = core.generation
                outcome.arm = (core.generation, delay)
            }
            return outcome
        }
        guard let outcome else { return }
        outcome.cancelWork?.cancel()
        if let arm = outcome.arm { self.arm(arm.generation, after: arm.delay) }
        outcome.wakes.run()
        outcome.cancelUpstream?.cancel()
    }

    /// Schedules the timer of `generation`, and keeps its work to cancel, unless it was replaced, fired or
    /// cancelled while `schedule` ran.
    private func arm(_ generation: UInt64, after delay: TimeInterval) {
        let work = scheduler.schedule(after: delay) { [weak self] in
            self?.handle(.timer, generation: generation)
        }
        let stale = core.withLock { core -> Bool in
            guard core.armed == generation else { return true }
            core.work = work
            return false
        }
        if stale { work.cancel() }
    }

    /// Keeps the upstream observation to cancel; cancels it at once if the relay already ended.
    private func attach(_ upstream: SignalObservation) {
        let ended = core.withLock { core -> Bool in
            if core.ended { return true }
            core.upstream = upstream
            return false
        }
        if ended { upstream.cancel() }
    }

    /// Stops everything: the upstream observation, the timer work, the pending values, the observer.
    private func cancel() {
        let (work, upstream, released) = core.withLock { core in
            core.ended = true
            core.armed = nil
            defer {
                core.work = nil
                core.upstream = nil
                core.state = initial
                core.step = nil
            }
            return (core.work, core.upstream, (core.state, core.step))
        }
        work?.cancel()
        upstream?.cancel()
        box.cancel()
        _ = released  // the pending values and the operator's captures are released here, outside the lock
    }

    private var droppedCount: Int { core.withLock { $0.dropped } + box.droppedCount }
}
