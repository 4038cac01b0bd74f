import CableTesting
import Testing

@testable import CableReactive

// Self-signed test certificates made with the openssl CLI (3.0), and their pins from the pipeline in
// CertificatePin's documentation:
//   openssl req -x509 -newkey rsa:2048 -nodes -keyout rsa.key -out rsa.pem -days 36500 -subj /CN=rsa.pins.test
//   openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ec.key -out ec.pem \
//       -days 36500 -subj /CN=ec.pins.test
//   openssl x509 -req -in v1.csr -signkey ec.key -days 36500 -out v1.pem  (a version 1 certificate, same key)
//   openssl x509 -in X.pem -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64
// The fingerprints are `openssl x509 -in X.pem -outform der | openssl dgst -sha256`.

private let rsaPEM = """
    -----BEGIN CERTIFICATE-----
    MIIDEzCCAfugAwIBAgIUcoow5J2G/nh2MtBzIAaLYLLHvTMwDQYJKoZIhvcNAQEL
    BQAwGDEWMBQGA1UEAwwNcnNhLnBpbnMudGVzdDAgFw0yNjEyMDExNjA3MjVaGA8y
    MTI2MTEwNzE2MDcyNVowGDEWMBQGA1UEAwwNcnNhLnBpbnMudGVzdDCCASIwDQYJ
    KoZIhvcNAQEBBQADggEPADCCAQoCggEBALx5bSaMKIG353F+YfsNrn7ar1nS1YIc
    4ANAwvkfNdzW58vVoGfodjvhyKdJL0/n7L9bqmtCVoPA4uGNwbIAHWk76avZDZfo
    LvV7liOTdkzyCNO8zdx/2JGT35R0QWHI25BMVsnDkvYnCS3Os7O6vEg19lXJnDj3
    XJFu8qZMjpNK15vDitfMd6x6HSK0M6H988+8c3JaGmY4pE+AJcjRYjOh09dRwLWV
    6l5A6dIOqq9whCZ3ufg/rtTA9Yj/uXPRgozoywd8yVWF9u2RxiQFoN3ELO4A2ha8
    HEGW9ZANVHpJhODYanLbZGsF14tzjlGNFPbF4FjYLb2oo15JrStk/kMCAwEAAaNT
    MFEwHQYDVR0OBBYEFI8Qw2UKd/timLVv2zr1+yDfIeMTMB8GA1UdIwQYMBaAFI8Q
    w2UKd/timLVv2zr1+yDfIeMTMA8GA1UdEwEB/wQFMAMBAf8wDQYJKoZIhvcNAQEL
    BQADggEBAIQS9HNcE93h38HyRpDQaqXjEr3FeInkqjWSECeDf0IdIPl/31FiWu7s
    i+fy9R5boUNwaCuwHLBodFE2zDL6Hzp//+B+yj+Oi7IymJMduWKmddiobrGiDDrO
    vP1HPOdCbVRiObMusgV3qtGobc7L8lBm3ioQjX2HKQ0uABQjULCjZWS70Rsq8DUH
    D9PBjQrEdyhAgIfP1M9JgvPf4X9dQB1IjclBmhU3gP0+JB3YOn7XG6qxOVhf6FfW
    c3gtXDObKmiOf4IQ5Ud3HC/YK6m3ZWUrzJ3iBk+HKYAWgg7DqaB6+MxH6DsvxWkc
    +ZvKIoQv9ZTvNN8RUHX9y9xcIpjQBNM=
    -----END CERTIFICATE-----
    """
private let rsaPin = "sha256/E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhww="
private let rsaFingerprint = "0ff8da56d5b149c7d1028974f31f79b6cbfced9e0c6dce9974ae4eea696ead83"

private let ecPEM = """
    -----BEGIN CERTIFICATE-----
    MIIBgzCCASugAwIBAgIUT9YNpB1AseSMxa6zWZkJkGa92TcwCgYIKoZIzj0EAwIw
    FzEVMBMGA1UEAwwMZWMucGlucy50ZXN0MCAXDTI2MTIwMTE2MDcyNVoYDzIxMjYx
    MTA3MTYwNzI1WjAXMRUwEwYDVQQDDAxlYy5waW5zLnRlc3QwWTATBgcqhkjOPQIB
    BggqhkjOPQMBBwNCAAR5HC26pokLzFTDFVEBGySU9eqi9JBOiDrpGsZaH0ZyVa3X
    YEKGmuRkFQQxwB6PCbfM1r4X4gno4Zg9m0MASEeno1MwUTAdBgNVHQ4EFgQUPks7
    kK+v/VWNz11I2j7cUAJtfw4wHwYDVR0jBBgwFoAUPks7kK+v/VWNz11I2j7cUAJt
    fw4wDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNGADBDAh9csUusYBPYaCFY
    VBNqZA6phIW9DiydC5Mp3RBtKRUNAiBVw6nlKeZ9nGWZEqVKv0ZZqHdl8feSuSd7
    HqYjOexenQ==
    -----END CERTIFICATE-----
    """
private let ecPin = "sha256/TFw3D/LvWoPsMWcp2SCpqDcihiyo1Vhdz4STPaWYRS8="
private let ecFingerprint = "56727231c3578060015ee10aafd5c85984f2f4e9e61aba4db6ebfe5acf5ea5bd"

private let v1PEM = """
    -----BEGIN CERTIFICATE-----
    MIIBKjCB0QIURk5lln9Ue+TsnCs7BhJKb1JNMIUwCgYIKoZIzj0EAwIwFzEVMBMG
    A1UEAwwMdjEucGlucy50ZXN0MCAXDTI2MTIwMTE2MDczMFoYDzIxMjYxMTA3MTYw
    NzMwWjAXMRUwEwYDVQQDDAx2MS5waW5zLnRlc3QwWTATBgcqhkjOPQIBBggqhkjO
    PQMBBwNCAAR5HC26pokLzFTDFVEBGySU9eqi9JBOiDrpGsZaH0ZyVa3XYEKGmuRk
    FQQxwB6PCbfM1r4X4gno4Zg9m0MASEenMAoGCCqGSM49BAMCA0gAMEUCIQC0vm5l
    ftIT4VQf3IG1voZ09+o5L3FWQ1I8O6dw7b10WwIgHFTAtzWEUz4H7y2n4GCC/sj4
    hiNh/4UL4Bilqd4cwW0=
    -----END CERTIFICATE-----
    """
private let v1Fingerprint = "bb23562d6b6ff5fffe3896898d4fd62a50587e0e2b333d312439ccbd1f4d2fc3"

/// The EC certificate's private key (generated for these tests only, never used elsewhere): a block that
/// `PEM.certificates` must skip.
private let ecKeyPEM = """
    -----BEGIN PRIVATE KEY-----
    MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg1G75TAxGkUfFlS2y
    6OFqK1B4W9qVQNcB3g8Z0SsRY8KhRANCAAR5HC26pokLzFTDFVEBGySU9eqi9JBO
    iDrpGsZaH0ZyVa3XYEKGmuRkFQQxwB6PCbfM1r4X4gno4Zg9m0MASEen
    -----END PRIVATE KEY-----
    """

/// A DER element with a minimal definite length.
private func tlv(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
    let count = contents.count
    if count < 0x80 { return [tag, UInt8(count)] + contents }
    let lengthBytes = (0..<4).map { UInt8(truncatingIfNeeded: count >> (24 - 8 * $0)) }.drop { $0 == 0 }
    return [tag, 0x80 | UInt8(lengthBytes.count)] + lengthBytes + contents
}

/// The lines of `text`, without their LFs.
private func lines(_ text: String) -> [String] {
    text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
}

@Suite("Certificate pins, SubjectPublicKeyInfo and PEM")
struct CertificatePinsTests {
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// The DER of the only certificate in `pem`.
    static func der(_ pem: String) throws -> [UInt8] {
        let certificates = PEM.certificates(in: pem)
        try #require(certificates.count == 1)
        return certificates[0]
    }

    /// A minimal certificate-shaped structure (not a valid certificate) around `spki`, whose TBSCertificate's
    /// length is `tbsLengthDelta` off and which ends in `trailer`.
    static func syntheticCertificate(spki: [UInt8], tbsLengthDelta: Int = 0, trailer: [UInt8] = []) -> [UInt8] {
        let fields =
            tlv(0xA0, tlv(0x02, [2])) + tlv(0x02, [1]) + tlv(0x30, []) + tlv(0x30, []) + tlv(0x30, [])
            + tlv(0x30, []) + spki
        var tbs = tlv(0x30, fields)
        if tbsLengthDelta != 0 { tbs[1] = UInt8(Int(tbs[1]) + tbsLengthDelta) }  // short-form lengths only
        return tlv(0x30, tbs + trailer)
    }

    static let syntheticSPKI = tlv(0x30, tlv(0x30, tlv(0x06, [0x2A, 0x03])) + tlv(0x03, [0x00, 0x01, 0x02]))

    @Test(
        "finds the SubjectPublicKeyInfo of real RSA, EC and version 1 certificates, and its pin is openssl's",
        arguments: [
            (rsaPEM, rsaFingerprint, 294, rsaPin),
            (ecPEM, ecFingerprint, 91, ecPin),
            (v1PEM, v1Fingerprint, 91, ecPin),  // no version field; the EC certificate's key
        ])
    func realCertificates(pem: String, fingerprint: String, spkiCount: Int, pin: String) throws {
        let der = try Self.der(pem)
        #expect(Self.hex(SHA256.hash(der)) == fingerprint)  // the PEM decoded to openssl's DER
        let spki = try #require(DER.subjectPublicKeyInfo(ofCertificate: der))
        #expect(spki.count == spkiCount)
        #expect(spki.first == 0x30)
        let digest = spki.withUnsafeBytes { SHA256.hash($0) }
        #expect("sha256/" + Base64.encode(digest) == pin)
        #expect(CertificatePin(certificate: der) == (try CertificatePin(pin)))
    }

    @Test("finds the certificates in a bundle with a key block and other text, with LF or CRLF")
    func bundle() throws {
        let (ec, rsa) = (try Self.der(ecPEM), try Self.der(rsaPEM))
        let bundle = """
            Bag Attributes
                friendlyName: ec.pins.test
            subject=CN = ec.pins.test
            \(ecPEM)

            \(ecKeyPEM)
            some notes -----BEGIN CERTIFICATE----- in prose

              \(rsaPEM)  \t
            trailing text
            """
        #expect(PEM.certificates(in: bundle) == [ec, rsa])
        let crlf = lines(bundle).joined(separator: "\r\n")
        #expect(crlf.utf8.contains(0x0D))
        #expect(PEM.certificates(in: crlf) == [ec, rsa])
        // Blank lines inside a block, and a bundle without a final newline.
        let blankLines = ([lines(ecPEM)[0], "", "\r"] + lines(ecPEM).dropFirst()).joined(separator: "\n")
        #expect(PEM.certificates(in: blankLines) == [ec])
        #expect(PEM.certificates(in: "no certificates here") == [])
        #expect(PEM.certificates(in: ecKeyPEM) == [])
    }

    @Test("skips certificate blocks that are not base64, empty, or cut short, and keeps the others")
    func brokenBlocks() throws {
        let rsa = try Self.der(rsaPEM)
        let ec = lines(ecPEM)
        let invalidBase64 = ([ec[0], "MIIB!gzCC"] + ec.dropFirst()).joined(separator: "\n")
        let unpadded = ec.map { $0 == "HqYjOexenQ==" ? "HqYjOexenQ" : $0 }.joined(separator: "\n")
        let cutShortByKey = (ec[0...3] + lines(ecKeyPEM)).joined(separator: "\n")
        let cutShortByBegin = ec[0...3].joined(separator: "\n")
        let empty = "-----BEGIN CERTIFICATE-----\n\n-----END CERTIFICATE-----"
        for broken in [invalidBase64, unpadded, cutShortByKey, cutShortByBegin, empty] {
            #expect(PEM.certificates(in: broken) == [])
            #expect(PEM.certificates(in: broken + "\n" + rsaPEM) == [rsa])
        }
        #expect(PEM.certificates(in: rsaPEM + "\n" + cutShortByBegin) == [rsa])
    }

    @Test("scans only the first PEM.maximumInputBytes of the text")
    func inputLimit() throws {
        let rsa = try Self.der(rsaPEM)
        let filler = String(repeating: "x", count: PEM.maximumInputBytes - rsaPEM.utf8.count - 1) + "\n"
        #expect(PEM.certificates(in: filler + rsaPEM) == [rsa])  // ends exactly at the limit
        #expect(PEM.certificates(in: "x" + filler + rsaPEM) == [])  // its END line is one byte past it
    }

    @Test("rejects every truncation of a certificate and trailing bytes after it")
    func truncations() throws {
        for der in [try Self.der(rsaPEM), try Self.der(ecPEM), try Self.der(v1PEM)] {
            for count in 0..<der.count {
                #expect(DER.subjectPublicKeyInfo(ofCertificate: Array(der.prefix(count))) == nil, "prefix \(count)")
            }
            #expect(DER.subjectPublicKeyInfo(ofCertificate: der) != nil)
            #expect(DER.subjectPublicKeyInfo(ofCertificate: der + [0]) == nil)
        }
    }

    @Test("survives thousands of random mutations; what it returns is a well-formed element inside the input")
    func mutations() throws {
        var random = SeededRandom(seed: 0x5EED_CE27)
        let originals = [try Self.der(rsaPEM), try Self.der(ecPEM)]
        var (found, rejected) = (0, 0)
        for round in 0..<4000 {
            var der = originals[round % 2]
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let index = Int.random(in: der.indices, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: der[index] = 0x80  // indefinite length
                case 1: der[index] = 0xFF
                case 2: der.remove(at: index)
                default: der[index] = UInt8.random(in: 0...255, using: &random)
                }
            }
            guard let spki = DER.subjectPublicKeyInfo(ofCertificate: der) else {
                rejected += 1
                continue
            }
            found += 1
            // Exactly one complete SubjectPublicKeyInfo: it is found again in another certificate.
            #expect(spki.startIndex >= 0 && spki.endIndex <= der.count)
            let wrapped = Self.syntheticCertificate(spki: Array(spki))
            #expect(DER.subjectPublicKeyInfo(ofCertificate: wrapped).map { Array($0) } == Array(spki))
        }
        // Mutations in the signature or extensions leave the SubjectPublicKeyInfo findable; most others do not.
        #expect(found > 100)
        #expect(rejected > 100)
    }

    @Test("accepts long-form lengths of up to 4 bytes, and no more")
    func longFormLengths() throws {
        let der = try Self.der(ecPEM)
        let expected = try #require(DER.subjectPublicKeyInfo(ofCertificate: der))
        // The EC certificate starts 30 82 01 83: re-encode that length in 3, 4 and 5 bytes.
        try #require(der.prefix(4) == [0x30, 0x82, 0x01, 0x83])
        let contents = Array(der.dropFirst(4))
        let four = [0x30, 0x84, 0x00, 0x00, 0x01, 0x83] + contents
        #expect(DER.subjectPublicKeyInfo(ofCertificate: [0x30, 0x83, 0x00, 0x01, 0x83] + contents) == expected)
        #expect(DER.subjectPublicKeyInfo(ofCertificate: four) == expected)
        #expect(DER.subjectPublicKeyInfo(ofCertificate: [0x30, 0x85, 0x00, 0x00, 0x00, 0x01, 0x83] + contents) == nil)
        #expect(DER.maximumLengthBytes == 4)
    }

    @Test(
        "rejects hostile headers",
        arguments: [
            [],
            [0x30],
            [0x30, 0x00],
            [0x30, 0x80, 0x00, 0x00],  // indefinite length
            [0x30, 0x81],  // length bytes missing
            [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x30, 0x00],  // 4 GiB past the end
            [0x30, 0x88, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x30, 0x00],
            [0x30, 0xFF, 0x30, 0x00],
            [0x31, 0x02, 0x30, 0x00],  // a SET
            [0x3F, 0x02, 0x30, 0x00],  // high tag number form
        ] as [[UInt8]])
    func hostileHeaders(der: [UInt8]) {
        #expect(DER.subjectPublicKeyInfo(ofCertificate: der) == nil)
    }

    @Test("requires every element to lie within its parent")
    func nesting() {
        let spki = Self.syntheticSPKI
        let valid = Self.syntheticCertificate(spki: spki, trailer: tlv(0x30, []))
        #expect(DER.subjectPublicKeyInfo(ofCertificate: valid).map { Array($0) } == spki)
        // The TBSCertificate is 2 bytes too short: the SubjectPublicKeyInfo ends in the signature algorithm.
        let short = Self.syntheticCertificate(spki: spki, tbsLengthDelta: -2, trailer: tlv(0x30, []))
        #expect(DER.subjectPublicKeyInfo(ofCertificate: short) == nil)
        // The key's BIT STRING claims a byte beyond its SubjectPublicKeyInfo (but within the certificate).
        var longKey = spki
        longKey[longKey.count - 4] += 1
        let overlong = Self.syntheticCertificate(spki: longKey, trailer: [0x00])
        #expect(DER.subjectPublicKeyInfo(ofCertificate: overlong) == nil)
        // A SubjectPublicKeyInfo without the BIT STRING, or with an extra element.
        let noKey = tlv(0x30, tlv(0x30, tlv(0x06, [0x2A, 0x03])))
        #expect(DER.subjectPublicKeyInfo(ofCertificate: Self.syntheticCertificate(spki: noKey)) == nil)
        let extra = tlv(0x30, Array(spki.dropFirst(2)) + tlv(0x05, []))
        #expect(DER.subjectPublicKeyInfo(ofCertificate: Self.syntheticCertificate(spki: extra)) == nil)
    }

    @Test("parses pins with whitespace around them, and prints them back")
    func parsing() throws {
        let pin = try CertificatePin(rsaPin)
        #expect(pin.description == rsaPin)
        #expect(try CertificatePin(pin.description) == pin)
        #expect(try CertificatePin(" \t" + rsaPin + "\r\n") == pin)
        #expect(try CertificatePin(ecPin) != pin)
        #expect(Set([pin, try CertificatePin(rsaPin + "\n"), try CertificatePin(ecPin)]).count == 2)
        let zero = try CertificatePin(sha256: [UInt8](repeating: 0, count: 32))
        #expect(zero.description == "sha256/" + String(repeating: "A", count: 43) + "=")
        #expect(try CertificatePin(zero.description) == zero)
    }

    @Test(
        "rejects pins without the sha256/ prefix",
        arguments: [
            "", "E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhww=", "SHA256/E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhww=",
            "sha1/E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhww=", "sha256:E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhww=",
        ])
    func missingPrefix(text: String) {
        #expect(throws: CertificatePin.ParseError(reason: .missingPrefix)) { try CertificatePin(text) }
    }

    @Test(
        "rejects pins that are not padded standard base64",
        arguments: [
            "sha256/E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhww",  // no padding
            "sha256/E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhww==",  // too much
            "sha256/E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhwx=",  // bits set in the padding
            "sha256/E8-sy4-aWbksy4KFih-Gm98-frwLpKwGl7bUcLfyhww=",  // base64url
            "sha256/E8+sy4+aWbksy4KFih+Gm98+frwLp KwGl7bUcLfyhww=",
            "sha256/ E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhww=",
            "sha256/E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhw=w",
            "sha256/E8+sy4+aWbksy4KFih+Gm98+frwLpKwGl7bUcLfyhww=!",
        ])
    func invalidBase64(text: String) {
        #expect(throws: CertificatePin.ParseError(reason: .invalidBase64)) { try CertificatePin(text) }
    }

    @Test("rejects digests that are not 32 bytes, as text and as bytes")
    func wrongLength() throws {
        for count in [0, 1, 20, 31, 33, 64] {
            let digest = [UInt8](repeating: 0xAB, count: count)
            let error = CertificatePin.ParseError(reason: .wrongLength(count))
            #expect(throws: error) { try CertificatePin("sha256/" + Base64.encode(digest)) }
            #expect(throws: error) { try CertificatePin(sha256: digest) }
        }
    }

    @Test("describes parse errors without repeating the rejected text")
    func errorDescriptions() {
        let secret = "hunter2hunter2"
        for text in [secret, "sha256/" + secret + "!", "sha256/" + secret + "=="] {
            do {
                _ = try CertificatePin(text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.description.hasPrefix("certificate pin: "))
                #expect(!error.description.contains(secret))
            }
        }
        #expect(
            CertificatePin.ParseError(reason: .wrongLength(31)).description
                == "certificate pin: the digest has 31 bytes, a SHA-256 digest has 32")
    }

    @Test("encodes and decodes base64 (RFC 4648 test vectors), strictly")
    func base64() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE="]
        for (plain, encoded) in vectors.merging(["foobar": "Zm9vYmFy"], uniquingKeysWith: { $1 }) {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(Array(encoded.utf8)[...], ignoringWhitespace: false) == Array(plain.utf8))
        }
        #expect(Base64.decode(Array("Zm9v\r\n YmFy".utf8)[...], ignoringWhitespace: true) == Array("foobar".utf8))
        #expect(Base64.decode(Array("Zm9v YmFy".utf8)[...], ignoringWhitespace: false) == nil)
        for invalid in ["Z", "Zg", "Zg=", "Zg===", "Zh==", "Zm9=", "=Zg=", "Zg==Zg==", "Zm9v\u{0}"] {
            #expect(Base64.decode(Array(invalid.utf8)[...], ignoringWhitespace: true) == nil, "\(invalid)")
        }
        var random = SeededRandom(seed: 64)
        for count in 0...40 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(Base64.decode(Array(Base64.encode(bytes).utf8)[...], ignoringWhitespace: false) == bytes)
        }
    }

    @Test("a chain matches when the pins are empty or any of its certificates has a pinned key")
    func matching() throws {
        let (rsa, ec) = (try Self.der(rsaPEM), try Self.der(ecPEM))
        let (rsaKey, ecKey) = (try CertificatePin(rsaPin), try CertificatePin(ecPin))
        let other = try CertificatePin(sha256: [UInt8](repeating: 7, count: 32))
        let garbage: [UInt8] = [0x30, 0x03, 0x02, 0x01, 0x00]
        #expect(CertificatePin.matches([], chain: []))
        #expect(CertificatePin.matches([], chain: [garbage]))
        #expect(CertificatePin.matches([rsaKey], chain: [rsa]))
        #expect(CertificatePin.matches([rsaKey], chain: [ec, rsa]))  // not the leaf: an intermediate or root
        #expect(CertificatePin.matches([other, ecKey], chain: [ec, rsa]))
        #expect(CertificatePin.matches([rsaKey], chain: [garbage, rsa]))
        #expect(!CertificatePin.matches([rsaKey], chain: []))
        #expect(!CertificatePin.matches([rsaKey], chain: [ec]))
        #expect(!CertificatePin.matches([other], chain: [ec, rsa]))
        #expect(!CertificatePin.matches([rsaKey], chain: [garbage]))
        #expect(!CertificatePin.matches([rsaKey], chain: [Array(rsa.dropLast())]))  // SPKI intact, DER not
    }
}
