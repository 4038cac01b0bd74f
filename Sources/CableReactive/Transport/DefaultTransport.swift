/// The platform's default transport. TEMPORARY until the transport branch lands.
func defaultTransport() -> any WebSocketTransport {
    fatalError("no default transport yet")
}
