#if os(Linux) && canImport(CCableReactiveOpenSSL) && canImport(Glibc)
    import CCableReactiveOpenSSL
    import Testing

    @testable import CableReactive

    /// OpenSSL is opened on the first wss:// attempt rather than linked (see CCableReactiveOpenSSL).
    @Suite("Loading OpenSSL")
    struct OpenSSLLoadingTests {
        @Test("the system's libssl loads, with every function the transport calls")
        func loads() {
            #expect(cr_openssl_load() == 1)
            #expect(cr_openssl_load_error() == nil)
            #expect(cr_openssl_load() == 1, "loading again is a no-op")
            let ready = TLSClientContext.prepare(load: { true }, loadError: { nil }, initialize: { true })
            #expect((try? ready.get()) != nil)
        }

        @Test("a library that cannot be loaded stops the client: tlsUnavailable, with dlerror's text")
        func missingLibrary() throws {
            let ready = TLSClientContext.prepare(
                load: { false }, loadError: { "libssl.so.3: cannot open shared object file" }, initialize: { true })
            let error = try #require(ready.failure)
            #expect(error.kind == .tlsUnavailable && error.kind.isPermanent)
            #expect(error.detail == "cannot load OpenSSL: libssl.so.3: cannot open shared object file")
        }

        @Test("a failed initialization is a TLS error, retried")
        func failedInitialization() throws {
            try #require(cr_openssl_load() == 1)  // the error reads OpenSSL's error queue
            let ready = TLSClientContext.prepare(load: { true }, loadError: { nil }, initialize: { false })
            let error = try #require(ready.failure)
            #expect(error.kind == .tls && !error.kind.isPermanent)
        }
    }

    extension Result {
        fileprivate var failure: Failure? {
            if case .failure(let error) = self { return error }
            return nil
        }
    }
#endif
