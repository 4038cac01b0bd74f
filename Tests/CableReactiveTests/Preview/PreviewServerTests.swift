import Dispatch
import Foundation
import Signals
import Testing

@testable import CableReactive
@testable import CableReactivePreview

/// The preview server as a `WebSocketTransport`, against the transport contract: nothing is delivered inside a
/// call (the client makes them under its lock), events come serially and in order, `.closed` exactly once and
/// last, and the handler is released after it.
@MainActor
@Suite("PreviewServer: the transport contract")
struct PreviewServerTests {
    /// Records what a connection delivers, and whether a delivery ever began inside another or inside a call.
    final class Recorder: Sendable {
        private struct State {
            var events: [WebSocketEvent] = []
            var delivering = false
            var nested = false
            var inCall = false
            var deliveredInCall = false
        }

        private let state = Locked(State())

        var events: [WebSocketEvent] { state.withLock { $0.events } }
        var texts: [String] { events.compactMap { if case .text(let text) = $0 { text } else { nil } } }
        /// Whether an event was delivered inside another, or inside a call made through ``calling(_:)``.
        var misdelivered: Bool { state.withLock { $0.nested || $0.deliveredInCall } }

        func handler(also body: @escaping @Sendable (WebSocketEvent) -> Void = { _ in })
            -> @Sendable (WebSocketEvent) -> Void
        {
            { [self] event in
                state.withLock { state in
                    state.nested = state.nested || state.delivering
                    state.deliveredInCall = state.deliveredInCall || state.inCall
                    state.delivering = true
                    state.events.append(event)
                }
                body(event)
                state.withLock { $0.delivering = false }
            }
        }

        /// Runs `body` as the client's lock-holding calls run: any event delivered meanwhile is misdelivered.
        func calling<R>(_ body: () -> R) -> R {
            state.withLock { $0.inCall = true }
            defer { state.withLock { $0.inCall = false } }
            return body()
        }
    }

    nonisolated static let plain = ["actioncable-v1-json", "actioncable-unsupported"]
    nonisolated static let identifier = #"{"channel":"ChatChannel"}"#
    nonisolated static let request = CableRequest(url: URL(string: "ws://preview.invalid/cable")!)

    static func server(
        _ channels: [String: CablePreview.Channel] = ["ChatChannel": .confirm(messages: [["n": 1], ["n": 2]])]
    ) -> (PreviewServer, PreviewScheduler) {
        let scheduler = PreviewScheduler()
        let script = PreviewServer.Script(channels: channels, otherChannels: .confirm(), rule: nil)
        return (PreviewServer(script: script, scheduler: scheduler), scheduler)
    }

    static func connect(
        _ server: PreviewServer, _ recorder: Recorder, protocols: [String] = plain
    ) -> any WebSocketConnection {
        recorder.calling {
            server.connect(request: Self.request, protocols: protocols, handler: recorder.handler())
        }
    }

    @Test("connect delivers nothing at once; the drain delivers .opened, then the welcome")
    func opensInTheDrain() {
        let (server, scheduler) = Self.server()
        let recorder = Recorder()
        let connection = Self.connect(server, recorder)
        #expect(recorder.events.isEmpty)
        #expect(!connection.send(text: CableProtocol.subscribe(identifier: Self.identifier)))  // not open yet
        scheduler.drain()
        #expect(recorder.events == [.opened(protocol: "actioncable-v1-json"), .text(#"{"type":"welcome"}"#)])
        #expect(!recorder.misdelivered)
    }

    @Test("a client that offers only another protocol gets none chosen, as from Rails")
    func noProtocolChosen() {
        let (server, scheduler) = Self.server()
        let recorder = Recorder()
        _ = Self.connect(server, recorder, protocols: ["actioncable-v1-ext-json"])
        scheduler.drain()
        #expect(recorder.events.first == .opened(protocol: nil))
    }

    @Test("a subscribe is answered in the drain: the confirmation, then the channel's messages, in order; once")
    func confirmsThenMessages() {
        let (server, scheduler) = Self.server()
        let recorder = Recorder()
        let connection = Self.connect(server, recorder)
        scheduler.drain()
        let subscribe = CableProtocol.subscribe(identifier: Self.identifier)
        #expect(recorder.calling { connection.send(text: subscribe) })
        #expect(recorder.texts.count == 1)  // the welcome only
        scheduler.drain()
        #expect(
            recorder.texts.dropFirst() == [
                #"{"identifier":"{\"channel\":\"ChatChannel\"}","type":"confirm_subscription"}"#,
                #"{"identifier":"{\"channel\":\"ChatChannel\"}","message":{"n":1}}"#,
                #"{"identifier":"{\"channel\":\"ChatChannel\"}","message":{"n":2}}"#,
            ])
        #expect(connection.send(text: subscribe))  // a repeat on the same connection: not answered
        scheduler.drain()
        #expect(recorder.texts.count == 4)
        #expect(!recorder.misdelivered)
    }

    @Test("reject and unanswered scripts")
    func rejectAndUnanswered() {
        let (server, scheduler) = Self.server(["Locked": .reject, "Silent": .unanswered])
        let recorder = Recorder()
        let connection = Self.connect(server, recorder)
        scheduler.drain()
        connection.send(text: CableProtocol.subscribe(identifier: #"{"channel":"Silent"}"#))
        connection.send(text: CableProtocol.subscribe(identifier: #"{"channel":"Locked"}"#))
        scheduler.drain()
        #expect(
            recorder.texts.dropFirst() == [#"{"identifier":"{\"channel\":\"Locked\"}","type":"reject_subscription"}"#])
    }

    @Test("the client's close discards what was queued and ends with one .closed carrying its code")
    func clientClose() {
        let (server, scheduler) = Self.server()
        let recorder = Recorder()
        let connection = Self.connect(server, recorder)
        recorder.calling { connection.close(code: .normalClosure, reason: "") }
        connection.close(code: .goingAway, reason: "")  // idempotent
        server.end(with: [.closed(.failed(WebSocketError(.abnormalClosure)))])  // the server ends it too
        scheduler.drain()
        // The queued .opened and welcome are discarded: a .closed may be the first event.
        #expect(recorder.events == [.closed(.closed(code: .normalClosure, reason: ""))])
        #expect(!connection.send(text: "{}"))
        #expect(!recorder.misdelivered)
    }

    @Test("a server disconnect sends its frame, then one .closed, though the client closes on the frame")
    func serverDisconnectThenClientClose() {
        let (server, scheduler) = Self.server()
        let recorder = Recorder()
        let connection = Locked<(any WebSocketConnection)?>(nil)
        let handler = recorder.handler { event in
            // What the client does on a disconnect frame: close, from inside the event (under its lock).
            if event == .text(#"{"type":"disconnect"}"#) {
                connection.withLock { $0 }?.close(code: .goingAway, reason: "")
            }
        }
        let made = server.connect(request: Self.request, protocols: Self.plain, handler: handler)
        connection.withLock { $0 = made }
        scheduler.drain()
        server.end(with: [.text(#"{"type":"disconnect"}"#), .closed(.closed(code: .normalClosure, reason: ""))])
        scheduler.drain()
        #expect(
            recorder.events.dropFirst(2) == [
                .text(#"{"type":"disconnect"}"#), .closed(.closed(code: .normalClosure, reason: "")),
            ])
        #expect(!recorder.misdelivered)
    }

    @Test("a handler that calls back into its connection gets the answers later, never nested")
    func reentrantHandler() {
        let (server, scheduler) = Self.server()
        let recorder = Recorder()
        let connection = Locked<(any WebSocketConnection)?>(nil)
        let handler = recorder.handler { event in
            // As the client does under its lock: subscribe after the welcome, close after the first message.
            let open = connection.withLock { $0 }
            if event == .text(#"{"type":"welcome"}"#) {
                open?.send(text: CableProtocol.subscribe(identifier: Self.identifier))
            } else if case .text(let text) = event, text.contains(#""message":{"n":1}"#) {
                open?.close(code: .normalClosure, reason: "")
            }
        }
        let made = server.connect(
            request: Self.request, protocols: Self.plain,
            handler: handler)
        connection.withLock { $0 = made }
        scheduler.drain()
        #expect(!recorder.misdelivered)
        // Confirmation and the first message were delivered in one turn with the second; after the close, the
        // second message (queued before it) is discarded: a closing connection delivers nothing but .closed.
        #expect(recorder.texts.count == 3)
        #expect(recorder.events.last == .closed(.closed(code: .normalClosure, reason: "")))
    }

    @Test("the handler is released once .closed is delivered")
    func releasesHandler() {
        final class Token: Sendable {}
        let (server, scheduler) = Self.server()
        weak var released: Token?
        do {
            let token = Token()
            released = token
            let connection = server.connect(
                request: Self.request, protocols: Self.plain,
                handler: { _ in _ = token })
            scheduler.drain()
            connection.close(code: .normalClosure, reason: "")
            #expect(released != nil)
            scheduler.drain()
        }
        #expect(released == nil)
    }

    @Test("pings every 3 s of virtual time while open, none after")
    func pings() {
        let (server, scheduler) = Self.server()
        let recorder = Recorder()
        let connection = Self.connect(server, recorder)
        scheduler.drain()
        #expect(scheduler.advance(by: 9))
        #expect(Array(recorder.texts.dropFirst()) == [3, 6, 9].map { #"{"type":"ping","message":\#($0)}"# })
        connection.close(code: .normalClosure, reason: "")
        scheduler.drain()
        #expect(scheduler.clock.pendingCount == 0)
    }
}

@MainActor
@Suite("PreviewScheduler: one queue on the main actor")
struct PreviewSchedulerTests {
    @Test("perform never runs work at once; a drain runs it in order, with what it queues, to the end")
    func fifo() {
        let scheduler = PreviewScheduler()
        let order = Locked<[Int]>([])
        scheduler.perform {
            order.withLock { $0.append(1) }
            scheduler.perform { order.withLock { $0.append(3) } }
        }
        scheduler.perform { order.withLock { $0.append(2) } }
        #expect(order.withLock { $0 }.isEmpty)
        #expect(scheduler.drain())
        #expect(order.withLock { $0 } == [1, 2, 3])
    }

    @Test("a drain inside a drain runs nothing and returns false")
    func noNestedDrain() {
        let scheduler = PreviewScheduler()
        let nested = Locked<[Bool]>([])
        let order = Locked<[Int]>([])
        scheduler.perform {
            scheduler.perform { order.withLock { $0.append(2) } }
            MainActor.assumeIsolated {
                nested.withLock { $0.append(scheduler.drain()) }
                nested.withLock { $0.append(scheduler.advance(by: 1)) }
            }
            order.withLock { $0.append(1) }
        }
        scheduler.drain()
        #expect(nested.withLock { $0 } == [false, false])
        #expect(order.withLock { $0 } == [1, 2])
        #expect(scheduler.now == 0)
    }

    @Test("timers wait for advance; the queue is drained before the first and after each", .timeLimit(.minutes(1)))
    func timers() {
        let scheduler = PreviewScheduler()
        let order = Locked<[String]>([])
        _ = scheduler.schedule(after: 2) {
            order.withLock { $0.append("timer 2") }
            scheduler.perform { order.withLock { $0.append("queued by timer 2") } }
        }
        _ = scheduler.schedule(after: 1) { order.withLock { $0.append("timer 1") } }
        scheduler.perform { order.withLock { $0.append("queued") } }
        #expect(scheduler.advance(by: 1.5))
        #expect(order.withLock { $0 } == ["queued", "timer 1"])
        #expect(scheduler.advance(by: 1))
        #expect(order.withLock { $0 } == ["queued", "timer 1", "timer 2", "queued by timer 2"])
    }

    @Test("without a drain, the main queue runs the work", .timeLimit(.minutes(1)))
    func mainQueue() async {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        defer { DispatchQueue.main.setSpecific(key: key, value: nil) }
        let scheduler = PreviewScheduler()
        let onMain = await withCheckedContinuation { continuation in
            scheduler.perform { continuation.resume(returning: DispatchQueue.getSpecific(key: key) == true) }
        }
        #expect(onMain)
    }
}
