import CableReactive
import Foundation
import Signals
import Testing

extension IntegrationTests {
    /// The client through `faultproxy.py` in front of the main server. Every test starts and ends with the
    /// proxy in `pass` mode with a clear log.
    @Suite struct FaultProxy {
        let proxy: String
        let control: String

        init() async throws {
            proxy = try Env.proxyURL()
            control = try Env.proxyControl()
            try await HTTP.post(control + "/pass")
            try await HTTP.post(control + "/clear")
            try await HTTP.post(try Env.proxy2Control() + "/pass")
        }

        func connected(_ options: CableOptions = .test(), user: String = unique("px")) async throws -> (
            ActionCableClient, ChannelSubscription
        ) {
            let client = try makeClient(proxy, query: "token=tok-\(user)", options: options)
            client.connect()
            let subscription = try await echoSubscription(client)
            return (client, subscription)
        }

        /// Nothing flows and nothing closes: the silence is noticed within staleTimeout, the client keeps
        /// trying (handshakes hang in the blackhole too) and gets back in after /pass.
        @Test func blackholeIsDetectedAndRecovered() async throws {
            let stale = 3.0
            let (client, subscription) = try await connected(.test(stale: stale))
            defer { client.close() }
            try await HTTP.post(control + "/blackhole")
            let start = monotonicNow()
            try await waitFor(client.state, stale + 2, "stale detected") { $0 != .connected }
            let detected = monotonicNow() - start
            #expect(detected <= stale + 0.5, "detected after \(detected) s")
            // handshakes into the blackhole time out too: attempts keep failing
            try await waitFor(client.state, 2 * stale + 3, "a failed attempt") { isConnecting($0, atLeast: 1) }
            try await HTTP.post(control + "/pass")
            try await waitFor(subscription.state, 2 * stale + 5, "confirmed again") {
                $0 == .subscribed(confirmations: 2)
            }
            _ = try await echo(subscription)
        }

        /// A handover that kills the socket: at the moment the path changes (Wi-Fi to cellular), the proxy
        /// silences the live connection for good, as a vanished interface does, while new connections pass.
        /// The check's WebSocket ping (Rails' websocket-driver answers every ping) gets no pong in 1.5 s, so the
        /// connection is replaced; the time to the first echo on the new one is printed.
        /// (The stale watchdog alone would take `staleTimeout`, 15 s by default.)
        @Test func handoverReplacesTheSilencedConnection() async throws {
            let path = MutableStateValue<NetworkPath?>(
                NetworkPath(status: .satisfied, interfaces: [NetworkInterface(name: "en0", kind: .wifi)]))
            let client = try makeClient(
                proxy, query: "token=tok-\(unique("ho"))", options: .test(stale: 15), network: path.readOnly)
            defer { client.close() }
            client.connect()
            let subscription = try await echoSubscription(client)
            _ = try await echo(subscription)
            try await HTTP.post(control + "/handover")
            let start = monotonicNow()
            path.value = NetworkPath(
                status: .satisfied, interfaces: [NetworkInterface(name: "pdp_ip0", kind: .cellular)])
            try await waitFor(subscription.state, 8, "confirmed on a new connection") {
                $0 == .subscribed(confirmations: 2)
            }
            _ = try await echo(subscription)
            let flowing = monotonicNow() - start
            print("handover: messages flow again \(String(format: "%.2f", flowing)) s after the change (Rails)")
            #expect(client.lastDisconnect.value?.kind == .checkFailed)
            #expect(flowing < 2, "messages flowed again after \(flowing) s")
        }

        /// 800 ms each way plus 4 KiB/s (two proxies in a row; one proxy has one mode): the session holds,
        /// a 2 KB message still makes the round trip.
        @Test func slowLinkKeepsTheSession() async throws {
            let proxy2 = try Env.proxy2URL()
            let control2 = try Env.proxy2Control()
            try await HTTP.post(control + "/throttle?bps=4096")
            try await HTTP.post(control2 + "/latency?ms=800")
            defer {
                Task {
                    _ = try? await HTTP.post(control + "/pass")
                    _ = try? await HTTP.post(control2 + "/pass")
                }
            }
            let client = try makeClient(proxy2, query: "token=tok-\(unique("slow"))", options: .test(stale: 5))
            defer { client.close() }
            let states = Recorder(client.state)
            client.connect()
            let subscription = try await echoSubscription(client, seconds: 15)
            let start = monotonicNow()
            let payload = String(repeating: "x", count: 2048)
            let answer = try await echo(subscription, ["pad": .string(payload)], seconds: 15)
            #expect(answer["pad"]?.stringValue == payload)
            // stay on for longer than the stale timeout
            while monotonicNow() - start < 7 { _ = try await echo(subscription, seconds: 10) }
            #expect(states.values == [.disconnected, .connecting(attempt: 0), .connected])
            #expect(subscription.state.value == .subscribed(confirmations: 1))
        }

        /// A frame cut in half, then FIN: reconnect and resubscribe.
        @Test func cutFrame() async throws {
            let (client, subscription) = try await connected()
            defer { client.close() }
            let armed = try await HTTP.post(control + "/cut")
            // a closing connection of the previous test may still be counted
            #expect((armed["armed"]?.intValue ?? 0) >= 1)
            _ = subscription.perform("echo", ["pad": .string(String(repeating: "y", count: 500))])
            try await waitFor(subscription.state, 10, "confirmed again") { $0 == .subscribed(confirmations: 2) }
            _ = try await echo(subscription)
        }

        /// RST on the live connection and on the next attempts; after /pass the client is back.
        @Test func resetThenPass() async throws {
            let (client, subscription) = try await connected()
            defer { client.close() }
            try await HTTP.post(control + "/reset")
            try await waitFor(client.state, 5, "a reset attempt") { isConnecting($0, atLeast: 1) }
            try await HTTP.post(control + "/pass")
            try await waitFor(subscription.state, 10, "confirmed again") { $0 == .subscribed(confirmations: 2) }
            _ = try await echo(subscription)
        }

        /// A one-shot RST (`/drop`) of the live connection: reconnect and resubscribe.
        @Test func dropOnce() async throws {
            let (client, subscription) = try await connected()
            defer { client.close() }
            let answer = try await HTTP.post(control + "/drop")
            #expect(answer["dropped"]?.intValue == 1)
            try await waitFor(subscription.state, 10, "confirmed again") { $0 == .subscribed(confirmations: 2) }
        }

        /// The backoff 1-2-4-8-16-30 scaled to 0.05…1.5 s, read from the proxy's accept times: each gap is the
        /// doubled step ±25% (plus a little for the attempt itself), capped at the max.
        @Test func backoffSequence() async throws {
            let minDelay = 0.05
            let maxDelay = 1.5
            try await HTTP.post(control + "/refuse")
            let client = try makeClient(
                proxy, query: "token=tok-\(unique("backoff"))", options: .test(min: minDelay, max: maxDelay))
            defer { client.close() }
            client.connect()
            let wanted = 10
            try await eventually(20, "\(wanted) attempts") {
                (try await HTTP.get(control + "/stats")["accepts"]?.arrayValue?.count ?? 0) >= wanted
            }
            try await HTTP.post(control + "/pass")
            let accepts = (try await HTTP.get(control + "/stats")["accepts"]?.arrayValue ?? []).compactMap(
                \.doubleValue)
            let gaps = zip(accepts.dropFirst(), accepts).map { $0 - $1 }.prefix(wanted - 1)
            let tolerance = 0.06
            var report: [String] = []
            for (index, gap) in gaps.enumerated() {
                let base = min(minDelay * pow(2, Double(index)), maxDelay)
                report.append(String(format: "%.3f (base %.3f)", gap, base))
                #expect(gap >= base * 0.75 - 0.005, "gap \(index) = \(gap), base \(base)")
                #expect(gap <= base * 1.25 + tolerance, "gap \(index) = \(gap), base \(base)")
            }
            print("backoff gaps: \(report.joined(separator: ", "))")
            try await waitFor(client.state, 5, "connected after pass") { $0 == .connected }
        }

        /// An upgrade request that is never answered (the proxy reads it and stays silent) ends at the handshake
        /// deadline (staleTimeout): the client gives that socket up, retries, and gets in after /pass.
        @Test func stalledUpgradeTimesOut() async throws {
            let stale = 1.5
            try await HTTP.post(control + "/stall-upgrade")
            let client = try makeClient(
                proxy, query: "token=tok-\(unique("stall"))", options: .test(stale: stale, min: 0.1, max: 0.2))
            defer { client.close() }
            let states = Recorder(client.state)
            let start = monotonicNow()
            client.connect()
            try await waitFor(client.state, stale + 2, "handshake timeout") { isConnecting($0, atLeast: 1) }
            let elapsed = monotonicNow() - start
            #expect(elapsed >= stale - 0.1 && elapsed <= stale + 1, "failed after \(elapsed) s")
            #expect(!states.values.contains(.connected))
            // the second attempt stalls too, and the first stalled socket was closed, not left open
            try await eventually(stale + 3, "a second stalled attempt, the first one closed") {
                let stats = try await HTTP.get(control + "/stats")
                return (stats["accepted"]?.intValue ?? 0) >= 2 && stats["active_stalled"]?.intValue == 1
            }
            let stats = try await HTTP.get(control + "/stats")
            #expect((stats["bytes_up"]?.intValue ?? 0) > 0, "the upgrade request was sent")
            #expect(stats["accept_modes"]?.arrayValue?.allSatisfy { $0.stringValue == "stall-upgrade" } == true)
            try await HTTP.post(control + "/pass")
            try await waitFor(client.state, 2 * stale + 3, "connected after pass") { $0 == .connected }
        }
    }
}
