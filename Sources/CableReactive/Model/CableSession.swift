/// One live session of an ``ActionCableClient``, from ``ActionCableClient/session``: what the server's
/// handshake and welcome said.
///
/// ```swift
/// if let session = client.session.value, session.wireProtocol == .anyCableExtended {
///     print(session.restored ? "AnyCable restored the session" : "a fresh session")
/// }
/// ```
public struct CableSession: Sendable, Hashable, CustomStringConvertible {
    /// The protocol the session speaks: ``CableWireProtocol/anyCableExtended`` when the client offered it and
    /// the server chose it, else ``CableWireProtocol/actionCable`` (also when the server named none, as Rails
    /// does for an offer it does not know).
    public let wireProtocol: CableWireProtocol
    /// AnyCable's session id (the welcome's `sid`), `nil` from servers that send none (Rails). It is what
    /// AnyCable's `exclude_socket` broadcast option names, so an app may pass it to its backend to leave its
    /// own connection out of a broadcast. It is also a credential: on the extended protocol, whoever presents
    /// it within the server's session TTL gets this session restored. Never log it; ``description`` leaves it
    /// out.
    public let sessionID: String?
    /// Whether AnyCable restored the previous session (`"restored":true`, extended protocol only): the
    /// subscriptions it listed were not subscribed again.
    public let restored: Bool

    /// A session; for tests and previews.
    public init(wireProtocol: CableWireProtocol, sessionID: String? = nil, restored: Bool = false) {
        self.wireProtocol = wireProtocol
        self.sessionID = sessionID
        self.restored = restored
    }

    /// The protocol and whether the session was restored; never the session id.
    public var description: String {
        "CableSession(\(wireProtocol), restored: \(restored), sessionID: \(sessionID == nil ? "none" : "redacted"))"
    }
}

extension CableSession: CustomReflectable {
    /// Everything but the session id, which only shows as present or not.
    public var customMirror: Mirror {
        Mirror(
            self, children: ["wireProtocol": wireProtocol, "restored": restored, "hasSessionID": sessionID != nil],
            displayStyle: .struct)
    }
}
