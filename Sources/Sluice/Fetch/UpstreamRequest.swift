/// The request Sluice sends upstream: method, URL, the forwarded fields and the body framing.
/// `Host` comes from ``url``; framing fields are libcurl's to write.
public struct UpstreamRequest: Sendable, Equatable {
    /// How the body is sent.
    public enum Body: Sendable, Equatable {
        /// No body.
        case none
        /// Exactly this many bytes.
        case length(Int64)
        /// Unknown length (chunked upstream).
        case streamed
    }

    /// The method.
    public var method: String
    /// The absolute URL.
    public var url: TargetURL
    /// Fields to send, hop-by-hop ones already removed.
    public var headers: HTTPFields
    /// The body framing.
    public var body: Body
    /// Whether the client that asked is on this machine (`loopback_targets`).
    public var fromLocalClient = true
    /// How the origin's certificate is trusted (the rule's `tls:`); `nil` = the system store, verified.
    public var trust: UpstreamTrust?
    /// The parent proxy it goes through (`upstream.proxy`, a rule's `proxy:`); `nil` = direct.
    public var parent: ParentProxy?
    /// Changes to the response's fields (a rule's `rewrite.response`), made as the head arrives,
    /// before any hook sees it.
    public var responseRewrite: HeaderRewrite?

    public init(method: String, url: TargetURL, headers: HTTPFields, body: Body) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A response's status line and header fields as received from upstream.
public struct ResponseHead: Sendable, Equatable {
    /// The status code.
    public var status: Int
    /// The reason phrase (empty for HTTP/2).
    public var reason: String
    /// `"1.0"`, `"1.1"` or `"2"`.
    public var version: String
    /// Header fields in order.
    public var headers: HTTPFields

    public init(status: Int, reason: String = "", version: String = "1.1", headers: HTTPFields = HTTPFields()) {
        self.status = status
        self.reason = reason
        self.version = version
        self.headers = headers
    }

    /// Whether this is a redirect with a Location (RFC 9110 §15.4).
    public var isRedirect: Bool {
        [301, 302, 303, 307, 308].contains(status) && headers[.location] != nil
    }
}
