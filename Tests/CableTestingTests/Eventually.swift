import Foundation

/// Polls until `condition` holds or `timeout` passes (bounded; no fixed wait): for what a server's thread or an
/// observer does on its own time.
func eventually(timeout: Double = 5, _ condition: () -> Bool) async -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    while !condition() {
        if Date() > deadline { return false }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return true
}
