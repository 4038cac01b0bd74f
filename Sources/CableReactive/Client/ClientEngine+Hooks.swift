/// The app's hooks, each run in a `Task` the engine keeps (one at a time) and cancels when the attempt it
/// serves ends. A hook answers with an input carrying its attempt id, so a late answer is ignored.
extension ClientEngine {
    /// Makes `task` the running hook (or none), cancelling the one it replaces.
    func startHook(_ task: Task<Void, Never>?) {
        resources.withLock { resources in
            defer { resources.hook = task }
            return resources.hook
        }?.cancel()
    }

    func requestHook(id: UInt64, request: CableRequest) -> Task<Void, Never>? {
        guard let onRequest else { return nil }
        return Task { [weak self, log] in
            var edited = request
            do {
                try await onRequest(&edited)
            } catch {
                self?.handle(.machine(.requestFailed(id: id)))
                return
            }
            let invalid = edited.invalidHeaderNames.count
            guard invalid == 0 else {
                // A header that cannot be sent fails the attempt: connecting without it would look like
                // the server refusing valid credentials. Neither names nor values are logged.
                log.emit(LogEvent(level: .warn, name: "request_invalid_headers", fields: [.count(invalid)]))
                self?.handle(.machine(.requestFailed(id: id)))
                return
            }
            self?.handle(.requestPrepared(id: id, edited))
        }
    }

    func unauthorizedHook(id: UInt64) -> Task<Void, Never>? {
        guard let onUnauthorized else { return nil }
        return Task { [weak self] in
            let refreshed: Bool?
            do {
                refreshed = try await onUnauthorized()
            } catch {
                refreshed = nil
            }
            self?.handle(.machine(.unauthorizedAnswered(id: id, refreshed: refreshed)))
        }
    }
}
