import CableReactive
import CableTesting
import Dispatch
import Foundation
import Signals
import Testing

// Issue 23, item 2: what a `@MainActor` view model writes, compiled in Swift 6 mode with warnings as errors:
// `observe(on: .main) { self.x = $0 }` on a state, on a subscription's messages and on any signal, and `for await`
// loops over `values` in a main-actor task, with no `MainActor.assumeIsolated` in the app's code.

@MainActor
final class RoomViewModel {
    private(set) var status: CableState = .disconnected
    private(set) var roomState: SubscriptionState = .pending
    private(set) var texts: [String] = []
    private(set) var online = false
    private(set) var finished = false
    private(set) var onMainThread: [Bool] = []
    private(set) var loopStates: [CableState] = []
    private var tokens: [SignalObservation] = []

    init(client: ActionCableClient, room: ChannelSubscription, online: some Signal<Bool>) {
        tokens.append(client.state.observe(on: .main) { self.status = $0 })
        tokens.append(room.state.observe(on: .main) { [weak self] in self?.roomState = $0 })
        tokens.append(
            room.messages.observe(on: .main) { [weak self] message in
                self?.onMainThread.append(MainQueueMark.isCurrent)
                self?.texts.append(message["text"]?.stringValue ?? "?")
            })
        tokens.append(online.map { !$0 }.map { !$0 }.observe(on: .main) { self.online = $0 })
        tokens.append(
            room.messages.observe(on: .main, onValue: { _ in }, onFinish: { [weak self] in self?.finished = true }))
    }

    /// The async form: a loop in a main-actor task.
    func follow(_ client: ActionCableClient) async {
        for await state in client.state.values {
            loopStates.append(state)
            if state == .connected { break }
        }
    }
}

@Suite("Main-actor observers")
@MainActor
struct MainActorObserverTests {
    @Test("observe(on: .main) delivers states, messages and mapped signals on the main thread to a @MainActor model")
    func viewModelObservers() async throws {
        let fake = FakeTransport()
        let scheduler = ManualScheduler()
        let online = MutableStateValue(false)
        let client = try ActionCableClient(
            url: URL(string: "ws://cable.test/cable")!, transport: fake, scheduler: scheduler,
            callbackQueue: DispatchQueue(label: "callbacks"))
        let room = try client.subscribe(["channel": "ChatChannel"])
        let model = RoomViewModel(client: client, room: room, online: online.readOnly)
        let loop = Task { await model.follow(client) }
        client.connect()
        let connection = try #require(fake.last)
        connection.open()
        connection.receive(#"{"type":"welcome"}"#)
        connection.receive(#"{"identifier":\#(Self.quoted(room.identifier)),"type":"confirm_subscription"}"#)
        for text in ["a", "b"] {
            connection.receive(#"{"identifier":\#(Self.quoted(room.identifier)),"message":{"text":"\#(text)"}}"#)
        }
        online.value = true
        // States hop through the client's callback queue, messages go to the main queue directly: wait for all.
        #expect(
            await Self.eventually {
                model.texts == ["a", "b"] && model.online && model.status == .connected
                    && model.roomState == .subscribed(confirmations: 1)
            })
        #expect(model.onMainThread == [true, true])
        await loop.value
        #expect(model.loopStates.last == .connected)
        room.unsubscribe()
        #expect(await Self.eventually { model.finished && model.roomState == .unsubscribed })
        client.close()
    }

    @Test("releasing the model ends its observations; the token does not keep the model alive")
    func releasingTheModelEndsObservations() async throws {
        let source = MutableStateValue(0)
        let calls = Locked(0)
        weak var released: Counter?
        do {
            let counter = Counter(source: source.readOnly, calls: calls)
            released = counter
            source.value = 1
            #expect(await Self.eventually { counter.seen == [0, 1] })
        }
        #expect(released == nil)
        source.value = 2
        await Self.drainMainQueue()
        #expect(calls.withLock { $0 } == 2)  // 0 and 1; nothing after the model went
    }

    @Test("on the main actor, a main-queue observer gets a value before the send returns, after the ones still pending")
    func mainQueueObserverRunsAtOnceOnMain() async {
        let source = MutableStateValue(0)
        let seen = Locked<[Int]>([])
        let token = source.observe(on: .main) { value in seen.withLock { $0.append(value) } }
        #expect(seen.withLock { $0 } == [0])  // the current value, before observe returned
        source.value = 1
        #expect(seen.withLock { $0 } == [0, 1])
        DispatchQueue.global().sync { source.value = 2 }  // another thread: delivered at the main queue's next turn
        #expect(seen.withLock { $0 } == [0, 1])
        source.value = 3  // on the main actor: 2, which was posted, is delivered first, then 3, before the send returns
        #expect(seen.withLock { $0 } == [0, 1, 2, 3])
        await Self.drainMainQueue()  // the posted turn finds nothing left
        #expect(seen.withLock { $0 } == [0, 1, 2, 3])
        token.cancel()
    }

    @MainActor
    final class Counter {
        private(set) var seen: [Int] = []
        private var token: SignalObservation?
        init(source: StateValue<Int>, calls: Locked<Int>) {
            token = source.observe(on: .main) { [weak self] in
                calls.withLock { $0 += 1 }
                self?.seen.append($0)
            }
        }
    }

    /// Returns once everything submitted to the main queue before this call has run.
    static func drainMainQueue() async {
        await withCheckedContinuation { done in DispatchQueue.main.async { done.resume() } }
    }

    /// Yields the main actor (so that the main queue runs what was submitted to it) until `condition` holds;
    /// false after 10 s of wall time.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
        while DispatchTime.now().uptimeNanoseconds < deadline {
            if condition() { return true }
            await Task.yield()
        }
        return condition()
    }

    static func quoted(_ text: String) -> String {
        JSONValue.string(text).description
    }
}
