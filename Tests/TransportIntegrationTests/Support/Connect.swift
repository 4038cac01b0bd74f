#if os(Linux)
    import CableReactive
    import Foundation

    /// Opens a connection to `url` and returns it with its recorder.
    func connect(
        _ url: String,
        protocols: [String] = [],
        headers: [String: String] = [:],
        options: SocketTransport.Options = SocketTransport.Options()
    ) -> (any WebSocketConnection, EventRecorder) {
        var request = CableRequest(url: URL(string: url) ?? URL(fileURLWithPath: "/"))
        for (name, value) in headers { request.setHeader(name, value) }
        let recorder = EventRecorder()
        let connection = SocketTransport(options: options).connect(
            request: request, protocols: protocols, handler: recorder.handler)
        return (connection, recorder)
    }

    /// Options that trust the suite's test CA.
    func tlsOptions() throws -> SocketTransport.Options {
        var options = SocketTransport.Options()
        options.tlsCAFilePath = try Certificates.shared.get().caFile
        return options
    }

    /// The kind of a failed close, or nil.
    extension WebSocketCloseInfo {
        var failureKind: WebSocketError.Kind? {
            if case .failed(let error) = self { return error.kind }
            return nil
        }
    }
#endif

#if os(Linux)
    import Foundation

    /// Runs blocking work (waits on sockets or child processes) on a thread of its own, so a long wait does not
    /// hold one of the few cooperative threads that every other suite's tasks run on.
    func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
#endif
