#if os(Linux) && canImport(Glibc)
    import CableReactive
    import Foundation
    import Testing

    /// How `SocketTransport.Options` print: every setting, no closures, no proxy credentials.
    @Suite("SocketTransport.Options: description")
    struct SocketTransportOptionsTests {
        private typealias HTTPProxy = SocketTransport.HTTPProxy

        @Test("options print every setting but the two closures, in declaration order")
        func optionsDescription() throws {
            let defaults = SocketTransport.Options()
            let expected =
                "SocketTransport.Options(connectTimeout: 10.0, connectionAttemptDelay: 0.25, closeTimeout: 5.0, "
                + "maxFrameSize: 1048576, maxMessageSize: 1048576, maxPendingSendBytes: 8388608, tlsCAFilePath: nil, "
                + "tlsPins: [], enablePerMessageDeflate: false, proxy: direct)"
            #expect(String(describing: defaults) == expected)
            #expect("\(defaults)" == expected)
            #expect(String(reflecting: defaults) == expected)
            #expect("\(SocketTransport.Options(proxy: .environment))".hasSuffix(", proxy: environment)"))

            let pin = try CertificatePin("sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
            let options = SocketTransport.Options(
                connectTimeout: 5, maxFrameSize: 4096, tlsCAFilePath: "/etc/cable/ca.pem", tlsPins: [pin],
                enablePerMessageDeflate: true,
                proxy: .http(HTTPProxy(host: "proxy.corp", port: 3128)))
            let printed: String =
                "SocketTransport.Options(connectTimeout: 5.0, connectionAttemptDelay: 0.25, closeTimeout: 5.0, "
                + "maxFrameSize: 4096, maxMessageSize: 1048576, maxPendingSendBytes: 8388608, "
                + #"tlsCAFilePath: "/etc/cable/ca.pem", tlsPins: [sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=], "#
                + "enablePerMessageDeflate: true, proxy: http(http://proxy.corp:3128))"
            #expect("\(options)" == printed)
        }

        @Test("options with proxy credentials print, dump and reflect without them, and without closures")
        func optionsRedaction() throws {
            let proxy = try HTTPProxy(url: "http://alice:pw-S3CR3T@proxy.corp:3128", bypass: ".corp, localhost")
            let options = SocketTransport.Options(proxy: .http(proxy))
            let printed = "\(options)"
            #expect(
                printed.hasSuffix(#", proxy: http(http://proxy.corp:3128 (credentials), bypass: ".corp, localhost"))"#))
            #expect(String(describing: options) == printed)
            #expect(String(reflecting: options) == printed)
            #expect(
                "\(SocketTransport.Proxy.http(proxy))"
                    == #"http(http://proxy.corp:3128 (credentials), bypass: ".corp, localhost")"#)
            var dumped = ""
            dump(options, to: &dumped)
            #expect(dumped.contains("connectTimeout: 10.0") && dumped.contains("proxy.corp"))
            #expect(dumped.contains("hasCredentials: true"))
            #expect(!dumped.contains("Function") && !dumped.contains("makeRandomNumberGenerator"))
            #expect(!dumped.contains("resolver"))
            for text in [printed, dumped, "\([options])", "\(Optional(options) as Any)"] {
                #expect(!text.contains("S3CR3T") && !text.contains("alice"), "\(text)")
            }
        }
    }
#endif
