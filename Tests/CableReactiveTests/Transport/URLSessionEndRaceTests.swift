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
    static func run(_ reports: [Race.Report], closing: (WebSocketCloseCode, String)? = nil) -> [WebSocketCloseInfo] {
        var race = Race()
        if let closing { _ = race.requestClose(code: closing.0, reason: closing.1) }
        return reports.compactMap { race.settle($0) }
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
        #expect(settled == nil)
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
        let late = ended.requestClose(code: .normalClosure, reason: "")
        #expect(!late)
        #expect(ended.closeRequest == nil)
    }

    @Test("a binary message ends the connection at once as a protocol violation; nothing after it is delivered")
    func unsupportedMessage() {
        #expect(
            Self.run([.unsupportedMessageReceived, .closeFrameReceived(code: 1003, reason: nil), .completed(End())])
                == [.failed(WebSocketError(.protocolViolation(closeCode: .unsupportedData)))])
    }

    @Test("a failed upgrade keeps the rules of URLSessionTaskEnd: the status wins")
    func upgradeRejected() {
        let rejected = End(httpStatus: 401, errorDomain: End.urlErrorDomain, errorCode: -1011)
        #expect(Self.run([.completed(rejected)]) == [.failed(WebSocketError(.upgradeRejected(status: 401)))])
    }
}
