import CableReactive
import Testing

/// Which of a URLSessionWebSocketTask's end reports `URLSessionTransport` delivers, run on Linux with the reports an
/// Apple platform would make, in every order URLSession may make them.
@Suite("URLSessionEndRace")
struct URLSessionEndRaceTests {
    typealias Race = URLSessionEndRace
    typealias End = URLSessionTaskEnd

    /// What a pending receive reports on a server close before the delegate hears of it: no code, ENOTCONN.
    static let receiveBeforeClose = Race.Report.receiveFailed(
        End(httpStatus: 101, errorDomain: End.posixErrorDomain, errorCode: 57))
    static let bye = Array("bye".utf8)

    /// Feeds `reports` in order; returns every end delivered.
    static func run(
        _ reports: [Race.Report], closing: (WebSocketCloseCode, String)? = nil, limit: Int = 1 << 20
    ) -> [WebSocketCloseInfo] {
        steps(reports, closing: closing, limit: limit).compactMap(\.deliver)
    }

    /// Feeds `reports` in order; returns every step.
    static func steps(
        _ reports: [Race.Report], closing: (WebSocketCloseCode, String)? = nil, limit: Int = 1 << 20
    ) -> [Race.Step] {
        var race = Race(maximumMessageSize: limit)
        if let closing { _ = race.requestClose(code: closing.0, reason: closing.1) }
        return reports.map { race.settle($0) }
    }

    static func permutations<T>(_ items: [T]) -> [[T]] {
        guard items.count > 1 else { return [items] }
        return items.indices.flatMap { index -> [[T]] in
            var rest = items
            let first = rest.remove(at: index)
            return permutations(rest).map { [first] + $0 }
        }
    }

    @Test("a server's clean close is that close in every order of the three reports, delivered once")
    func serverCloseInAnyOrder() {
        let reports: [Race.Report] = [
            Self.receiveBeforeClose,
            .closeFrameReceived(code: 1000, reason: Self.bye),
            .completed(End(closeCode: 1000, closeReason: Self.bye, httpStatus: 101)),
        ]
        for order in Self.permutations(reports) {
            #expect(Self.run(order) == [.closed(code: .normalClosure, reason: "bye")])
        }
    }

    @Test("a failed receive waits while the task has no close code, and settles when it has one")
    func receiveFailure() {
        var race = Race()
        let settled = race.settle(Self.receiveBeforeClose)
        #expect(settled == Race.Step(armEndDeadline: Race.endGrace))
        #expect(!race.hasEnded)

        let known = End(
            closeCode: 4001, closeReason: Array("kicked".utf8), errorDomain: End.posixErrorDomain, errorCode: 57)
        #expect(
            Self.run([.receiveFailed(known)]) == [.closed(code: WebSocketCloseCode(rawValue: 4001), reason: "kicked")])
    }

    @Test("a completion without an error takes the failed receive's; its own error wins when it has one")
    func receiveErrorKeptForTheCompletion() {
        let reset = Race.Report.receiveFailed(End(httpStatus: 101, errorDomain: End.posixErrorDomain, errorCode: 54))
        #expect(Self.run([reset, .completed(End(httpStatus: 101))]) == [.failed(WebSocketError(.io(errno: 54)))])

        let lost = End(httpStatus: 101, errorDomain: End.urlErrorDomain, errorCode: -1005)
        #expect(Self.run([reset, .completed(lost)]) == [.failed(WebSocketError(.abnormalClosure))])
        guard case .failed(let error) = Self.run([reset, .completed(lost)]).first else { return }
        #expect(error.detail == "NSURLErrorDomain -1005")

        #expect(Self.run([.completed(End(httpStatus: 101))]) == [.failed(WebSocketError(.abnormalClosure))])
    }

    @Test("didCloseWith without a code leaves the end to the completion")
    func closeWithoutCode() {
        let offline = End(errorDomain: End.urlErrorDomain, errorCode: -1009)
        #expect(
            Self.run([.closeFrameReceived(code: 0, reason: nil), .completed(offline)])
                == [.failed(WebSocketError(.networkUnavailable))])
        #expect(
            Self.run([.closeFrameReceived(code: 1005, reason: nil)]) == [.closed(code: .noStatusReceived, reason: "")])
    }

    @Test(
        "after the app's close every report ends with that close; a second close and a close after the end do nothing")
    func appClose() {
        for report in [
            Self.receiveBeforeClose, .closeFrameReceived(code: 1001, reason: nil),
            .completed(End(errorDomain: End.urlErrorDomain, errorCode: -999)), .unsupportedMessageReceived,
            .cancelledBeforeOpen,
        ] {
            #expect(
                Self.run([report], closing: (.normalClosure, "logout")) == [
                    .closed(code: .normalClosure, reason: "logout")
                ])
        }
        var race = Race()
        let first = race.requestClose(code: .normalClosure, reason: "a")
        let second = race.requestClose(code: .goingAway, reason: "b")
        #expect(first && !second)
        #expect(race.closeRequest?.reason == "a")

        var ended = Race()
        _ = ended.settle(.completed(End(closeCode: 1000)))
        #expect(ended.settle(.endOverdue) == .none)
        let late = ended.requestClose(code: .normalClosure, reason: "")
        #expect(!late)
        #expect(ended.closeRequest == nil)
    }

    @Test("a binary message ends the connection at once as a protocol violation, cancelling with 1003; nothing after")
    func unsupportedMessage() {
        #expect(
            Self.run([.unsupportedMessageReceived, .closeFrameReceived(code: 1003, reason: nil), .completed(End())])
                == [.failed(WebSocketError(.protocolViolation(closeCode: .unsupportedData)))])
        #expect(Self.steps([.unsupportedMessageReceived]).first?.cancelTask == .closing(.unsupportedData))
    }

    // MARK: The end deadline (G19)

    @Test("a report that settles nothing arms the end deadline once; a settled end arms none")
    func deadlineArmedOnce() {
        let steps = Self.steps([
            Self.receiveBeforeClose, .closeFrameReceived(code: 0, reason: nil),
            .completed(End(closeCode: 1000, httpStatus: 101)),
        ])
        #expect(steps.map(\.armEndDeadline) == [Race.endGrace, nil, nil])
        #expect(Race.endGrace > 0 && Race.endGrace < 15)  // before the client's default stale timeout
        #expect(Self.steps([.completed(End(closeCode: 1000))]).first?.armEndDeadline == nil)
    }

    @Test("no end within the deadline after a failed receive: the task is cancelled, the end is the receive's error")
    func receiveFailureWithoutEnd() {
        let reset = Race.Report.receiveFailed(End(httpStatus: 101, errorDomain: End.posixErrorDomain, errorCode: 54))
        let steps = Self.steps([reset, .endOverdue, .completed(End(errorDomain: End.urlErrorDomain, errorCode: -999))])
        #expect(steps[1] == Race.Step(cancelTask: .abort, deliver: .failed(WebSocketError(.io(errno: 54)))))
        #expect(steps[2] == .none)  // the cancellation's completion comes too late to count
        guard case .failed(let error) = steps[1].deliver else { return }
        #expect(error.detail == "NSPOSIXErrorDomain 54")

        let lost = Race.Report.receiveFailed(End(httpStatus: 101, errorDomain: End.urlErrorDomain, errorCode: -1005))
        #expect(Self.run([lost, .endOverdue]) == [.failed(WebSocketError(.abnormalClosure))])
    }

    @Test("a deadline that was never armed, or after the end, does nothing")
    func overdueWithoutDeadline() {
        #expect(Self.steps([.endOverdue]) == [.none])
        #expect(Self.steps([.endOverdue], closing: (.normalClosure, "bye")) == [.none])
        #expect(Self.steps([.completed(End(closeCode: 1000)), .endOverdue]).last == Race.Step.none)
    }

    @Test("the app's close while the deadline runs: the overdue end is that close, and the task is cancelled")
    func appCloseThenOverdue() {
        var race = Race()
        _ = race.settle(Self.receiveBeforeClose)
        _ = race.requestClose(code: .goingAway, reason: "bye")
        #expect(
            race.settle(.endOverdue) == Race.Step(cancelTask: .abort, deliver: .closed(code: .goingAway, reason: "bye"))
        )
    }

    // MARK: Over-size messages (F30)

    @Test("a message over maximumMessageSize (EMSGSIZE) ends at once as messageTooBig, cancelling with 1009")
    func messageTooBig() {
        let tooLong = End(httpStatus: 101, errorDomain: End.posixErrorDomain, errorCode: 40)
        let steps = Self.steps([.receiveFailed(tooLong), .completed(tooLong)], limit: 4096)
        let expected = WebSocketCloseInfo.failed(WebSocketError(.messageTooBig(limit: 4096)))
        #expect(steps[0] == Race.Step(cancelTask: .closing(.messageTooBig), deliver: expected))
        #expect(steps[1] == .none)
        guard case .failed(let error) = steps[0].deliver else { return }
        #expect(error.kind.limit == 4096 && error.kind.closeCode == .messageTooBig)
        #expect(error.detail == "NSPOSIXErrorDomain 40")

        // URLSession may have sent its own 1009 first: the task's code does not make it a server close.
        var sent = tooLong
        sent.closeCode = 1009
        #expect(Self.run([.receiveFailed(sent)], limit: 4096) == [expected])
        // Reported by the completion alone, or by a receive whose error the completion lacks: no cancel needed.
        #expect(Self.steps([.completed(tooLong)], limit: 4096) == [Race.Step(deliver: expected)])
        #expect(Self.run([.receiveFailed(tooLong)], limit: 4096) == [expected])
        #expect(Self.run([.closeFrameReceived(code: 0, reason: nil), .completed(sent)], limit: 4096) == [expected])
    }

    // MARK: Close codes URLSession cannot name (F10)

    @Test("private close codes are delivered as they are, from didCloseWith's raw value")
    func privateCloseCodes() {
        for code in [4000, 4001, 4500, 4999, 3000] {
            #expect(
                Self.run([.closeFrameReceived(code: code, reason: Self.bye)])
                    == [.closed(code: WebSocketCloseCode(rawValue: UInt16(code)), reason: "bye")])
        }
    }

    @Test(
        "didCloseWith with code 0: the task's code at completion; else a clean completion is 1005, a failed one fails")
    func closeFrameWithoutReadableCode() {
        let unread = Race.Report.closeFrameReceived(code: 0, reason: Self.bye)
        // The task holds the code the delegate could not give; the frame's reason when the task has none.
        #expect(
            Self.run([unread, .completed(End(closeCode: 4001, httpStatus: 101))])
                == [.closed(code: WebSocketCloseCode(rawValue: 4001), reason: "bye")])
        // Neither knows it: a task that completes cleanly was closed by the frame (1005, its reason kept), even
        // after the receive's ENOTCONN; a task that completes with an error failed.
        #expect(
            Self.run([Self.receiveBeforeClose, unread, .completed(End(httpStatus: 101))])
                == [.closed(code: .noStatusReceived, reason: "bye")])
        let lost = End(httpStatus: 101, errorDomain: End.urlErrorDomain, errorCode: -1005)
        #expect(Self.run([unread, .completed(lost)]) == [.failed(WebSocketError(.abnormalClosure))])
        // No completion either: the deadline ends it the same way, and cancels the task.
        #expect(
            Self.steps([unread, .endOverdue]).last
                == Race.Step(cancelTask: .abort, deliver: .closed(code: .noStatusReceived, reason: "bye")))
    }

    @Test("a failed upgrade keeps the rules of URLSessionTaskEnd: the status wins")
    func upgradeRejected() {
        let rejected = End(httpStatus: 401, errorDomain: End.urlErrorDomain, errorCode: -1011)
        #expect(Self.run([.completed(rejected)]) == [.failed(WebSocketError(.upgradeRejected(status: 401)))])
    }
}
