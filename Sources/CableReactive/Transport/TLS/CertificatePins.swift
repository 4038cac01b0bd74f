#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// A certificate pin: the SHA-256 of a certificate's public key (its DER SubjectPublicKeyInfo, SPKI), in the
/// `sha256/<base64>` form of OkHttp and HTTP Public Key Pinning (RFC 7469).
///
///     let pin = try CertificatePin("sha256/E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhww=")
///     print(pin)
///     // Prints: sha256/E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhww=
///
/// Compute the pin of the certificate a server presents with the `openssl` command-line tool, and put
/// `sha256/` in front of what it prints:
///
///     openssl s_client -connect host:443 </dev/null | openssl x509 -pubkey -noout \
///         | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64
///
/// (For a certificate in a PEM file, start with `openssl x509 -in cert.pem -pubkey -noout`.)
///
/// A pin names a key, not a certificate: a renewed certificate for the same key keeps its pin. A chain
/// matches a set of pins when any of its certificates has a pinned key, so pin a backup key too, or the
/// key of the CA that issues the server's certificates, or a new key locks clients out.
public struct CertificatePin: Sendable, Hashable, CustomStringConvertible {
    /// Why a pin was rejected. The description is log-safe: it never repeats the rejected text.
    ///
    ///     do {
    ///         _ = try CertificatePin("sha1/abc=")
    ///     } catch {
    ///         print(error)
    ///         // Prints: certificate pin: not of the form sha256/<base64>
    ///     }
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What was wrong with the pin.
        package enum Reason: Hashable, Sendable {
            /// The text does not start with `sha256/`.
            case missingPrefix
            /// The part after `sha256/` is not padded standard base64.
            case invalidBase64
            /// The digest has this many bytes instead of 32.
            case wrongLength(Int)
        }

        /// What was wrong with the pin.
        package let reason: Reason

        /// A short, log-safe description of the problem.
        public var description: String {
            switch reason {
            case .missingPrefix: "certificate pin: not of the form sha256/<base64>"
            case .invalidBase64: "certificate pin: the digest is not valid base64"
            case .wrongLength(let count): "certificate pin: the digest has \(count) bytes, a SHA-256 digest has 32"
            }
        }
    }

    /// The 32-byte SHA-256 digest of the DER SubjectPublicKeyInfo.
    package let digest: [UInt8]

    /// Parses a pin of the form `sha256/<base64 of the 32-byte digest>`; whitespace around it is ignored.
    ///
    ///     let pin = try CertificatePin(" sha256/TFw3D/LvWoPsMWcp2SCpqDcihiyo1Vhdz4STPaWYRS8=\n")
    ///
    /// - Throws: ``ParseError`` when the prefix is missing, the base64 is invalid (it must be padded, and
    ///   hold no whitespace), or it does not decode to 32 bytes.
    public init(_ text: String) throws(ParseError) {
        let prefix = Array("sha256/".utf8)
        let bytes = Base64.trimmingWhitespace(Array(text.utf8)[...])
        guard bytes.starts(with: prefix) else { throw ParseError(reason: .missingPrefix) }
        guard let digest = Base64.decode(bytes.dropFirst(prefix.count), ignoringWhitespace: false) else {
            throw ParseError(reason: .invalidBase64)
        }
        try self.init(sha256: digest)
    }

    /// A pin for a SubjectPublicKeyInfo's SHA-256 digest (32 bytes).
    ///
    ///     let pin = try CertificatePin(sha256: digestBytes)
    ///
    /// - Throws: ``ParseError`` when `digest` does not have 32 bytes.
    public init(sha256 digest: [UInt8]) throws(ParseError) {
        guard digest.count == 32 else { throw ParseError(reason: .wrongLength(digest.count)) }
        self.digest = digest
    }

    /// The pin of a DER certificate's public key; nil when no SubjectPublicKeyInfo can be found in `der`.
    package init?(certificate der: [UInt8]) {
        guard let spki = DER.subjectPublicKeyInfo(ofCertificate: der) else { return nil }
        digest = spki.withUnsafeBytes { SHA256.hash($0) }
    }

    /// The pin as text, `sha256/` and the padded base64 of the digest; ``init(_:)`` parses it back.
    public var description: String { "sha256/" + Base64.encode(digest) }

    /// Whether a server's certificate chain (DER certificates, leaf first) passes `pins`: always when `pins`
    /// is empty (no pinning), otherwise when the public key of some certificate in `chain` is pinned. A
    /// certificate whose SubjectPublicKeyInfo cannot be found matches no pin.
    package static func matches(_ pins: Set<CertificatePin>, chain: [[UInt8]]) -> Bool {
        pins.isEmpty || chain.contains { CertificatePin(certificate: $0).map(pins.contains) ?? false }
    }
}

/// Finds the SubjectPublicKeyInfo in an X.509 certificate's DER encoding (RFC 5280 §4.1).
///
/// Only the elements in front of the SubjectPublicKeyInfo are read, and input is not trusted: every
/// length must be definite, with at most ``maximumLengthBytes`` length bytes, every element must lie
/// within its parent, and the certificate must fill the input exactly. Anything else gives nil.
package enum DER {
    /// The most bytes a long-form length may have: 4, so any length below 4 GiB.
    package static let maximumLengthBytes = 4

    /// The complete SubjectPublicKeyInfo element (tag, length and contents) of the DER certificate `der`,
    /// or nil when `der` is not a certificate of this shape:
    ///
    ///     Certificate ::= SEQUENCE {
    ///         tbsCertificate SEQUENCE {
    ///             [0] EXPLICIT version OPTIONAL, serialNumber INTEGER, signature SEQUENCE,
    ///             issuer SEQUENCE, validity SEQUENCE, subject SEQUENCE,
    ///             subjectPublicKeyInfo SEQUENCE { algorithm SEQUENCE, subjectPublicKey BIT STRING },
    ///             ... },
    ///         ... }
    package static func subjectPublicKeyInfo(ofCertificate der: [UInt8]) -> ArraySlice<UInt8>? {
        guard let certificate = element(sequence, in: der, at: 0, end: der.count), certificate.end == der.count,
            let tbs = element(sequence, in: der, at: certificate.contents.lowerBound, end: certificate.end)
        else { return nil }
        var index = tbs.contents.lowerBound
        if index < tbs.end && der[index] == version {
            guard let skipped = element(version, in: der, at: index, end: tbs.end) else { return nil }
            index = skipped.end
        }
        // serialNumber, signature, issuer, validity, subject.
        for tag in [integer, sequence, sequence, sequence, sequence] {
            guard let skipped = element(tag, in: der, at: index, end: tbs.end) else { return nil }
            index = skipped.end
        }
        guard let spki = element(sequence, in: der, at: index, end: tbs.end),
            let algorithm = element(sequence, in: der, at: spki.contents.lowerBound, end: spki.end),
            let key = element(bitString, in: der, at: algorithm.end, end: spki.end), key.end == spki.end
        else { return nil }
        return der[spki.start..<spki.end]
    }

    /// The tag of an INTEGER.
    private static let integer: UInt8 = 0x02
    /// The tag of a BIT STRING.
    private static let bitString: UInt8 = 0x03
    /// The tag of a SEQUENCE (constructed).
    private static let sequence: UInt8 = 0x30
    /// The tag of the TBSCertificate's `[0] EXPLICIT` version (context-specific, constructed).
    private static let version: UInt8 = 0xA0

    /// Where one element lies in the input.
    private struct Element {
        /// The index of its tag.
        let start: Int
        /// The indices of its contents.
        let contents: Range<Int>
        /// The index just past it.
        var end: Int { contents.upperBound }
    }

    /// The element with tag `tag` at `index`, if there is one and it ends by `end` (at most `der.count`).
    private static func element(_ tag: UInt8, in der: [UInt8], at index: Int, end: Int) -> Element? {
        guard end <= der.count, index >= 0, end - index >= 2, der[index] == tag else { return nil }
        let first = der[index + 1]
        var cursor = index + 2
        var length = UInt64(first)
        if first >= 0x80 {
            // 0x80 (indefinite length, which DER forbids) has no length bytes; 0xFF is reserved.
            let count = Int(first & 0x7F)
            guard count >= 1, count <= maximumLengthBytes, count <= end - cursor else { return nil }
            length = der[cursor..<cursor + count].reduce(0) { $0 << 8 | UInt64($1) }
            cursor += count
        }
        guard length <= UInt64(end - cursor) else { return nil }
        return Element(start: index, contents: cursor..<cursor + Int(length))
    }
}

/// Finds the certificates in PEM text (RFC 7468), such as a CA file.
package enum PEM {
    /// How much text is scanned: its first 4 MiB of UTF-8, many times a full CA bundle (about 200 KiB).
    /// Certificates further on are ignored.
    package static let maximumInputBytes = 4 * 1024 * 1024

    /// The DER bytes of each `-----BEGIN CERTIFICATE-----` … `-----END CERTIFICATE-----` block in `text`, in
    /// order. Other blocks (keys, …) and text around blocks are ignored, lines may end in CRLF and be blank;
    /// a block that is not base64, is empty or is cut short by another boundary line is skipped.
    ///
    ///     let certificates = PEM.certificates(in: try String(contentsOfFile: "ca.pem", encoding: .utf8))
    package static func certificates(in text: String) -> [[UInt8]] {
        let begin = Array("-----BEGIN CERTIFICATE-----".utf8)
        let end = Array("-----END CERTIFICATE-----".utf8)
        let boundary = Array("-----".utf8)
        var certificates: [[UInt8]] = []
        var body: [UInt8]?  // the base64 of the certificate block being read
        let input = Array(text.utf8.prefix(maximumInputBytes))
        for rawLine in input.split(separator: UInt8(ascii: "\n")) {
            let line = Base64.trimmingWhitespace(rawLine)
            if line.elementsEqual(begin) {
                body = []
            } else if line.elementsEqual(end) {
                if let base64 = body, let der = Base64.decode(base64[...], ignoringWhitespace: true), !der.isEmpty {
                    certificates.append(der)
                }
                body = nil
            } else if line.starts(with: boundary) {
                body = nil
            } else {
                body?.append(contentsOf: line)
            }
        }
        return certificates
    }
}

/// Standard base64 (RFC 4648 §4) with padding, for pins and PEM: Foundation's codec, as `AcceptKey` uses.
///
/// Decoding accepts the canonical encoding only. Foundation's decoder also takes padding with bits set and
/// some malformed runs of `=`, so text that does not encode its own bytes again is refused: a pin has one
/// spelling.
enum Base64 {
    /// The padded base64 of `bytes`.
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    /// The bytes that padded base64 `text` encodes; nil when it is not canonical padded base64, or holds
    /// whitespace (unless `ignoringWhitespace`).
    static func decode(_ text: ArraySlice<UInt8>, ignoringWhitespace: Bool) -> [UInt8]? {
        let digits = String(decoding: ignoringWhitespace ? text.filter { !isWhitespace($0) }[...] : text, as: UTF8.self)
        guard let data = Data(base64Encoded: digits), data.base64EncodedString() == digits else { return nil }
        return Array(data)
    }

    /// `text` without the spaces, tabs, CRs and LFs at either end.
    static func trimmingWhitespace(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = text.firstIndex(where: { !isWhitespace($0) }),
            let last = text.lastIndex(where: { !isWhitespace($0) })
        else { return [] }
        return text[first...last]
    }

    /// Whether `byte` is a space, tab, CR or LF.
    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }
}
