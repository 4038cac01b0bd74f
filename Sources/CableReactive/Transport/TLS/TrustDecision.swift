/// The last word on a server's certificate chain, shared by both transports: `SocketTransport` asks after
/// OpenSSL verified the chain, `URLSessionTransport`'s session delegate after the Security framework did.
package enum TrustDecision {
    /// Why the chain is refused, or `nil` when it is accepted: it must have verified (against the system's
    /// trust store and any extra CA, for the host name), and when `pins` is not empty, some certificate in it
    /// (DER, the server's own first) must have a pinned public key.
    package static func refusal(verified: Bool, chain: [[UInt8]], pins: Set<CertificatePin>) -> String? {
        guard verified else { return "certificate not trusted" }
        guard CertificatePin.matches(pins, chain: chain) else { return "no certificate matches a pin" }
        return nil
    }
}
