/// A JSON document as one flat array of entries in document order: what ``JSONValueDecoder`` reads.
///
/// A typed message is decoded from the bytes the server sent, not from a ``JSONValue``: the parser writes this
/// tape (one array, grown in place) instead of a tree of dictionaries, arrays and strings, and a string without
/// escapes stays a range of the bytes until a type reads it; a key is compared with the type's coding keys
/// byte for byte and never becomes a `String`. A container's entry holds the index just past its last entry,
/// so skipping it costs nothing. A ``JSONValue`` (``JSONValue/decode(_:decoder:)``, or a message an untyped
/// consumer asked for) is written to a tape the same way, with its strings held whole, so that one decoder
/// serves both.
///
/// Indexes and counts are `Int32` (an entry takes 16 bytes): a document of 2³¹ entries or bytes is refused
/// (``tooLarge``), far beyond the transport's message limit.
struct JSONTape: Sendable {
    /// One value, or the start of a container.
    enum Entry: Sendable {
        case null
        case bool(Bool)
        /// A number as ``JSONValue/int(_:)`` holds it.
        case int(Int)
        /// A number as ``JSONValue/double(_:)`` holds it.
        case double(Double)
        /// A string without escapes: its UTF-8, `start..<end` in ``bytes``.
        case text(start: Int32, end: Int32)
        /// A string held whole: `strings[index]`.
        case string(index: Int32)
        /// An array of `count` elements, which follow; `end` is the index of the entry after the last.
        case array(count: Int32, end: Int32)
        /// An object of `count` members, which follow, each a key (`text` or `string`) and then its value;
        /// `end` is the index of the entry after the last.
        case object(count: Int32, end: Int32)
    }

    /// The document's entries; the root is the first.
    private(set) var entries: [Entry] = []
    /// The strings that are not ranges of ``bytes``.
    private(set) var strings: [String] = []
    /// The text the tape was read from (empty for a tape written from a ``JSONValue``).
    let bytes: [UInt8]

    /// The largest document a tape holds, in entries and in bytes.
    static let limit = Int(Int32.max)

    /// Thrown for a document larger than ``limit``.
    static var tooLarge: DecodingError {
        DecodingError.dataCorrupted(
            DecodingError.Context(codingPath: [], debugDescription: "The JSON document is too large to decode."))
    }

    /// The tape of the JSON text `bytes`, which must be valid UTF-8 (a message the frame parser has read).
    ///
    /// - Throws: ``JSONParseError`` for text that is not one JSON value; ``tooLarge``.
    init(parsing bytes: [UInt8]) throws {
        guard bytes.count < Self.limit else { throw Self.tooLarge }
        self.bytes = bytes
        entries.reserveCapacity(bytes.count / 8 + 1)
        try bytes.withUnsafeBufferPointer { buffer throws(JSONParseError) in
            var parser = JSONParser(bytes: buffer, validatesUTF8: false)
            try parser.parseDocument(into: &self)
        }
    }

    /// The tape of `value`.
    ///
    /// - Throws: ``tooLarge``.
    init(_ value: JSONValue) throws {
        bytes = []
        try write(value)
    }

    /// A tape of one `null`: what a decoder for a value that is not there reads (`superDecoder(forKey:)` of a
    /// missing key, as Foundation's).
    static let null = JSONTape(entries: [.null])

    private init(entries: [Entry]) {
        bytes = []
        self.entries = entries
    }

    private mutating func write(_ value: JSONValue) throws {
        guard entries.count < Self.limit - 1 else { throw Self.tooLarge }  // so indexes and counts fit
        switch value {
        case .null: append(.null)
        case .bool(let flag): append(.bool(flag))
        case .int(let number): append(.int(number))
        case .double(let number): append(.double(number))
        case .string(let string): try write(string)
        case .array(let elements):
            let start = startContainer()
            for element in elements { try write(element) }
            endContainer(at: start, count: elements.count, object: false)
        case .object(let members):
            let start = startContainer()
            for (key, member) in members {
                try write(key)
                try write(member)
            }
            endContainer(at: start, count: members.count, object: true)
        }
    }

    private mutating func write(_ string: String) throws {
        guard entries.count < Self.limit - 1 else { throw Self.tooLarge }
        strings.append(string)
        append(.string(index: Int32(truncatingIfNeeded: strings.count - 1)))
    }

    // MARK: Writing (the parser's side)

    // A text of fewer than `limit` bytes makes fewer than `limit` entries (each takes one byte or more), so the
    // parser's writes need no checks.

    /// Appends a scalar entry.
    @inline(__always)
    mutating func append(_ entry: Entry) {
        entries.append(entry)
    }

    /// Appends a string the parser read: its range of ``bytes``, or its decoded text.
    @inline(__always)
    mutating func append(_ scanned: ScannedString) {
        switch scanned {
        case .plain(let range):
            entries.append(
                .text(
                    start: Int32(truncatingIfNeeded: range.lowerBound), end: Int32(truncatingIfNeeded: range.upperBound)
                ))
        case .escaped(let text):
            strings.append(text)
            entries.append(.string(index: Int32(truncatingIfNeeded: strings.count - 1)))
        }
    }

    /// Appends a container's entry, to be completed by ``endContainer(at:count:object:)``; returns its index.
    @inline(__always)
    mutating func startContainer() -> Int {
        entries.append(.null)
        return entries.count - 1
    }

    /// Completes the container started at `start`, with `count` elements or members.
    @inline(__always)
    mutating func endContainer(at start: Int, count: Int, object: Bool) {
        let end = Int32(truncatingIfNeeded: entries.count)
        let count = Int32(truncatingIfNeeded: count)  // at most one per entry
        entries[start] = object ? .object(count: count, end: end) : .array(count: count, end: end)
    }

    // MARK: Reading (the decoder's side)

    /// The entry at `index`.
    @inline(__always)
    subscript(index: Int) -> Entry { entries[index] }

    /// The index of the entry after the value at `index` (after all of a container's entries).
    @inline(__always)
    func end(of index: Int) -> Int {
        switch entries[index] {
        case .array(_, let end), .object(_, let end): Int(end)
        default: index + 1
        }
    }

    /// The string at `index`; nil when the entry is not a string.
    func string(at index: Int) -> String? {
        switch entries[index] {
        case .text(let start, let end):
            bytes.withUnsafeBufferPointer { buffer in
                String(decoding: UnsafeBufferPointer(rebasing: buffer[Int(start)..<Int(end)]), as: UTF8.self)
            }
        case .string(let string): strings[Int(string)]
        default: nil
        }
    }

    /// Whether the string at `index` is `utf8`, compared byte for byte (keys are compared as JSON compares
    /// them: after unescaping, which a `text` entry needs none of).
    func string(at index: Int, equals utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        switch entries[index] {
        case .text(let start, let end):
            guard Int(end - start) == utf8.count else { return false }
            return bytes.withUnsafeBufferPointer { buffer in
                UnsafeBufferPointer(rebasing: buffer[Int(start)..<Int(end)]).elementsEqual(utf8)
            }
        case .string(let string):
            var string = strings[Int(string)]
            return string.withUTF8 { $0.elementsEqual(utf8) }
        default:
            return false
        }
    }
}
