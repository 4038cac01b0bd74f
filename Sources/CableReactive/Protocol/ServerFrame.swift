/// One server → client Action Cable frame, as ``CableProtocol/decode(_:)`` classifies it.
package enum ServerFrame: Equatable, Sendable {
    /// `{"type":"welcome"}`: the connection is usable; (re)subscribe now. Extra keys (`sid`, …) are ignored.
    case welcome
    /// `{"type":"ping","message":<ts>}`: liveness only; the timestamp is ignored.
    case ping
    /// `{"type":"confirm_subscription","identifier":"…"}`.
    case confirm(identifier: String)
    /// `{"type":"reject_subscription","identifier":"…"}`.
    case reject(identifier: String)
    /// `{"type":"disconnect",…}`: `reason` when it is a string; `reconnect` when it is a Boolean
    /// (`nil` when missing or of another type, e.g. `"true"`: the caller picks the default).
    case disconnect(reason: String?, reconnect: Bool?)
    /// A data frame: a string `identifier` plus a `message` member holding any JSON value (incl. `null`).
    case message(identifier: String, message: JSONValue)
    /// A JSON object that is none of the above (an unknown `type`, `{}`, an identifier without `message`,
    /// AnyCable's `confirm_history`, …). Log and ignore.
    case unknown
}
