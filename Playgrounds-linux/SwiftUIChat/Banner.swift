// The README's banner: why the connection was lost, while it is. Used by the SwiftUI view model.

import CableReactive
import Signals

/// Why the connection was lost.
func lastDisconnectExample(client: ActionCableClient, show: @escaping @Sendable (String?) -> Void) -> SignalObservation
{
    // snippet:start last-disconnect
    // lastDisconnect is history: a healthy reconnect keeps it. Show it only while not connected.
    let banner = combineLatest(client.state, client.lastDisconnect).map(bannerText).observe(on: .main) { text in
        show(text)  // nil: hide the banner
    }
    // snippet:end
    return banner
}

// snippet:start banner-text
/// The reconnect banner's text: nothing while connected, else why the last session or attempt ended.
func bannerText(_ state: CableState, _ last: CableDisconnect?) -> String? {
    guard !state.isConnected, let last else { return nil }
    switch last.kind {
    case .failed where last.httpStatus.map { (400..<500).contains($0) } == true:
        return "The server refused the app (HTTP \(last.httpStatus ?? 0))"
    case .serverDisconnect where last.serverReason == "server_restart": return "Server restarting"
    default: return last.wasConnected ? "Connection lost; reconnecting" : "Can't reach the server; retrying"
    }
}
// snippet:end
