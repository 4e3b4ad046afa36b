import EventIO

/// A stream's request: checked as RFC 9113 §8 asks (pseudo-fields, authority, limits), then the
/// exchange that answers it.
extension HTTP2Connection {
    /// The stream's request as an exchange sees it, and the exchange started.
    func start(_ stream: HTTP2Stream) {
        stream.awaitingStart = false
        let method = stream.pseudo[":method"] ?? ""
        let path = stream.pseudo[":path"] ?? ""
        var fields = stream.fields
        if let authority = stream.pseudo[":authority"] { fields.set("Host", authority) }
        // Cookie crumbs (one field per cookie, RFC 9113 §8.2.3) are one `Cookie` line, joined
        // with "; ", before an HTTP/1.1 hop: origins read one line.
        let cookies = fields.values(.cookie)
        if cookies.count > 1 { fields.set("Cookie", cookies.joined(separator: "; ")) }
        let framing: ProxyRequest.BodyFraming
        if let length = fields[.contentLength].flatMap({ Int64($0) }) {
            framing = stream.requestEnded && length == 0 ? .none : .length(length)
        } else if stream.requestEnded {
            framing = stream.inputCount == 0 ? .none : .length(Int64(stream.inputCount))
        } else {
            framing = .streamEnd  // its DATA as it comes, until END_STREAM
        }
        if case .length(let length) = framing { fields.set("Content-Length", String(length)) }
        var received = ProxyRequest(
            method: method, target: .origin(path), rawTarget: path, minorVersion: 1, headers: fields,
            bodyFraming: framing)
        received.wire = .http2
        var request = received
        request.takesTrailers = fields.tokens(.te).contains("trailers")
        var failure: SluiceError?
        var visible = path
        let bodyLimit = env.exchanges.parserLimits.maxBodyBytes
        if stream.headBytes > maxHeaderBytes {
            failure = .badRequest(reason: .headersTooLarge(limit: maxHeaderBytes))
        } else if case .length(let length) = framing, length > bodyLimit {
            // As an HTTP/1.1 request's Content-Length over `limits.max_request_body` is (a body
            // without one is bounded as it streams).
            failure = .badRequest(reason: .bodyTooLarge(limit: Int(clamping: bodyLimit)))
        } else if method.isEmpty || path.isEmpty || method == "CONNECT" || stream.pseudo[":scheme"] == nil {
            failure = .badRequest(
                reason: .malformed("an HTTP/2 request needs :method, :scheme and :path (CONNECT is not served inside)"))
        } else if let host = stream.hostBesideAuthority, let named = stream.pseudo[":authority"],
            !Interception.names(host, host: authority.host.lowercasedUnlessPlain(), port: authority.port)
        {
            // (`:authority` itself is checked against the connection's below: a `host` that names
            // the same, with or without its default port or in another case, is the same.)
            // A request naming two authorities is malformed (RFC 9113 §8.3.1): neither is chosen.
            failure = .badRequest(reason: .malformed("host names \(host.prefix(100)), :authority \(named.prefix(100))"))
        } else if let scheme = stream.pseudo[":scheme"], scheme != "https" {
            // The connection is TLS to the CONNECT's authority: its resources are https ones
            // (RFC 9113 §8.3.1), as an HTTP/1.1 request on it must name (421 for http://).
            failure =
                scheme.lowercased() == "http"
                ? .badRequest(
                    reason: .misdirected(
                        "This connection is TLS to \(authority.host):\(authority.port); an http request must use a connection of its own."
                    ))
                : .badRequest(reason: .unsupportedScheme(scheme))
        } else if path.utf8.contains(UInt8(ascii: "#"))
            || !visible.withUTF8({ ByteScan.isVisibleASCII(UnsafeRawBufferPointer($0)) })
        {
            // As for HTTP/1.1's request line: no fragment, nothing but visible ASCII (RFC 9113 §8.3.1).
            failure = .badRequest(reason: .malformed(":path holds a fragment, a space, a control byte or non-ASCII"))
        } else {
            switch Interception.target(of: received, authority: authority) {
            case .success(let target): request.target = target
            case .failure(let error): failure = error
            }
        }
        if failure != nil { Interception.nameOnConnection(&request, authority: authority) }
        let exchange = Exchange(client: stream, env: env.exchanges, request: request)
        stream.exchange = exchange
        if let failure { return exchange.fail(failure) }
        exchange.start()
    }
}
