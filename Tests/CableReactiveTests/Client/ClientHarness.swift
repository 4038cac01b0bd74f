import CableReactive
import CableTesting
import Dispatch
import Foundation
import Signals

/// A client wired to a fake transport, a manual scheduler and a callback queue the test can flush.
final class ClientHarness: Sendable {
    let fake: FakeTransport
    let scheduler = ManualScheduler()
    let client: ActionCableClient
    let options: CableOptions

    static let url = URL(string: "ws://cable.test:3000/cable")!

    init(
        options: CableOptions = CableOptions(),
        gate: AnySignal<Bool> = .just(true),
        network: StateValue<NetworkPath?> = MutableStateValue(nil).readOnly,
        foreground: StateValue<Bool>? = nil,
        pings: Bool = false,
        seed: UInt64 = 1,
        logger: CableLogger? = nil,
        onRequest: (@Sendable (inout CableRequest) async throws -> Void)? = nil,
        onUnauthorized: (@Sendable () async throws -> Bool)? = nil
    ) throws {
        self.options = options
        fake = FakeTransport(pings: pings)
        client = try ActionCableClient(
            url: Self.url, options: options, canConnect: gate, network: network, foreground: foreground,
            transport: fake, scheduler: scheduler,
            random: SeededRandom(seed: seed), logger: logger, onRequest: onRequest,
            onUnauthorized: onUnauthorized)
    }

    /// The client's state once every queued publication has run (they run on the test's thread).
    var state: CableState {
        scheduler.flush()
        return client.state.value
    }

    func state(of subscription: ChannelSubscription) -> SubscriptionState {
        scheduler.flush()
        return subscription.state.value
    }

    /// Waits, without sleeping, until `condition` holds: for work that runs in a hook's task. Flushes the
    /// scheduler's callbacks on each turn. Gives up after `seconds` of wall time.
    @discardableResult
    func eventually(seconds: Double = 20, _ condition: () -> Bool) async -> Bool {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        while DispatchTime.now().uptimeNanoseconds < deadline {
            scheduler.flush()
            if condition() { return true }
            await Task.yield()
        }
        return false
    }

    /// Lets the time of ``CableOptions/unsubscribeDelay`` pass: a subscription whose last handle went is
    /// unsubscribed now.
    func endLinger() {
        scheduler.advance(by: options.unsubscribeDelay)
    }

    /// The newest connection, opened and welcomed.
    @discardableResult
    func welcome() -> FakeTransport.Connection? {
        guard let connection = fake.last else { return nil }
        connection.open()
        connection.receive(#"{"type":"welcome"}"#)
        return connection
    }

    /// Connects and welcomes the first connection.
    @discardableResult
    func connected() -> FakeTransport.Connection? {
        client.connect()
        return welcome()
    }

    static func confirm(_ identifier: String) -> String {
        #"{"identifier":\#(quoted(identifier)),"type":"confirm_subscription"}"#
    }

    static func reject(_ identifier: String) -> String {
        #"{"identifier":\#(quoted(identifier)),"type":"reject_subscription"}"#
    }

    static func message(_ identifier: String, _ payload: String) -> String {
        #"{"identifier":\#(quoted(identifier)),"message":\#(payload)}"#
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
