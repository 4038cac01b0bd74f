/// Writes client frames (RFC 6455 §5.2): always masked, with 7-, 16- or 64-bit lengths.
///
/// The masking key comes from the caller's random number generator, so tests can inject a
/// deterministic one and assert exact bytes.
///
/// ```swift
/// var rng = SystemRandomNumberGenerator()
/// var out: [UInt8] = []
/// FrameEncoder.encode(opcode: .text, payload: Array("hi".utf8), using: &rng, into: &out)
/// ```
package enum FrameEncoder {
    /// Appends one masked frame to `output`, drawing a fresh 4-byte masking key from `generator`.
    package static func encode(
        opcode: FrameOpcode,
        payload: [UInt8],
        fin: Bool = true,
        rsv1: Bool = false,
        using generator: inout some RandomNumberGenerator,
        into output: inout [UInt8]
    ) {
        let key = UInt32.random(in: .min ... .max, using: &generator)
        encode(opcode: opcode, payload: payload, fin: fin, rsv1: rsv1, maskingKey: key, into: &output)
    }

    /// Appends one frame masked with `maskingKey` (its bytes in big-endian order) to `output`.
    package static func encode(
        opcode: FrameOpcode,
        payload: [UInt8],
        fin: Bool = true,
        rsv1: Bool = false,
        maskingKey: UInt32,
        into output: inout [UInt8]
    ) {
        var first = opcode.rawValue
        if fin { first |= 0x80 }
        if rsv1 { first |= 0x40 }
        // Room for the frame without defeating the array's doubling: reserving exactly `count + frame` on an
        // `output` that collects many frames (a thousand `subscribe` commands queued in one turn) reallocated
        // it for every frame, copying all the earlier ones each time.
        let needed = output.count + payload.count + 14
        if needed > output.capacity { output.reserveCapacity(max(needed, 2 * output.capacity)) }
        output.append(first)
        let count = payload.count
        if count <= 125 {
            output.append(0x80 | UInt8(count))
        } else if count <= 0xFFFF {
            output.append(0x80 | 126)
            output.append(UInt8(truncatingIfNeeded: count >> 8))
            output.append(UInt8(truncatingIfNeeded: count))
        } else {
            output.append(0x80 | 127)
            let length = UInt64(count)
            for shift in stride(from: 56, through: 0, by: -8) {
                output.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
            }
        }
        // The key as it goes on the wire (its bytes in big-endian order), masked four bytes at a time, and
        // without an array (an allocation for every frame sent).
        let mask = maskingKey.bigEndian
        withUnsafeBytes(of: mask) { output.append(contentsOf: $0) }
        let start = output.count
        output.append(contentsOf: payload)
        output.withUnsafeMutableBytes { frame in
            var index = 0
            while count - index >= 4 {
                let word = frame.loadUnaligned(fromByteOffset: start + index, as: UInt32.self)
                frame.storeBytes(of: word ^ mask, toByteOffset: start + index, as: UInt32.self)
                index += 4
            }
            withUnsafeBytes(of: mask) { key in
                while index < count {
                    frame[start + index] ^= key[index & 3]
                    index += 1
                }
            }
        }
    }
}
