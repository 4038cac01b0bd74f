#if os(Linux) && canImport(CCableReactiveOpenSSL)
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// Detached POSIX threads for connection I/O. Foundation's `Thread` would bring all of Foundation
    /// (it is not in FoundationEssentials) for one call. The threads are unnamed: glibc declares
    /// `pthread_setname_np` only under `_GNU_SOURCE`, which Swift's Glibc module does not set.
    package enum IOThread {
        /// The closure a new thread runs, passed through `pthread_create`'s one pointer.
        private final class Body {
            let run: @Sendable () -> Void
            init(_ run: @escaping @Sendable () -> Void) { self.run = run }
        }

        /// Runs `body` on a new detached thread.
        ///
        /// - Returns: 0, or the `errno` of `pthread_create` (`EAGAIN` when the process may not start
        ///   another thread); then `body` never runs.
        package static func start(_ body: @escaping @Sendable () -> Void) -> Int32 {
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            defer { pthread_attr_destroy(&attributes) }
            pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
            let context = Unmanaged.passRetained(Body(body)).toOpaque()
            var thread = pthread_t()
            let result = pthread_create(
                &thread, &attributes,
                { raw in
                    guard let raw else { return nil }
                    let body = Unmanaged<Body>.fromOpaque(raw).takeRetainedValue()
                    body.run()
                    return nil
                }, context)
            if result != 0 { Unmanaged<Body>.fromOpaque(context).release() }
            return result
        }
    }
#endif
