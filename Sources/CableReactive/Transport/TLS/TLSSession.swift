#if os(Linux) && canImport(CCableReactiveOpenSSL)
    import CCableReactiveOpenSSL
    import Signals

    /// A TLS client session over OpenSSL memory BIOs: OpenSSL never touches the socket.
    ///
    /// The I/O loop writes received ciphertext in with ``feed(_:)``, takes ciphertext to send with
    /// ``drainCiphertext(into:)``, and does the socket calls itself (with `MSG_NOSIGNAL`, so a reset
    /// peer cannot raise SIGPIPE). The peer is verified against the system trust store (plus an optional
    /// CA file), its certificate must match the host name or IP literal, and TLS 1.2 is the minimum.
    ///
    /// Not thread-safe: an `SSL*` must only be used by one thread, the connection's I/O thread.
    final class TLSSession {
        private let ssl: OpaquePointer
        private let readBIO: OpaquePointer
        private let writeBIO: OpaquePointer
        /// A fatal TLS error happened; OpenSSL forbids SSL_shutdown afterwards.
        private var failed = false
        /// The public keys one of which the server's chain must hold (empty: no pinning).
        private let pins: Set<CertificatePin>

        /// What a read produced.
        enum ReadResult {
            /// `count` plaintext bytes were written to the buffer.
            case bytes(Int)
            /// Nothing more until more ciphertext arrives.
            case wantMore
            /// The peer closed the TLS session (close_notify, or EOF without one).
            case closed
        }

        /// - Parameters:
        ///   - host: the name or IP literal to verify the certificate against.
        ///   - isIPLiteral: no SNI is sent for IP literals (RFC 6066 §3).
        ///   - caFile: an extra PEM file of trusted CAs, used in addition to the system store.
        ///   - pins: public keys one of which a certificate of the server's chain must have (empty: any).
        /// - Throws: `WebSocketError(.tlsUnavailable)` when libssl cannot be loaded, `.tls` when OpenSSL cannot
        ///   be set up, `.certificate` when the CA file cannot be read.
        init(host: String, isIPLiteral: Bool, caFile: String?, pins: Set<CertificatePin> = []) throws(WebSocketError) {
            self.pins = pins
            let context = try TLSClientContext.shared(caFile: caFile)
            cr_ERR_clear_error()
            guard let ssl = cr_SSL_new(context.pointer) else { throw Self.error("SSL_new") }
            guard let readBIO = cr_BIO_new(cr_BIO_s_mem()) else {
                cr_SSL_free(ssl)
                throw Self.error("BIO_new")
            }
            guard let writeBIO = cr_BIO_new(cr_BIO_s_mem()) else {
                cr_BIO_free(readBIO)
                cr_SSL_free(ssl)
                throw Self.error("BIO_new")
            }
            // Fully initialized: from here on, deinit frees the SSL (and the BIOs it owns). The SSL holds a
            // reference to the shared context of its own.
            self.ssl = ssl
            self.readBIO = readBIO
            self.writeBIO = writeBIO
            cr_SSL_set_bio(ssl, readBIO, writeBIO)  // the SSL now owns both BIOs
            cr_SSL_set_connect_state(ssl)
            // Without SSL_set1_host, SSL_VERIFY_PEER accepts any valid certificate for any host.
            guard cr_SSL_set1_host(ssl, host) == 1 else { throw Self.error("SSL_set1_host") }
            if !isIPLiteral && cr_SSL_set_tlsext_host_name(ssl, host) != 1 { throw Self.error("SNI") }
        }

        deinit {
            cr_SSL_free(ssl)
        }

        /// Advances the handshake. Returns `true` once it is complete; `false` when it needs more
        /// ciphertext from the peer (send what ``drainCiphertext(into:)`` yields first).
        ///
        /// - Throws: `WebSocketError(.certificate)` when the certificate does not verify or matches no pin,
        ///   `.tls` with OpenSSL's reason for other failures.
        func handshake() throws(WebSocketError) -> Bool {
            cr_ERR_clear_error()
            let result = cr_SSL_do_handshake(ssl)
            if result == 1 {
                if let refusal = TrustDecision.refusal(
                    verified: true, chain: pins.isEmpty ? [] : peerChain(), pins: pins)
                {
                    failed = true
                    throw WebSocketError(.certificate, detail: refusal)
                }
                return true
            }
            switch cr_SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return false
            default:
                failed = true
                throw Self.error("handshake", ssl: ssl)
            }
        }

        /// Hands received ciphertext to OpenSSL.
        func feed(_ bytes: UnsafeRawBufferPointer) {
            var offset = 0
            while offset < bytes.count, let base = bytes.baseAddress {
                let chunk = Int32(clamping: bytes.count - offset)
                let written = cr_BIO_write(readBIO, base + offset, chunk)
                guard written > 0 else { return }  // a memory BIO only fails when out of memory
                offset += Int(written)
            }
        }

        /// Decrypts into `buffer`.
        func read(into buffer: UnsafeMutableRawBufferPointer) throws(WebSocketError) -> ReadResult {
            cr_ERR_clear_error()
            let result = cr_SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
            if result > 0 { return .bytes(Int(result)) }
            switch cr_SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .wantMore
            case SSL_ERROR_ZERO_RETURN: return .closed
            default:
                failed = true
                throw Self.error("read", ssl: ssl)
            }
        }

        /// Encrypts all of `bytes`; the ciphertext is then available from ``drainCiphertext(into:)``.
        /// A memory BIO takes everything, so this never waits for the socket.
        func write(_ bytes: UnsafeRawBufferPointer) throws(WebSocketError) {
            var offset = 0
            while offset < bytes.count, let base = bytes.baseAddress {
                cr_ERR_clear_error()
                let result = cr_SSL_write(ssl, base + offset, Int32(clamping: bytes.count - offset))
                guard result > 0 else {
                    failed = true
                    throw Self.error("write", ssl: ssl)
                }
                offset += Int(result)
            }
        }

        /// Queues a close_notify alert (best effort; skipped after a fatal error).
        func shutdown() {
            guard !failed else { return }
            cr_ERR_clear_error()
            _ = cr_SSL_shutdown(ssl)
        }

        /// Moves pending ciphertext (handshake records, encrypted data, alerts) to `output`.
        func drainCiphertext(into output: inout [UInt8]) {
            let pending = Int(cr_BIO_ctrl_pending(writeBIO))
            guard pending > 0 else { return }
            let start = output.count
            output.append(contentsOf: repeatElement(0, count: pending))
            let read = output.withUnsafeMutableBytes { buffer in
                cr_BIO_read(writeBIO, buffer.baseAddress.map { $0 + start }, Int32(clamping: pending))
            }
            output.removeLast(pending - max(0, Int(read)))
        }

        /// The DER certificates the server sent, its own first (a client's peer chain includes the leaf).
        private func peerChain() -> [[UInt8]] {
            (0..<max(0, cr_SSL_peer_chain_count(ssl))).compactMap { index -> [UInt8]? in
                let length = cr_SSL_peer_chain_der(ssl, index, nil)
                guard length > 0 else { return nil }
                var der = [UInt8](repeating: 0, count: Int(length))
                let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
                    var cursor = buffer.baseAddress
                    return cr_SSL_peer_chain_der(ssl, index, &cursor)
                }
                return written == length ? der : nil
            }
        }

        /// A `.certificate` error with the verify result when certificate checking failed, else a `.tls` error
        /// with OpenSSL's first queued error. These strings never include certificate contents.
        static func error(_ step: String, ssl: OpaquePointer? = nil) -> WebSocketError {
            var detail = step
            if let ssl {
                let verify = cr_SSL_get_verify_result(ssl)
                if verify != X509_V_OK, let text = cr_X509_verify_cert_error_string(verify) {
                    detail += ": certificate verify failed: " + String(cString: text)
                    cr_ERR_clear_error()
                    return WebSocketError(.certificate, detail: detail)
                }
            }
            let code = cr_ERR_get_error()
            if code != 0 {
                var buffer = [CChar](repeating: 0, count: 256)
                cr_ERR_error_string_n(code, &buffer, buffer.count)
                detail +=
                    ": "
                    + String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            cr_ERR_clear_error()
            return WebSocketError(.tls, detail: detail)
        }
    }

    /// A configured OpenSSL client context (`SSL_CTX`), shared by every connection that trusts the same CA
    /// file: the system trust store is read once per process, not once per attempt.
    ///
    /// `@unchecked Sendable`: the context is configured once, in `init`, before it is published; after
    /// that OpenSSL only reads it, and `SSL_new` and certificate verification take OpenSSL's own locks.
    final class TLSClientContext: @unchecked Sendable {
        let pointer: OpaquePointer

        /// The contexts made so far, by CA file (`nil`: the system store only). A failed setup is not kept,
        /// so a CA file that appears later is picked up on the next attempt.
        private static let contexts = Locked<[String?: TLSClientContext]>([:])

        /// OpenSSL's initialization, once per process, before any other OpenSSL call of ours.
        ///
        /// `OPENSSL_INIT_NO_ATEXIT`: by default OpenSSL registers an `atexit` handler that frees its global
        /// state (providers, algorithm tables, error strings). A process that exits while a connection
        /// thread is inside OpenSSL (creating a context, in a handshake) then crashes in that thread with
        /// SIGSEGV or SIGBUS. Without the handler the state lives until the process is gone, which is all
        /// it needs. (If another library in the process initialized OpenSSL first, its choice stands.)
        ///
        /// OpenSSL itself is loaded here, on the first wss:// attempt (see CCableReactiveOpenSSL): a program
        /// that never needs TLS never maps it. Without it, no attempt can succeed, so the error is permanent.
        private static let initialized = prepare(
            load: { cr_openssl_load() == 1 },
            loadError: { cr_openssl_load_error().map { String(cString: $0) } },
            initialize: { cr_OPENSSL_init_ssl(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1 })

        /// Loads, then initializes: a library that cannot be loaded is `.tlsUnavailable` (permanent: the client
        /// stops), an initialization that fails is a `.tls` error.
        static func prepare(
            load: () -> Bool, loadError: () -> String?, initialize: () -> Bool
        ) -> Result<Void, WebSocketError> {
            guard load() else {
                return .failure(
                    WebSocketError(.tlsUnavailable, detail: "cannot load OpenSSL: " + (loadError() ?? "unknown")))
            }
            guard initialize() else { return .failure(TLSSession.error("OPENSSL_init_ssl")) }
            return .success(())
        }

        /// The context for `caFile`, made on first use.
        static func shared(caFile: String?) throws(WebSocketError) -> TLSClientContext {
            try initialized.get()
            let made = contexts.withLock { contexts -> Result<TLSClientContext, WebSocketError> in
                if let context = contexts[caFile] { return .success(context) }
                do throws(WebSocketError) {
                    let context = try TLSClientContext(caFile: caFile)
                    contexts[caFile] = context
                    return .success(context)
                } catch {
                    return .failure(error)
                }
            }
            return try made.get()
        }

        /// Peer verification against the system store (plus `caFile`), TLS 1.2 at least, no compression.
        private init(caFile: String?) throws(WebSocketError) {
            cr_ERR_clear_error()
            guard let context = cr_SSL_CTX_new(cr_TLS_client_method()) else { throw TLSSession.error("SSL_CTX_new") }
            _ = cr_SSL_CTX_set_options(
                context, cr_SSL_OP_IGNORE_UNEXPECTED_EOF() | cr_SSL_OP_NO_COMPRESSION())
            _ = cr_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
            cr_SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            guard cr_SSL_CTX_set_default_verify_paths(context) == 1 else {
                cr_SSL_CTX_free(context)
                throw TLSSession.error("default verify paths")
            }
            if let caFile, cr_SSL_CTX_load_verify_locations(context, caFile, nil) != 1 {
                cr_SSL_CTX_free(context)
                cr_ERR_clear_error()
                throw WebSocketError(.certificate, detail: "cannot load the CA file")  // retrying cannot help
            }
            pointer = context
        }

        deinit { cr_SSL_CTX_free(pointer) }
    }
#endif
