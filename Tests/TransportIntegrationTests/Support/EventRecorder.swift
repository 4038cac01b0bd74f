#if os(Linux)
    import CableReactive
    import Foundation

    /// Records a connection's events and lets a test wait for them with a deadline (no fixed sleeps).
    final class EventRecorder: Sendable {
        private let condition = NSCondition()
        // Guarded by `condition`.
        nonisolated(unsafe) private var recorded: [WebSocketEvent] = []

        var handler: @Sendable (WebSocketEvent) -> Void {
            { [self] event in
                condition.lock()
                recorded.append(event)
                condition.broadcast()
                condition.unlock()
            }
        }

        var events: [WebSocketEvent] {
            condition.lock()
            defer { condition.unlock() }
            return recorded
        }

        /// Waits until `predicate` holds for the events so far, or `timeout` seconds pass.
        /// Returns the events either way.
        @discardableResult
        func wait(timeout: Double = 10, until predicate: ([WebSocketEvent]) -> Bool) -> [WebSocketEvent] {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock()
            defer { condition.unlock() }
            while !predicate(recorded) {
                if !condition.wait(until: deadline) { break }
            }
            return recorded
        }

        /// Waits for `.opened` (or an early `.closed`).
        @discardableResult
        func waitOpened(timeout: Double = 10) -> [WebSocketEvent] {
            wait(timeout: timeout) { events in events.contains { $0.isOpened || $0.isClosed } }
        }

        /// Waits for `.closed` and returns its info.
        func waitClosed(timeout: Double = 10) -> WebSocketCloseInfo? {
            let events = wait(timeout: timeout) { $0.contains { $0.isClosed } }
            for event in events { if case .closed(let info) = event { return info } }
            return nil
        }

        /// Waits until `count` text messages arrived and returns the texts so far.
        func waitTexts(_ count: Int, timeout: Double = 10) -> [String] {
            wait(timeout: timeout) { events in events.filter(\.isText).count >= count || events.contains { $0.isClosed }
            }
            .compactMap { event in
                if case .text(let text) = event { return text }
                return nil
            }
        }
    }

    extension WebSocketEvent {
        var isOpened: Bool { if case .opened = self { true } else { false } }
        var isClosed: Bool { if case .closed = self { true } else { false } }
        var isText: Bool { if case .text = self { true } else { false } }
    }
#endif
