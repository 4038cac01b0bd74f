/// One server → client frame as ``CableProtocol/decodeFrame(validatedUTF8:keepingText:)`` reads it in its one pass: a data
/// frame with its identifier still as the server wrote it, or any other frame, classified.
package enum InboundFrame: Equatable, Sendable {
    /// A data frame (``ServerFrame/message(identifier:message:position:)`` by the rules of
    /// ``CableProtocol/decode(_:)``). `identifier` is the byte range of the identifier's string token in the
    /// decoded bytes: between its quotes, escapes as the server wrote them. Only where the token ends is checked,
    /// so a route table can compare it, unread, with the tokens our writer made (which are valid); any other
    /// reader goes through ``CableProtocol/identifier(token:in:)``, and a token that this rejects makes the frame
    /// malformed (`nil` by the rules).
    /// `message` is parsed, or its checked text when the decoder was asked to keep it (see
    /// ``CableProtocol/decodeFrame(validatedUTF8:keepingText:)``).
    case message(identifier: Range<Int>, message: MessageJSON, position: StreamPosition?)
    /// Any other frame.
    case control(ControlFrame)
}

/// A server frame that is not a data frame: ``ServerFrame`` without its `message` case. The cases mean what
/// ``ServerFrame``'s cases of the same names mean.
package enum ControlFrame: Equatable, Sendable {
    /// ``ServerFrame/welcome(sessionID:restored:)``.
    case welcome(sessionID: String?, restored: ServerFrame.Restored?)
    /// ``ServerFrame/ping``.
    case ping
    /// ``ServerFrame/pong``.
    case pong
    /// ``ServerFrame/confirm(identifier:)``.
    case confirm(identifier: String)
    /// ``ServerFrame/reject(identifier:)``.
    case reject(identifier: String)
    /// ``ServerFrame/disconnect(reason:reconnect:)``.
    case disconnect(reason: String?, reconnect: Bool?)
    /// ``ServerFrame/historyConfirmed(identifier:)``.
    case historyConfirmed(identifier: String)
    /// ``ServerFrame/historyRejected(identifier:)``.
    case historyRejected(identifier: String)
    /// ``ServerFrame/presence(identifier:update:)``.
    case presence(identifier: String, update: PresenceUpdate)
    /// ``ServerFrame/unknown``.
    case unknown
}

extension ServerFrame {
    /// The same frame.
    package init(_ control: ControlFrame) {
        switch control {
        case .welcome(let sessionID, let restored): self = .welcome(sessionID: sessionID, restored: restored)
        case .ping: self = .ping
        case .pong: self = .pong
        case .confirm(let identifier): self = .confirm(identifier: identifier)
        case .reject(let identifier): self = .reject(identifier: identifier)
        case .disconnect(let reason, let reconnect): self = .disconnect(reason: reason, reconnect: reconnect)
        case .historyConfirmed(let identifier): self = .historyConfirmed(identifier: identifier)
        case .historyRejected(let identifier): self = .historyRejected(identifier: identifier)
        case .presence(let identifier, let update): self = .presence(identifier: identifier, update: update)
        case .unknown: self = .unknown
        }
    }

    /// `frame`, decoded from the validated UTF-8 `bytes`, with a data frame's identifier read from its token
    /// there. `nil` when that token is not a valid JSON string: the frame is then malformed.
    package init?(_ frame: InboundFrame, in bytes: UnsafeBufferPointer<UInt8>) {
        self.init(frame, in: bytes, validatesUTF8: false)
    }

    /// As ``init(_:in:)``, checking the UTF-8 of the identifier token when `validatesUTF8` is set.
    init?(_ frame: InboundFrame, in bytes: UnsafeBufferPointer<UInt8>, validatesUTF8: Bool) {
        switch frame {
        case .control(let control):
            self.init(control)
        case .message(let token, let message, let position):
            guard let identifier = CableProtocol.identifier(token: token, in: bytes, validatesUTF8: validatesUTF8),
                let message = message.value
            else { return nil }
            self = .message(identifier: identifier, message: message, position: position)
        }
    }
}
