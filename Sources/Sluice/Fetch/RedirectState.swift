/// Where a followed redirect chain has been: limit, cycle detection and the request rewrite of
/// RFC 9110 §15.4. A pure value; ``UpstreamTask`` keeps one per exchange.
public struct RedirectState: Sendable, Equatable {
    /// Most redirects to follow.
    public let limit: Int
    /// Where the chain started.
    public let start: TargetURL
    /// URLs reached by followed redirects (normalised), in order.
    public private(set) var followed: [String] = []

    /// A chain starting at `url` (nothing is computed until a redirect arrives).
    public init(limit: Int, start url: TargetURL) {
        self.limit = limit
        start = url
    }

    /// URLs requested so far (normalised), the first one included.
    public var visited: [String] { [start.description] + followed }

    /// Number of redirects followed.
    public var count: Int { followed.count }

    /// The request to send for `response` (a 3xx with Location) to `request`, recording the visit;
    /// or the reason not to follow it.
    public mutating func next(after request: UpstreamRequest, response: ResponseHead, bodyWasSent: Bool) -> Result<
        UpstreamRequest, SluiceError
    > {
        let location = response.headers[.location] ?? ""
        guard let target = RedirectState.resolve(location, against: request.url) else {
            return .failure(.redirectFailed(reason: .insecureOrInvalid(location: location)))
        }
        if request.url.scheme == "https", target.scheme == "http" {
            return .failure(.redirectFailed(reason: .insecureOrInvalid(location: target.description)))
        }
        guard count < limit else { return .failure(.redirectFailed(reason: .tooManyRedirects(limit: limit))) }
        guard target != start, !followed.contains(target.description) else {
            return .failure(.redirectFailed(reason: .cycle(url: target.description)))
        }
        var next = RedirectState.rewrite(request, status: response.status, to: target)
        if next.body != .none, bodyWasSent {
            // 307/308 keep the body, but it was streamed and is gone: the client must resend it.
            return .failure(.redirectFailed(reason: .bodyNotReplayable(location: target.description)))
        }
        if next.method == request.method, next.body != .none { next.body = request.body }
        followed.append(target.description)
        return .success(next)
    }

    /// RFC 9110 §15.4: 303 → GET (except HEAD); 301/302 with POST → GET; otherwise method and body
    /// stay. Across origins, credentials (a client certificate too) and cookies are not sent on.
    public static func rewrite(_ request: UpstreamRequest, status: Int, to target: TargetURL) -> UpstreamRequest {
        var next = request
        next.url = target
        let becomesGET =
            (status == 303 && request.method != "HEAD")
            || ((status == 301 || status == 302) && request.method == "POST")
        if becomesGET {
            next.method = "GET"
            next.body = .none
            next.expectsContinue = false
            next.headers.remove(keys: [
                "content-type", "content-encoding", "content-language", "content-location", "digest",
            ])
        }
        if target.origin != request.url.origin {
            next.headers.remove(keys: ["authorization", "cookie", "proxy-authorization", "origin"])
            // A rule's client certificate is that origin's credential too: never shown to another.
            next.trust?.clientCertificate = nil
            next.trust?.clientKey = nil
        }
        return next
    }

    /// Resolves a Location value (absolute, scheme-relative, absolute-path or relative) against `base`.
    public static func resolve(_ location: String, against base: TargetURL) -> TargetURL? {
        let trimmed = location.trimmingOWS()
        guard !trimmed.isEmpty else { return nil }
        // Reference resolution removes dot-segments from every form (RFC 3986 §5.2.2), absolute ones too.
        func normalised(_ url: TargetURL?) -> TargetURL? {
            guard var url else { return nil }
            url.pathAndQuery = normalise(url.pathAndQuery)
            return url
        }
        if trimmed.hasPrefix("//") { return normalised(TargetURL(base.scheme + ":" + trimmed)) }
        if let colon = trimmed.firstIndex(of: ":"), !trimmed[..<colon].contains("/"), !trimmed[..<colon].contains("?") {
            return normalised(TargetURL(trimmed))
        }
        var path = trimmed
        if let hash = path.firstIndex(of: "#") { path = String(path[..<hash]) }
        if path.hasPrefix("/") {
            return TargetURL(scheme: base.scheme, host: base.host, port: base.port, pathAndQuery: normalise(path))
        }
        let basePath = base.pathAndQuery.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        if path.hasPrefix("?") {
            return TargetURL(
                scheme: base.scheme, host: base.host, port: base.port, pathAndQuery: String(basePath) + path)
        }
        let directory = basePath.lastIndex(of: "/").map { basePath[...$0] } ?? "/"
        return TargetURL(
            scheme: base.scheme, host: base.host, port: base.port, pathAndQuery: normalise(directory + path))
    }

    /// Removes `.` and `..` segments (RFC 3986 §5.2.4).
    static func normalise(_ pathAndQuery: String) -> String {
        let split = pathAndQuery.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var output: [Substring] = []
        let segments = split[0].split(separator: "/", omittingEmptySubsequences: false)
        for (index, segment) in segments.enumerated() {
            if segment == "." { if index == segments.count - 1 { output.append("") }; continue }
            if segment == ".." {
                if output.count > 1 { output.removeLast() }
                if index == segments.count - 1 { output.append("") }
                continue
            }
            output.append(segment)
        }
        var path = output.joined(separator: "/")
        if !path.hasPrefix("/") { path = "/" + path }
        return split.count > 1 ? path + "?" + split[1] : path
    }
}
