// Apple platforms only, as URLSessionTransport is; see there.
#if canImport(Darwin) || CABLE_FULL_FOUNDATION
    import Foundation

    #if canImport(FoundationNetworking)
        import FoundationNetworking
    #endif

    extension CableRequest {
        /// The URL and header fields of `urlRequest`, for apps that already build one; `nil` when it has no
        /// URL. Its method, body, cache policy and timeout do not apply to a WebSocket upgrade and are
        /// dropped.
        ///
        /// ```swift
        /// let client = try ActionCableClient(url: url) { request in
        ///     request = CableRequest(try await api.authorizedRequest(for: url)) ?? request
        /// }
        /// ```
        public init?(_ urlRequest: URLRequest) {
            guard let url = urlRequest.url else { return nil }
            let fields = urlRequest.allHTTPHeaderFields ?? [:]
            self.init(url: url, headers: fields.sorted { $0.key < $1.key }.map { Header($0.key, $0.value) })
        }
    }

    extension URLRequest {
        /// A request for `request`'s URL with its header lines; a header that appears on several lines is
        /// joined with commas (RFC 9110 §5.3), as `URLRequest` keeps one value per name.
        public init(_ request: CableRequest) {
            self.init(url: request.url)
            for header in request.headers { addValue(header.value, forHTTPHeaderField: header.name) }
        }
    }
#endif
