import CableReactive
import CableTesting
import Foundation
import Signals

/// Clients tuned for tests against a local server: quick retries and a short stale timeout.
enum Fixture {
    static func options(staleTimeout: TimeInterval = 3) -> CableOptions {
        var options = CableOptions()
        options.staleTimeout = staleTimeout
        options.minReconnectDelay = 0.05
        options.maxReconnectDelay = 0.2
        return options
    }

    static func client(
        _ server: LocalCableServer,
        url: URL? = nil,
        staleTimeout: TimeInterval = 3,
        onRequest: (@Sendable (inout CableRequest) async throws -> Void)? = nil,
        onUnauthorized: (@Sendable () async throws -> Bool)? = nil
    ) throws -> ActionCableClient {
        try ActionCableClient(
            url: url ?? server.url, options: options(staleTimeout: staleTimeout), onRequest: onRequest,
            onUnauthorized: onUnauthorized)
    }

    /// Server options for faster tests; pings every `pingInterval` seconds.
    static func serverOptions(pingInterval: TimeInterval? = 3) -> LocalCableServer.Options {
        var options = LocalCableServer.Options()
        options.pingInterval = pingInterval
        options.closeTimeout = 0.3
        return options
    }
}

extension ActionCableClient {
    /// Waits up to `timeout` seconds for the client's state to satisfy `predicate`.
    func reaches(_ timeout: TimeInterval = 5, _ predicate: @escaping @Sendable (CableState) -> Bool) async -> Bool {
        await state.first(within: timeout, where: predicate) != nil
    }

    /// Waits up to `timeout` seconds for `state`.
    func reaches(_ state: CableState, within timeout: TimeInterval = 5) async -> Bool {
        await reaches(timeout) { $0 == state }
    }
}

extension ChannelSubscription {
    /// The next message, or `nil` after `timeout` seconds.
    func nextMessage(within timeout: TimeInterval = 5) async -> JSONValue? {
        await messages.first(within: timeout) { _ in true }
    }

    /// Waits up to `timeout` seconds for `state`.
    func reaches(_ state: SubscriptionState, within timeout: TimeInterval = 5) async -> Bool {
        await self.state.first(within: timeout) { $0 == state } != nil
    }
}
