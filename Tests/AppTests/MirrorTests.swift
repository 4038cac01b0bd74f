import CableReactive
import CableTesting
import Dispatch
import Foundation
import Observation
import Signals
import Testing

/// Issue 23, item 3: `StateMirror` and `MessagesMirror` as SwiftUI sees them, through `withObservationTracking`,
/// and their lifetimes.
@Suite("Mirrors for SwiftUI")
@MainActor
struct MirrorTests {
    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("a StateMirror starts from the current value and reports each change to withObservationTracking")
    func stateMirrorTracks() async {
        let source = MutableStateValue(1)
        let mirror = StateMirror(source.readOnly)
        #expect(mirror.value == 1)
        let changes = Locked(0)
        func track() {
            withObservationTracking {
                _ = mirror.value
            } onChange: {
                changes.withLock { $0 += 1 }
            }
        }
        track()
        await MainActorObserverTests.drainMainQueue()  // the replayed current value: equal, so no change
        #expect(changes.withLock { $0 } == 0)
        source.value = 2
        #expect(await MainActorObserverTests.eventually { mirror.value == 2 })
        #expect(changes.withLock { $0 } == 1)
        track()
        source.value = 3
        source.value = 4
        #expect(await MainActorObserverTests.eventually { mirror.value == 4 })
        #expect(changes.withLock { $0 } == 2)  // tracking fires once per registration
    }

    struct Opaque: Sendable { let n: Int }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("equal values are not written again, optionals included; values that are not Equatable always are")
    func stateMirrorSkipsEqualWrites() {
        let optional = MutableStateValue<String?>(nil, isDuplicate: nil)  // a source that sends repeats
        let mirror = StateMirror(optional.readOnly)
        let opaque = MutableStateValue(Opaque(n: 1))
        let opaqueMirror = StateMirror(opaque.readOnly)
        let writes = Locked(0)
        let opaqueWrites = Locked(0)
        withObservationTracking {
            _ = mirror.value
        } onChange: {
            writes.withLock { $0 += 1 }
        }
        withObservationTracking {
            _ = opaqueMirror.value
        } onChange: {
            opaqueWrites.withLock { $0 += 1 }
        }
        optional.value = nil  // on the main actor: delivered at once, and equal
        #expect(writes.withLock { $0 } == 0)
        optional.value = "a"
        #expect(writes.withLock { $0 } == 1 && mirror.value == "a")
        opaque.value = Opaque(n: 1)
        #expect(opaqueWrites.withLock { $0 } == 1)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("a StateMirror of a signal without a current value starts from its initial value")
    func stateMirrorOfSignal() async {
        let events = MutableEventStream<String>()
        let mirror = StateMirror(events.map { $0.uppercased() }, initial: "none")
        #expect(mirror.value == "none")
        events.send("a")
        #expect(await MainActorObserverTests.eventually { mirror.value == "A" })
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("a MessagesMirror keeps the newest `limit` messages in order, and tracking sees each arrival")
    func messagesMirrorBounded() async {
        let events = MutableEventStream<Int>()
        let mirror = MessagesMirror(events, limit: 3)
        #expect(mirror.latest.isEmpty)
        #expect(mirror.limit == 3)
        let changed = Locked(false)
        withObservationTracking {
            _ = mirror.latest
        } onChange: {
            changed.withLock { $0 = true }
        }
        for value in 1...5 { events.send(value) }
        #expect(await MainActorObserverTests.eventually { mirror.latest == [3, 4, 5] })
        #expect(changed.withLock { $0 })
        mirror.removeAll()
        #expect(mirror.latest.isEmpty)
        events.send(6)
        #expect(await MainActorObserverTests.eventually { mirror.latest == [6] })
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("releasing a mirror ends its observation")
    func mirrorReleaseEndsObservation() async {
        let events = MutableEventStream<Int>()
        weak var weakState: StateMirror<Int>?
        weak var weakList: MessagesMirror<Int>?
        do {
            let state = StateMirror(events, initial: 0)
            let list = MessagesMirror(events)
            weakState = state
            weakList = list
            events.send(1)
            #expect(await MainActorObserverTests.eventually { state.value == 1 && list.latest == [1] })
            #expect(events.observerCount == 2)
        }
        #expect(weakState == nil)
        #expect(weakList == nil)
        #expect(events.observerCount == 0)
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @MainActor
    @Observable
    final class ChatModel {
        let client: ActionCableClient
        let status: StateMirror<CableState>
        let lines: MessagesMirror<JSONValue>

        init(client: ActionCableClient) throws {
            self.client = client
            status = StateMirror(client.state)
            lines = MessagesMirror(try client.subscribe(["channel": "ChatChannel"]).messages, limit: 10)
        }
    }

    @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
    @Test("a view model's mirrors show the client's state and messages; releasing the model releases the client")
    func viewModelLifetime() async throws {
        let fake = FakeTransport()
        weak var weakClient: ActionCableClient?
        weak var weakModel: ChatModel?
        do {
            let client = try ActionCableClient(
                url: URL(string: "ws://cable.test/cable")!, transport: fake, scheduler: ManualScheduler(),
                callbackQueue: DispatchQueue(label: "callbacks"))
            weakClient = client
            let model = try ChatModel(client: client)
            weakModel = model
            client.connect()
            let connection = try #require(fake.last)
            connection.open()
            connection.receive(#"{"type":"welcome"}"#)
            let identifier = #"{\"channel\":\"ChatChannel\"}"#
            connection.receive(#"{"identifier":"\#(identifier)","type":"confirm_subscription"}"#)
            connection.receive(#"{"identifier":"\#(identifier)","message":{"text":"hi"}}"#)
            #expect(await MainActorObserverTests.eventually { model.status.value == .connected })
            #expect(await MainActorObserverTests.eventually { model.lines.latest == [["text": "hi"]] })
        }
        await MainActorObserverTests.drainMainQueue()
        #expect(weakModel == nil)
        #expect(weakClient == nil)
        #expect(fake.last?.isClosed == true)  // the released client closed its connection
    }
}
