import CableReactive
import Testing

/// How a test feeds bytes to a parser (STYLE habit 11).
enum Feeding: Sendable, CustomTestStringConvertible {
    /// Every byte in its own buffer.
    case byteByByte
    /// Everything in one buffer.
    case allAtOnce
    /// Buffers of this many bytes.
    case chunks(Int)

    static let all: [Feeding] = [.byteByByte, .allAtOnce, .chunks(2), .chunks(3), .chunks(7), .chunks(64)]

    var testDescription: String {
        switch self {
        case .byteByByte: "byte by byte"
        case .allAtOnce: "all at once"
        case .chunks(let size): "chunks of \(size)"
        }
    }

    func split(_ bytes: [UInt8]) -> [[UInt8]] {
        let size: Int
        switch self {
        case .byteByByte: size = 1
        case .allAtOnce: return [bytes]
        case .chunks(let chunk): size = chunk
        }
        return stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
    }
}

/// The frames a fresh parser produces from `bytes` fed as `feeding` says, and the error that stopped
/// it, if any. Checks for over-production: after the last byte the parser must have nothing more,
/// and every byte of each buffer must be consumed unless an error stopped it.
func parseFrames(
    _ bytes: [UInt8],
    feeding: Feeding,
    maxFrameSize: Int = 1 << 20,
    allowsCompression: Bool = false,
    role: FrameParser.Role = .client
) -> (frames: [Frame], error: FrameError?) {
    var parser = FrameParser(maxFrameSize: maxFrameSize, allowsCompression: allowsCompression, role: role)
    var frames: [Frame] = []
    for chunk in feeding.split(bytes) {
        var input = chunk[...]
        do {
            while let frame = try parser.parse(&input) { frames.append(frame) }
            precondition(input.isEmpty, "parser returned nil with input left")
        } catch {
            return (frames, error)
        }
    }
    var empty = ArraySlice<UInt8>()
    do {
        if let extra = try parser.parse(&empty) { frames.append(extra) }
    } catch {
        return (frames, error)
    }
    return (frames, nil)
}

/// A generator that always returns `value`: masking keys become predictable, so tests can assert
/// the exact bytes a client sends.
struct FixedGenerator: RandomNumberGenerator {
    var value: UInt64
    mutating func next() -> UInt64 { value }
}

/// Masks `payload` with the 4-byte key, as RFC 6455 §5.3 describes (a second, independent
/// implementation to check the encoder against).
func mask(_ payload: [UInt8], key: [UInt8]) -> [UInt8] {
    payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
}
