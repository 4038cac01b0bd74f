/// Strict UTF-8 checking for text messages and close reasons (RFC 3629, Unicode table 3-7).
///
/// `String(decoding:as:)` repairs bad input with U+FFFD; RFC 6455 §8.1 instead requires us to fail
/// the connection (close code 1007), so bytes are checked first and only then turned into a `String`.
package enum UTF8Validation {
    /// Returns `bytes` as a `String` when they are well-formed UTF-8.
    ///
    /// - Throws: ``FrameError/invalidUTF8`` otherwise.
    package static func decode(_ bytes: ArraySlice<UInt8>) throws(FrameError) -> String {
        guard isValid(bytes) else { throw .invalidUTF8 }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Returns `bytes` as a `String` when they are well-formed UTF-8.
    package static func decode(_ bytes: [UInt8]) throws(FrameError) -> String {
        try decode(bytes[...])
    }

    /// Whether `bytes` are well-formed UTF-8.
    package static func isValid(_ bytes: [UInt8]) -> Bool {
        isValid(bytes[...])
    }

    /// Whether `bytes` are well-formed UTF-8: shortest forms only, no surrogates, nothing above U+10FFFF.
    package static func isValid(_ bytes: ArraySlice<UInt8>) -> Bool {
        bytes.withUnsafeBufferPointer { isValid($0) }
    }

    /// Whether the bytes at `buffer` are well-formed UTF-8; see ``isValid(_:)-(ArraySlice<UInt8>)``.
    package static func isValid(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = buffer.count
        var index = 0
        while index < count {
            // ASCII fast path: 32, then 8 bytes at a time while no high bit is set.
            let base = UnsafeRawPointer(buffer.baseAddress.unsafelyUnwrapped)
            while index + 32 <= count {
                let words =
                    base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                    | base.loadUnaligned(fromByteOffset: index + 8, as: UInt64.self)
                    | base.loadUnaligned(fromByteOffset: index + 16, as: UInt64.self)
                    | base.loadUnaligned(fromByteOffset: index + 24, as: UInt64.self)
                if words & 0x8080_8080_8080_8080 != 0 { break }
                index += 32
            }
            while index + 8 <= count {
                let word = base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if word & 0x8080_8080_8080_8080 != 0 { break }
                index += 8
            }
            guard index < count else { return true }
            let lead = buffer[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            // The allowed range of the second byte depends on the lead byte; the rest are 80...BF.
            let length: Int
            var second: ClosedRange<UInt8> = 0x80...0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0:
                length = 3
                second = 0xA0...0xBF
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED:
                length = 3
                second = 0x80...0x9F
            case 0xF0:
                length = 4
                second = 0x90...0xBF
            case 0xF1...0xF3: length = 4
            case 0xF4:
                length = 4
                second = 0x80...0x8F
            default: return false
            }
            guard count - index >= length, second.contains(buffer[index + 1]) else { return false }
            var offset = 2
            while offset < length {
                guard (0x80...0xBF).contains(buffer[index + offset]) else { return false }
                offset += 1
            }
            index += length
        }
        return true
    }
}
