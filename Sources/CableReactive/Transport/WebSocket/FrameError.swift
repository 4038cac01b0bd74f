/// A violation found while decoding frames or messages. Each maps to the close code we send back.
///
/// A closed enum, because it never leaves the package: ``closeCode`` switches over every case, so a new
/// violation cannot go without a close code, and the public `WebSocketError` carries only that code.
package enum FrameError: Error, Equatable, Sendable {
    /// The peer broke RFC 6455 framing rules (close code 1002).
    case protocolError(ProtocolViolation)
    /// A frame or message exceeded its configured limit (close code 1009).
    case messageTooBig
    /// A text message or close reason was not valid UTF-8 (close code 1007).
    case invalidUTF8
    /// A data type we do not accept: binary messages (close code 1003).
    case unsupportedData

    /// The close code (RFC 6455 §7.4.1) that answers this error.
    package var closeCode: UInt16 {
        switch self {
        case .protocolError: 1002
        case .messageTooBig: 1009
        case .invalidUTF8: 1007
        case .unsupportedData: 1003
        }
    }
}

/// The specific framing rule that a peer broke.
package enum ProtocolViolation: Equatable, Sendable {
    case reservedBitsSet
    case unknownOpcode(UInt8)
    case fragmentedControlFrame
    case controlFrameTooLong
    case maskedServerFrame
    /// A client sent an unmasked frame (RFC 6455 §5.1); only a server-role parser reports it.
    case unmaskedClientFrame
    case lengthOverflow
    case unexpectedContinuation
    case expectedContinuation
    case invalidClosePayload
    case invalidCloseCode(UInt16)
    case invalidCompressedData
}
