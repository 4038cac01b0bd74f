import CableReactive
import CableTesting
import Foundation
import Testing

@Suite("CableOptions")
struct CableOptionsTests {
    @Test("the initializer with arguments defaults every option it is not given to what init() has")
    func defaults() {
        #expect(CableOptions(logLabel: nil) == CableOptions())
        #expect(CableOptions(staleTimeout: 15) == CableOptions())
        let options = CableOptions(staleTimeout: 30, maxReconnectAttempts: 5)
        var expected = CableOptions()
        expected.staleTimeout = 30
        expected.maxReconnectAttempts = 5
        #expect(options == expected)
        #expect(CableOptions().coding == CableCoding(dates: .iso8601, keys: .asDeclared))
    }

    @Test("each argument sets its own option")
    func eachArgument() {
        let coding = CableCoding(dates: .millisecondsSince1970, keys: .snakeCase)
        let options = CableOptions(
            staleTimeout: 7, minReconnectDelay: 2, maxReconnectDelay: 9, maxReconnectAttempts: 3,
            messageBufferSize: 16, subscribeRetryDelays: [1], logLabel: "chat", wireProtocol: .anyCableExtended,
            coding: coding)
        #expect(options.staleTimeout == 7)
        #expect(options.minReconnectDelay == 2)
        #expect(options.maxReconnectDelay == 9)
        #expect(options.maxReconnectAttempts == 3)
        #expect(options.messageBufferSize == 16)
        #expect(options.subscribeRetryDelays == [1])
        #expect(options.logLabel == "chat")
        #expect(options.wireProtocol == .anyCableExtended)
        #expect(options.coding == coding)
        #expect(options != CableOptions())
    }

    @Test("options built with arguments are checked when the client is made")
    func checked() {
        #expect(throws: CableError.invalidOption("messageBufferSize")) {
            _ = try ActionCableClient(
                url: ClientHarness.url, options: CableOptions(messageBufferSize: 0), transport: FakeTransport())
        }
    }

    @Test("codings compare and describe by their strategies")
    func codings() {
        #expect(CableCoding() == CableCoding(dates: .iso8601))
        #expect(CableCoding(dates: .iso8601WithoutFraction) != CableCoding())
        #expect(CableCoding(keys: .snakeCase) != CableCoding())
        let names = [
            CableCoding.DateStrategy.iso8601, .iso8601WithoutFraction, .secondsSince1970, .millisecondsSince1970,
            .deferredToDate,
        ].map(\.description)
        #expect(
            names == [
                "iso8601", "iso8601WithoutFraction", "secondsSince1970", "millisecondsSince1970", "deferredToDate",
            ])
        #expect(Set(names).count == 5)
        #expect([CableCoding.KeyStrategy.asDeclared, .snakeCase].map(\.description) == ["asDeclared", "snakeCase"])
    }
}
