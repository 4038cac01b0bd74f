import Testing

@testable import CableReactive

@Suite("Default transport")
struct DefaultTransportTests {
    #if os(Linux)
        @Test("Linux gets SocketTransport, the POSIX transport with the OpenSSL loader")
        func linuxPicksSocketTransport() {
            #expect(defaultTransport() is SocketTransport)
        }
    #endif
}
