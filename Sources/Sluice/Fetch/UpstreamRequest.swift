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

    /// The fields live in one box: a request is handed between the exchange, its task and its
    /// transfer and kept by each, and a copy of the box is one retain where a copy of the fields
    /// was one per string. Written through ``unique()``: copy on write, as for any value.
    private final class Storage: @unchecked Sendable {
        var method: String
        var url: TargetURL
        var headers: HTTPFields
        var body: Body
        var fromLocalClient = true
        var trust: UpstreamTrust?
        var parent: ParentProxy?
        var responseRewrite: HeaderRewrite?
        var expectsContinue = false

        init(method: String, url: TargetURL, headers: HTTPFields, body: Body) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
        }

        func copy() -> Storage {
            let copy = Storage(method: method, url: url, headers: headers, body: body)
            copy.fromLocalClient = fromLocalClient
            copy.trust = trust
            copy.parent = parent
            copy.responseRewrite = responseRewrite
            copy.expectsContinue = expectsContinue
            return copy
        }
    }

    private var storage: Storage

    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// The method.
    public var method: String {
        get { storage.method }
        set { unique().method = newValue }
    }
    /// The absolute URL.
    public var url: TargetURL {
        get { storage.url }
        _modify { yield &unique().url }
    }
    /// Fields to send, hop-by-hop ones already removed.
    public var headers: HTTPFields {
        get { storage.headers }
        _modify { yield &unique().headers }
    }
    /// The body framing.
    public var body: Body {
        get { storage.body }
        set { unique().body = newValue }
    }
    /// Whether the client that asked is on this machine (`loopback_targets`).
    public var fromLocalClient: Bool {
        get { storage.fromLocalClient }
        set { unique().fromLocalClient = newValue }
    }
    /// How the origin's certificate is trusted (the rule's `tls:`); `nil` = the system store, verified.
    public var trust: UpstreamTrust? {
        get { storage.trust }
        set { unique().trust = newValue }
    }
    /// The parent proxy it goes through (`upstream.proxy`, a rule's `proxy:`); `nil` = direct.
    public var parent: ParentProxy? {
        get { storage.parent }
        set { unique().parent = newValue }
    }
    /// Changes to the response's fields (a rule's `rewrite.response`), made as the head arrives,
    /// before any hook sees it.
    public var responseRewrite: HeaderRewrite? {
        get { storage.responseRewrite }
        set { unique().responseRewrite = newValue }
    }

    /// The body waits for the origin (RFC 9110 §10.1.1): the request carries `Expect:
    /// 100-continue`, as the client's did, and its body goes once the origin answers `100
    /// Continue`, or after `timeouts.upstream_continue` of silence; a final answer before it
    /// means the body is never sent. Set only while the client's body is still unread.
    public var expectsContinue: Bool {
        get { storage.expectsContinue }
        set { unique().expectsContinue = newValue }
    }

    public init(method: String, url: TargetURL, headers: HTTPFields, body: Body) {
        storage = Storage(method: method, url: url, headers: headers, body: body)
    }

    public static func == (lhs: UpstreamRequest, rhs: UpstreamRequest) -> Bool {
        if lhs.storage === rhs.storage { return true }
        return lhs.method == rhs.method && lhs.url == rhs.url && lhs.headers == rhs.headers && lhs.body == rhs.body
            && lhs.fromLocalClient == rhs.fromLocalClient && lhs.trust == rhs.trust && lhs.parent == rhs.parent
            && lhs.responseRewrite == rhs.responseRewrite && lhs.expectsContinue == rhs.expectsContinue
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
