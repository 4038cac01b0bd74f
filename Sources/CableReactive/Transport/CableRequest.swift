#if canImport(FoundationEssentials) && !CABLE_FULL_FOUNDATION
    import FoundationEssentials
#else
    import Foundation
#endif

/// The WebSocket upgrade request: the URL and the headers the client connects with.
///
/// `onRequest` edits it before every attempt, and every ``WebSocketTransport`` receives it. Each row of
/// the usual auth recipes is one line:
///
/// ```swift
/// let client = try ActionCableClient(url: url) { request in
///     request.setQueryItem("token", try await tokens.current())  // ?token=…, other items kept
///     request.setHeader("Authorization", "Bearer \(jwt)")  // replaces any earlier value
///     request.addCookie("_session_id", sessionID)  // other cookies kept
///     request.origin = "https://example.com"  // Rails checks it against allowed_request_origins
///     request.anyCableToken = jwt  // AnyCable: the subprotocol anycable-token.<jwt>, out of URLs and logs
/// }
/// ```
///
/// **Query items** are percent-encoded so that any server decodes exactly the value given: every byte
/// except `A–Z a–z 0–9 - . _ ~` is written as `%XX` of its UTF-8, so `+` (which Rails' Rack decodes as a
/// space), `&`, `=`, `%`, `#`, spaces and non-ASCII characters survive. Other items, the path, the host
/// (IPv6 literals too), the user info and the fragment are kept as they were.
///
/// **Headers** keep their order and spelling; names compare case-insensitively (RFC 9110 §5.1), and a
/// name may appear several times (``addHeader(_:_:)``). The transport sets the WebSocket headers itself
/// (`Host`, `Upgrade`, `Connection`, `Sec-WebSocket-*`) and ignores yours for them. A header whose name is
/// not an HTTP token or whose value holds a line break or another control character can never be sent:
/// the attempt fails with ``CableDisconnect/Kind/requestFailed`` instead of connecting without it (see
/// ``invalidHeaderNames``).
///
/// **Printing** a request (``description``, `dump`, the debugger) shows the URL without its user info and
/// query, the header names and whether there is an ``anyCableToken``, never a header value, query value or
/// the token, so a request may be logged.
///
/// On Apple platforms it converts to and from `URLRequest` for apps that already build one.
public struct CableRequest: Sendable, Hashable {
    /// One header line.
    public struct Header: Sendable, Hashable {
        /// The field name, as given (names compare case-insensitively).
        public var name: String
        /// The field value.
        public var value: String

        /// A header line `name: value`.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The cable URL: `ws`, `wss`, `http` or `https` (the last two connect as `ws` and `wss`).
    public var url: URL
    /// The header lines in the order they are sent.
    public var headers: [Header]
    /// A token for AnyCable (1.6 and later), offered as the WebSocket subprotocol `anycable-token.<token>`.
    /// AnyCable finds it in the `Sec-WebSocket-Protocol` header and takes it as its JWT header (`X-JID` by
    /// default, after `--jwt_param`): the same token an app would otherwise put in the `jid` query parameter.
    /// Unlike a query parameter, it stays out of URLs, so out of access logs and the client's own log lines.
    /// Default `nil`: no token protocol.
    ///
    /// ```swift
    /// let client = try ActionCableClient(url: URL(string: "wss://cable.example.com/cable")!) { request in
    ///     request.anyCableToken = try await session.cableToken()  // a JWT, fetched before every attempt
    /// }
    /// // Sec-WebSocket-Protocol: anycable-token.eyJhbGci…, actioncable-v1-json, actioncable-unsupported
    /// ```
    ///
    /// It is offered first, before the Action Cable subprotocols (AnyCable finds it anywhere in the list). It
    /// is never a protocol the server may choose: a server that answers with it fails the attempt on
    /// `SocketTransport` (`invalidHandshake`, as any subprotocol it was not offered to speak), and
    /// `URLSessionTransport` takes the connection as plain Action Cable, as it does for any protocol it did not
    /// offer. With a transport of your own, the client passes it in the `protocols` of
    /// ``WebSocketTransport/connect(request:protocols:handler:)``.
    ///
    /// AnyCable defines no encoding: the token goes into the header as it is, so it must be an HTTP token
    /// (RFC 9110 §5.6.2: ASCII letters, digits and `!#$%&'*+-.^_|~` or a backquote), as a JWT (base64url)
    /// is. An empty token, or one with other characters (a `=` of padded base64, `/`, a space), can never be
    /// sent: ``invalidHeaderNames`` then names `Sec-WebSocket-Protocol`, and the client fails the attempt with
    /// ``CableDisconnect/Kind/requestFailed`` (logged as `request_invalid_headers count=1`), as for any header
    /// that cannot be sent, rather than connect without the token.
    public var anyCableToken: String?

    /// A request for `url` with no headers of its own.
    public init(url: URL, headers: [Header] = []) {
        self.url = url
        self.headers = headers
    }

    // MARK: Headers

    /// The first value of the header `name` (any case), or `nil`.
    public func value(forHeader name: String) -> String? {
        headers.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value of the header `name` (any case), in order.
    public func values(forHeader name: String) -> [String] {
        headers.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Sets the header `name` to `value`, replacing every earlier value of it (any case). The header keeps
    /// the place of its first earlier line, or goes last.
    public mutating func setHeader(_ name: String, _ value: String) {
        if let first = headers.firstIndex(where: { Self.sameName($0.name, name) }) {
            headers[first] = Header(name, value)
            headers.removeAll(after: first) { Self.sameName($0.name, name) }
        } else {
            headers.append(Header(name, value))
        }
    }

    /// Adds one more line for the header `name`, keeping earlier ones (for fields HTTP allows to repeat).
    public mutating func addHeader(_ name: String, _ value: String) {
        headers.append(Header(name, value))
    }

    /// Removes every line of the header `name` (any case).
    public mutating func removeHeader(_ name: String) {
        headers.removeAll { Self.sameName($0.name, name) }
    }

    /// The `Origin` header. Rails refuses an upgrade whose origin is not in `allowed_request_origins`
    /// (it answers 404); native apps send none unless they set it.
    public var origin: String? {
        get { value(forHeader: "Origin") }
        set {
            if let newValue { setHeader("Origin", newValue) } else { removeHeader("Origin") }
        }
    }

    /// Sets the cookie `name` to `value` in the request's one `Cookie` header (RFC 6265 §5.4), replacing a
    /// cookie of that name and keeping the others.
    ///
    /// `value` is sent as given when it is a valid cookie value, so a value copied from a `Set-Cookie`
    /// header (a Rails session cookie with its `%3D` and `--`) goes back unchanged. Bytes a cookie value
    /// cannot hold (spaces, `"`, `,`, `;`, `\`, control and non-ASCII characters) are percent-encoded, as
    /// Rack decodes them.
    public mutating func addCookie(_ name: String, _ value: String) {
        let encodedName = PercentEncoding.cookieName(name)
        var pairs = values(forHeader: "Cookie")
            .flatMap { $0.split(separator: ";") }
            .map { String($0.drop { $0 == " " || $0 == "\t" }) }
            .filter { !$0.isEmpty && $0.prefix { $0 != "=" } != encodedName }
        pairs.append("\(encodedName)=\(PercentEncoding.cookieValue(value))")
        setHeader("Cookie", pairs.joined(separator: "; "))
    }

    /// The names of headers that cannot be sent: a name that is not an HTTP token (RFC 9110 §5.6.2), or a
    /// value with a line break, NUL or another control character except tab. Empty when every header is
    /// valid; the client fails an attempt whose request has any.
    ///
    /// An ``anyCableToken`` that is not an HTTP token (or is empty) makes the `Sec-WebSocket-Protocol` header
    /// that carries it unsendable: it is listed as `Sec-WebSocket-Protocol`.
    public var invalidHeaderNames: [String] {
        let invalidToken = anyCableToken.map { !Self.isToken($0) } ?? false
        return headers.filter { !Self.isValid($0) }.map(\.name) + (invalidToken ? ["Sec-WebSocket-Protocol"] : [])
    }

    // MARK: Subprotocols

    /// What an AnyCable token subprotocol starts with: `anycable-token.<token>`.
    package static let anyCableTokenPrefix = "anycable-token."

    /// The subprotocols to offer for this request, in order: `anycable-token.<token>` when ``anyCableToken``
    /// is set, then `protocols` (the wire protocol's offer).
    package func offeredSubprotocols(_ protocols: [String]) -> [String] {
        guard let anyCableToken else { return protocols }
        return [Self.anyCableTokenPrefix + anyCableToken] + protocols
    }

    /// Whether `name` is a credential carried as a subprotocol (AnyCable's `anycable-token.<token>`), not a
    /// protocol: a server may never choose it.
    package static func isCredentialSubprotocol(_ name: some StringProtocol) -> Bool {
        name.hasPrefix(anyCableTokenPrefix)
    }

    // MARK: Query

    /// The value of the first query item `name`, percent-decoded (`+` is a space, as in a form), or `nil`.
    public func queryItem(_ name: String) -> String? {
        QueryString(url: url)?.items.first { $0.name == name }?.value
    }

    /// Sets the query item `name` to `value`, percent-encoded, replacing every earlier item of that name
    /// and keeping the others in order. The item keeps the place of its first earlier occurrence, or goes
    /// last.
    public mutating func setQueryItem(_ name: String, _ value: String) {
        edit { $0.set(name, value) }
    }

    /// Removes every query item `name`; a query left empty is removed with its `?`.
    public mutating func removeQueryItem(_ name: String) {
        edit { $0.remove(name) }
    }

    private mutating func edit(_ change: (inout QueryString) -> Void) {
        guard var query = QueryString(url: url) else { return }
        change(&query)
        if let edited = query.url { url = edited }
    }

    /// ASCII case-insensitive equality: header names are tokens.
    static func sameName(_ a: String, _ b: String) -> Bool {
        a.utf8.elementsEqual(b.utf8) { lowercased($0) == lowercased($1) }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    static func isValid(_ header: Header) -> Bool {
        isToken(header.name)
            && header.value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }

    /// RFC 9110 `token` (§5.6.2): visible ASCII without separators, as header names and subprotocols are.
    package static func isToken(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                byte > 0x20 && byte < 0x7F && !"\"(),/:;<=>?@[\\]{}".utf8.contains(byte)
            }
    }
}

extension CableRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The URL without its user info, query and fragment (`?…` marks a query), the header names in order,
    /// and `anyCableToken: <redacted>` when there is a token; never a header value, a query value or the
    /// token:
    ///
    ///     CableRequest(url: wss://cable.example.com/cable?…, headers: [Origin, Cookie], anyCableToken: <redacted>)
    public var description: String {
        var fields = ["url: \(Self.redacted(url))", "headers: [\(headers.map(\.name).joined(separator: ", "))]"]
        if anyCableToken != nil { fields.append("anyCableToken: <redacted>") }
        return "CableRequest(\(fields.joined(separator: ", ")))"
    }

    /// The same as ``description``: no secrets.
    public var debugDescription: String { description }

    /// What `dump` and the debugger show: the URL as ``description`` prints it, the header names and whether
    /// there is a token; never the values.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "url": Self.redacted(url), "headerNames": headers.map(\.name), "hasAnyCableToken": anyCableToken != nil,
            ],
            displayStyle: .struct)
    }

    /// `url` without user info, query and fragment, with `?…` for a query.
    private static func redacted(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "<url>" }
        let hasQuery = components.percentEncodedQuery != nil
        components.percentEncodedUser = nil
        components.percentEncodedPassword = nil
        components.percentEncodedQuery = nil
        components.percentEncodedFragment = nil
        return (components.string ?? "<url>") + (hasQuery ? "?…" : "")
    }
}

/// A URL's query as name-value items, edited without touching the rest of the URL.
struct QueryString {
    struct Item {
        /// The item as it appeared, still percent-encoded; rewritten only when the item is set.
        var encoded: Substring
        var name: String
        var value: String?
    }

    private var components: URLComponents
    private(set) var items: [Item]

    init?(url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        self.components = components
        items = (components.percentEncodedQuery ?? "").split(separator: "&").map { encoded in
            let parts = encoded.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return Item(
                encoded: encoded,
                name: PercentEncoding.decodeFormComponent(parts[0]),
                value: parts.count > 1 ? PercentEncoding.decodeFormComponent(parts[1]) : nil)
        }
    }

    mutating func set(_ name: String, _ value: String) {
        let encoded = "\(PercentEncoding.queryComponent(name))=\(PercentEncoding.queryComponent(value))"
        let item = Item(encoded: Substring(encoded), name: name, value: value)
        if let first = items.firstIndex(where: { $0.name == name }) {
            items[first] = item
            items.removeAll(after: first) { $0.name == name }
        } else {
            items.append(item)
        }
    }

    mutating func remove(_ name: String) {
        items.removeAll { $0.name == name }
    }

    var url: URL? {
        var components = components
        components.percentEncodedQuery = items.isEmpty ? nil : items.map(\.encoded).joined(separator: "&")
        return components.url
    }
}

/// Percent-encoding for query items and cookie values.
enum PercentEncoding {
    /// Every byte but RFC 3986's unreserved characters as `%XX`: what any form or URI decoder reads back
    /// as the same text.
    static func queryComponent(_ text: String) -> String {
        encode(text) { isUnreserved($0) }
    }

    /// RFC 6265 `cookie-octet`s as they are, `%` included (a value copied from `Set-Cookie` is already
    /// encoded); any other byte as `%XX`.
    static func cookieValue(_ text: String) -> String {
        encode(text, keeping: isCookieOctet)
    }

    private static func isCookieOctet(_ byte: UInt8) -> Bool {
        byte == 0x21 || (0x23...0x2B).contains(byte) || (0x2D...0x3A).contains(byte)
            || (0x3C...0x5B).contains(byte) || (0x5D...0x7E).contains(byte)
    }

    /// A cookie name: the value's rules, and `=` encoded too.
    static func cookieName(_ text: String) -> String {
        encode(text) { $0 != UInt8(ascii: "=") && isCookieOctet($0) }
    }

    /// Decodes `%XX` and `+` (a space) as HTML forms and Rack do; a malformed escape stays as it is.
    static func decodeFormComponent(_ text: Substring) -> String {
        let input = Array(text.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%"), index + 2 < input.count, let high = hexValue(input[index + 1]),
                let low = hexValue(input[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? 0x20 : byte)
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func encode(_ text: String, keeping keep: (UInt8) -> Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if keep(byte) {
                bytes.append(byte)
            } else {
                bytes.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

extension Array {
    /// Removes the elements after `index` that match, keeping the rest in order.
    fileprivate mutating func removeAll(after index: Int, where matches: (Element) -> Bool) {
        self = enumerated().filter { $0.offset <= index || !matches($0.element) }.map(\.element)
    }
}
