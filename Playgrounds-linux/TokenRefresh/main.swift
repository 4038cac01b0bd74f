// Token refresh: the server rejects an expired token; `onUnauthorized` fetches a new one and the client
// reconnects at once with it, because `onRequest` runs before every attempt.
//
//     swift run TokenRefresh

import CableReactive
import CableTesting
import ExampleSupport
import Foundation
import Signals

/// Stands in for the app's credential store and its refresh call.
final class TokenStore: Sendable {
    private let token = MutableStateValue("expired-token")
    private let refreshes = MutableStateValue(0)

    var current: String { token.value }

    func refresh() async -> Bool {
        let count = refreshes.update { count -> Int in
            count += 1
            return count
        }
        token.value = "fresh-token-\(count)"
        say("refreshed the token (refresh #\(count))")
        return true
    }
}

await runExample {
    let server = try LocalCableServer()
    defer { server.stop() }
    // Like a Rails connection that calls reject_unauthorized_connection for a bad token.
    server.connectionRule = { request in
        let token = request.queryValue("token") ?? ""
        say("server: upgrade with token \(token)")
        return token.hasPrefix("fresh-token") ? .accept : .unauthorized
    }
    let tokens = TokenStore()

    // snippet:start token-refresh
    let client = try ActionCableClient(
        url: server.url,
        onRequest: { request in
            // Runs before every attempt: always the current token.
            request.setQueryItem("token", tokens.current)
        },
        onUnauthorized: {
            // The server said "unauthorized": refresh, and return true to reconnect at once.
            await tokens.refresh()
        }
    )
    // snippet:end

    let printer = client.state.observe { state in say("state: \(state)") }
    defer { printer.cancel() }
    client.connect()
    try await said("state: connected")  // the printer runs on the callback queue: wait until it has shown it
    say("connected with \(tokens.current)")
    client.close()
    say("done")
}
