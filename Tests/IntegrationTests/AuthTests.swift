import CableReactive
import Foundation
import Signals
import Testing

extension IntegrationTests {
    @Suite struct Auth {
        /// Anonymous, query token, Bearer header and cookie clients side by side, each echoing on its own
        /// subscription; `whoami` shows the server saw each credential the way it was sent.
        @Test func clientsSideBySide() async throws {
            let base = try Env.railsURL()
            let control = try Env.control()
            try await HTTP.post(control + "/anonymous?allow=1")
            defer { Task { _ = try? await HTTP.post(control + "/anonymous?allow=0") } }

            let alice = unique("alice")
            let bob = unique("bob")
            let carol = unique("carol")
            let clients: [(client: ActionCableClient, user: String?, via: String)] = [
                (try makeClient(base), nil, "anonymous"),
                (try makeClient(base, query: "token=tok-\(alice)"), alice, "query"),
                (
                    try makeClient(base) { request in
                        request.setHeader("Authorization", "Bearer tok-\(bob)")
                    }, bob, "header"
                ),
                (
                    try makeClient(base) { request in
                        request.addCookie("theme", "dark")
                        request.addCookie("token", "tok-\(carol)")
                    }, carol, "cookie"
                ),
            ]
            defer { for entry in clients { entry.client.close() } }
            for entry in clients { entry.client.connect() }
            for entry in clients {
                try await waitFor(entry.client.state, 5, "\(entry.via) connected") { $0 == .connected }
            }
            var subscriptions: [ChannelSubscription] = []
            for entry in clients { subscriptions.append(try await echoSubscription(entry.client)) }
            // every client echoes at the same time, each on its own subscription
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, subscription) in subscriptions.enumerated() {
                    group.addTask {
                        let answer = try await echo(subscription, ["text": .string("hi \(index)")])
                        #expect(answer["text"]?.stringValue == "hi \(index)")
                    }
                }
                try await group.waitForAll()
            }
            for (entry, subscription) in zip(clients, subscriptions) {
                #expect(subscription.perform("whoami"))
                let who = try await nextMessage(subscription, 5, "whoami") { $0["via"] != nil }
                #expect(who["via"]?.stringValue == entry.via)
                if let user = entry.user {
                    #expect(who["user"]?.stringValue == user)
                } else {
                    #expect(who["user"]?.stringValue?.hasPrefix("anon-") == true)
                }
                #expect(entry.client.state.value == .connected)
            }
        }

        /// setQueryItem encodes a base64 token so that Rack decodes it byte for byte (a raw `+` would be a
        /// space), and keeps the query item the URL already had.
        @Test func base64QueryToken() async throws {
            let user = unique("b64") + "+a/b=="
            let client = try makeClient(try Env.railsURL(), query: "tag=kept%20as%20is") { request in
                request.setQueryItem("token", "tok-\(user)")
            }
            defer { client.close() }
            client.connect()
            try await waitFor(client.state, 5, "base64 token connected") { $0 == .connected }
            let subscription = try await echoSubscription(client)
            #expect(subscription.perform("whoami"))
            let who = try await nextMessage(subscription, 5, "whoami") { $0["via"] != nil }
            #expect(who["via"]?.stringValue == "query")
            #expect(who["user"]?.stringValue == user)
            #expect(who["tag"]?.stringValue == "kept as is")
        }

        /// An allowed Origin connects; a foreign one gets HTTP 404 and never gets in.
        @Test func originPolicy() async throws {
            let base = try Env.railsURL()
            let good = try makeClient(base, query: "token=tok-\(unique("origin"))") { request in
                request.origin = "http://localhost"
            }
            defer { good.close() }
            good.connect()
            try await waitFor(good.state, 5, "allowed origin connected") { $0 == .connected }

            let marker = unique("evil")
            let evil = try makeClient(
                base, query: "token=tok-\(marker)", options: .test(min: 0.05, max: 0.2, attempts: 2)
            ) { request in
                request.setHeader("Origin", "http://evil.example")
            }
            defer { evil.close() }
            let states = Recorder(evil.state)
            evil.connect()
            let final = try await waitFor(evil.state, 10, "evil origin stopped") {
                if case .stopped = $0 { return true }
                return false
            }
            #expect(final == .stopped(reason: .attemptsExhausted))
            #expect(!states.values.contains(.connected))
            // the server saw three upgrade requests (1 + 2 retries) with that Origin, and refused each
            let handshakes = try await HTTP.get(try Env.control() + "/handshakes")["handshakes"]?.arrayValue ?? []
            let mine = handshakes.filter { $0["query"]?.stringValue?.contains(marker) == true }
            #expect(mine.count == 3)
            #expect(mine.allSatisfy { $0["origin"]?.stringValue == "http://evil.example" })
            #expect(try await connectionCount(try Env.control(), user: marker) == 0)
        }

        /// A rejected token: onUnauthorized runs exactly once, fixes the token and the client gets in.
        @Test func unauthorizedRefreshes() async throws {
            let user = unique("refresh")
            let token = Locked("bogus-\(user)")
            let calls = Locked(0)
            let requests = Locked(0)
            let client = try makeClient(try Env.railsURL()) { request in
                requests.withLock { $0 += 1 }
                let current = token.withLock { $0 }
                request.setQueryItem("token", current)
            } onUnauthorized: {
                calls.withLock { $0 += 1 }
                token.withLock { $0 = "tok-\(user)" }
                return true
            }
            defer { client.close() }
            client.connect()
            try await waitFor(client.state, 5, "connected after refresh") { $0 == .connected }
            #expect(calls.withLock { $0 } == 1)
            #expect(requests.withLock { $0 } == 2)
            let subscription = try await echoSubscription(client)
            #expect(subscription.perform("whoami"))
            let who = try await nextMessage(subscription, 5, "whoami") { $0["user"] != nil }
            #expect(who["user"]?.stringValue == user)
        }

        /// An expired token whose refresh fails: onUnauthorized runs once, returns false, the client stops.
        @Test func unauthorizedStops() async throws {
            let calls = Locked(0)
            let marker = unique("stop")
            let client = try makeClient(
                try Env.railsURL(), query: "token=bogus-\(marker)",
                onUnauthorized: {
                    calls.withLock { $0 += 1 }
                    return false
                })
            defer { client.close() }
            let states = Recorder(client.state)
            client.connect()
            let final = try await waitFor(client.state, 5, "stopped") {
                if case .stopped = $0 { return true }
                return false
            }
            #expect(final == .stopped(reason: .unauthorized(serverReason: "unauthorized")))
            #expect(calls.withLock { $0 } == 1)
            #expect(!states.values.contains(.connected))
            let handshakes = try await HTTP.get(try Env.control() + "/handshakes")["handshakes"]?.arrayValue ?? []
            #expect(handshakes.filter { $0["query"]?.stringValue?.contains(marker) == true }.count == 1)
        }

        /// `token_expired` (the fixture's own reason) goes through the same path and keeps its reason.
        @Test func tokenExpiredStopsWithItsReason() async throws {
            let calls = Locked(0)
            let client = try makeClient(
                try Env.railsURL(), query: "token=expired",
                onUnauthorized: {
                    calls.withLock { $0 += 1 }
                    return false
                })
            defer { client.close() }
            client.connect()
            let final = try await waitFor(client.state, 5, "stopped") {
                if case .stopped = $0 { return true }
                return false
            }
            #expect(final == .stopped(reason: .unauthorized(serverReason: "token_expired")))
            #expect(calls.withLock { $0 } == 1)
        }

        /// onRequest runs before every attempt: each one fetches a fresh one-time ticket over HTTP, so the
        /// session survives a reconnect although a ticket is valid only once.
        @Test func oneTimeTicketSurvivesReconnect() async throws {
            let control = try Env.control()
            let user = unique("ticket")
            let tickets = Locked<[String]>([])
            let client = try makeClient(try Env.railsURL()) { request in
                let ticket = try await HTTP.post(control + "/ticket?user=\(user)").stringValue ?? ""
                tickets.withLock { $0.append(ticket) }
                request.setQueryItem("ticket", ticket)
            }
            defer { client.close() }
            client.connect()
            let subscription = try await echoSubscription(client)
            #expect(subscription.perform("whoami"))
            let who = try await nextMessage(subscription, 5, "whoami") { $0["via"] != nil }
            #expect(who["via"]?.stringValue == "ticket")
            #expect(who["user"]?.stringValue == user)

            try await HTTP.post(control + "/disconnect?user=\(user)")
            try await waitFor(subscription.state, 10, "confirmed again") { $0 == .subscribed(confirmations: 2) }
            #expect(client.state.value == .connected)
            let used = tickets.withLock { $0 }
            #expect(used.count == 2)
            #expect(Set(used).count == 2)
            #expect(used.allSatisfy { $0.hasPrefix("tkt-") })
        }
    }
}
