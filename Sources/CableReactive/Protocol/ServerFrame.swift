/// One server → client Action Cable frame, as ``CableProtocol/decode(_:)`` classifies it.
package enum ServerFrame: Equatable, Sendable {
    /// `{"type":"welcome"}`: the connection is usable; (re)subscribe now. `sessionID` is AnyCable's `sid` (a
    /// string, else `nil`); `restored` is set when the welcome says `"restored":true` (AnyCable's extended
    /// protocol restored the session), with the `restored_ids` strings, or `nil` when that list is missing
    /// or not an array (then every subscription of the previous session counts as restored, as the AnyCable
    /// JS client takes it).
    case welcome(sessionID: String?, restored: Restored?)
    /// `{"type":"ping","message":<ts>}`: liveness only; the timestamp is ignored.
    case ping
    /// AnyCable's `{"type":"pong"}`: the answer to a client's `{"command":"ping"}`.
    case pong
    /// `{"type":"confirm_subscription","identifier":"…"}`.
    case confirm(identifier: String)
    /// `{"type":"reject_subscription","identifier":"…"}`.
    case reject(identifier: String)
    /// `{"type":"disconnect",…}`: `reason` when it is a string; `reconnect` when it is a Boolean
    /// (`nil` when missing or of another type, e.g. `"true"`: the caller picks the default).
    case disconnect(reason: String?, reconnect: Bool?)
    /// A data frame: a string `identifier` plus a `message` member holding any JSON value (incl. `null`).
    /// `position` is AnyCable's stream position (`stream_id`, `epoch`, `offset`) when the frame carries all
    /// three with the right types, else `nil`.
    case message(identifier: String, message: JSONValue, position: StreamPosition? = nil)
    /// AnyCable's `{"type":"confirm_history","identifier":"…"}`: the history replay for it is complete.
    case historyConfirmed(identifier: String)
    /// AnyCable's `{"type":"reject_history","identifier":"…"}`: the server cannot replay what was missed.
    case historyRejected(identifier: String)
    /// AnyCable's `{"type":"presence","identifier":"…","message":{…}}`: a presence event or the answer to a
    /// `presence` request. Not a data frame: it carries no stream position and never reaches `messages`.
    case presence(identifier: String, update: PresenceUpdate)
    /// A JSON object that is none of the above (an unknown `type`, `{}`, an identifier without `message`, …).
    /// Log and ignore.
    case unknown

    /// What a restoring welcome says was restored.
    package struct Restored: Equatable, Sendable {
        /// The identifiers of the restored subscriptions (`restored_ids`); `nil`: all of them.
        package var identifiers: [String]?

        package init(identifiers: [String]?) {
            self.identifiers = identifiers
        }
    }
}
