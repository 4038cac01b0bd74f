import CableReactive
import CableTesting
import Dispatch
import Foundation
import Signals
import Testing

/// Weak references, to prove that released objects are really gone.
private final class WeakList<T: AnyObject>: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var items: [() -> T?] = []

    func add(_ object: T) {
        weak let weak = object
        lock.lock()
        items.append { weak }
        lock.unlock()
    }

    var alive: Int {
        lock.lock()
        defer { lock.unlock() }
        return items.filter { $0() != nil }.count
    }
}

@Suite("ActionCableClient: concurrency and lifetime")
struct ClientStressTests {
    @Test("sixteen threads calling every public operation: nothing crashes, at most one live transport")
    func sixteenThreads() throws {
        let gate = MutableStateValue(true)
        let h = try ClientHarness(gate: gate.eraseToAnySignal())
        let identifiers = (0..<8).map { #"{"channel":"C","n":\#($0)}"# }
        let maxLive = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 16) { thread in
            var random = SeededRandom(seed: UInt64(thread))
            var mine: [ChannelSubscription] = []
            for _ in 0..<400 {
                switch Int.random(in: 0..<12, using: &random) {
                case 0: h.client.connect()
                case 1: if Int.random(in: 0..<4, using: &random) == 0 { h.client.disconnect() }
                case 2:
                    if let sub = try? h.client.subscribe([
                        "channel": "C", "n": .int(Int.random(in: 0..<8, using: &random)),
                    ]) {
                        mine.append(sub)
                    }
                case 3: mine.popLast()?.unsubscribe()
                case 4: _ = mine.last?.perform("go", ["x": 1])
                case 5: gate.value = Bool.random(using: &random)
                case 6: h.fake.last?.open()
                case 7: h.fake.last?.receive(#"{"type":"welcome"}"#)
                case 8:
                    let id = identifiers[Int.random(in: 0..<8, using: &random)]
                    h.fake.last?.receive(ClientHarness.confirm(id))
                    h.fake.last?.receive(ClientHarness.message(id, "1"))
                case 9: h.fake.last?.fail()
                case 10: h.scheduler.advance(by: Double.random(in: 0...3, using: &random))
                default: _ = h.client.state.value
                }
                let live = h.fake.connections.filter { !$0.isClosed }.count
                maxLive.withLock { $0 = max($0, live) }
            }
        }
        #expect(maxLive.withLock { $0 } <= 1)
        h.client.close()
        #expect(h.state == .closed)
        #expect(h.fake.connections.allSatisfy { $0.isClosed })
    }

    @Test(
        "500 lifecycles (create, connect, two shared handles, a loop and observers, close) leave no client or subscription alive"
    )
    func fiveHundredLifecycles() async throws {
        let clients = WeakList<ActionCableClient>()
        let subscriptions = WeakList<ChannelSubscription>()
        let fake = FakeTransport()
        var kept: [SignalObservation] = []  // observations that outlive their client
        for n in 0..<500 {
            let scheduler = ManualScheduler()
            let client = try ActionCableClient(url: ClientHarness.url, transport: fake, scheduler: scheduler)
            clients.add(client)
            let sub = try client.subscribe(["channel": "C", "n": .int(n)])
            let shared = try client.subscribe(["channel": "C", "n": .int(n)])
            subscriptions.add(sub)
            subscriptions.add(shared)
            var loop = shared.messages.makeAsyncIterator()
            let token = sub.messages.map { $0 }.observe { _ in }
            kept.append(shared.state.observe { _ in })
            client.connect()
            fake.last?.open()
            fake.last?.receive(#"{"type":"welcome"}"#)
            fake.last?.receive(ClientHarness.confirm(sub.identifier))
            fake.last?.receive(ClientHarness.message(sub.identifier, "1"))
            #expect(await loop.next() == 1)
            scheduler.flush()
            if n.isMultiple(of: 2) { client.close() }  // the others are only released
            token.cancel()
        }
        #expect(clients.alive == 0, "observations and handles do not keep their client")
        #expect(subscriptions.alive == 0)
        #expect(fake.connections.allSatisfy { $0.isClosed })
        kept.removeAll()
    }
}
