import Contract

/// An `application/problem+json` body (RFC 9457) and its status: the one way errors reach clients.
public struct Problem: Sendable, Equatable {
    /// Where problem types live; `type` is this plus a slug.
    public static let typeBase = "https://sluice.dev/problems/"

    /// The HTTP status.
    public var status: Int
    /// The slug after ``typeBase`` (e.g. `"upstream-timeout"`).
    public var slug: String
    /// A short, fixed summary of the problem type.
    public var title: String
    /// What happened in this occurrence.
    public var detail: String
    /// Extra members (`url`, `rule`, …), in order.
    public var extras: [(String, ProblemValue)] = []

    /// Whether the connection must be closed after this response (framing is no longer trustworthy).
    public var closesConnection: Bool
    /// A status line that says why, for clients that show only that line (curl's `CONNECT tunnel
    /// failed, response 403`); `nil`: the standard phrase.
    public var reasonPhrase: String?
    /// `Retry-After` seconds (an injected 503 or 429 that asks for them).
    public var retryAfter: Int?
    /// `Proxy-Authenticate` for a 407 (the Basic scheme, RFC 7617).
    public var proxyAuthenticate: String?
    /// `WWW-Authenticate` for a 401 (the onboarding page asked of the proxy itself).
    public var wwwAuthenticate: String?
    /// `Allow` for a 405 (RFC 9110 §15.5.6).
    public var allow: String?

    public static func == (lhs: Problem, rhs: Problem) -> Bool {
        lhs.status == rhs.status && lhs.slug == rhs.slug && lhs.detail == rhs.detail
    }

    /// The full problem type URI.
    public var type: String { Problem.typeBase + slug }

    /// The JSON body.
    public var body: String {
        var members: [(String, ProblemValue)] = [
            ("type", .string(type)), ("title", .string(title)), ("status", .number(status)),
            ("detail", .string(detail)),
        ]
        members += extras
        return ProblemValue.object(members).json + "\n"
    }

    /// The problem for an error.
    public init(_ error: SluiceError, url: String? = nil) {
        (status, slug, title, detail, closesConnection) = Problem.describe(error)
        if case .validationFailed(let failure) = error {
            extras = failure.problemMembers(url: url)
        } else if case .contractViolation(let failure) = error {
            extras = failure.problemMembers(url: url)
        } else if let url {
            extras.append(("url", .string(url)))
        }
        if case .proxyAuthenticationRequired = error {
            proxyAuthenticate = #"Basic realm="sluice", charset="UTF-8""#
        }
        if case .onboardingAuthenticationRequired = error {
            wwwAuthenticate = #"Basic realm="sluice", charset="UTF-8""#
        }
        if case .badRequest(.onboardingMethodNotAllowed) = error { allow = "GET, HEAD" }
        if case .forbidden(.connectPortNotAllowed(let port)) = error {
            reasonPhrase = "Port \(port) not in connect_ports"
        }
        if case .replayMiss(let miss) = error {
            if let closest = miss.closest { extras.append(("closest", .string(closest))) }
            extras.append(("differences", .strings(miss.differences)))
        }
        if case .injected(let rule, _, let seconds) = error {
            retryAfter = seconds
            extras.append(("rule", .string(rule)))
            extras.append(("injected", .bool(true)))
        }
    }

    /// A problem from its parts.
    public init(status: Int, slug: String, title: String, detail: String, closesConnection: Bool = false) {
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.closesConnection = closesConnection
    }

    private static func describe(_ error: SluiceError) -> (Int, String, String, String, Bool) {
        switch error {
        case .replayMiss(let miss):
            let closest = miss.closest.map {
                "; the closest recorded request, \($0), differs in \(miss.differences.joined(separator: "; "))"
            }
            return (
                504, "replay-miss", "Not in the recording",
                "No recorded response matches \(miss.request)"
                    + (closest ?? " (\(miss.differences.joined(separator: "; ")))")
                    + ".", false
            )
        case .breakpointAborted(let name):
            return (
                502, "breakpoint-aborted", "Aborted at a breakpoint",
                "The exchange was paused at the breakpoint \(name) and aborted there.", false
            )
        case .injected(let rule, let status, _):
            guard status > 0 else {
                return (
                    502, "injected-reset", "Injected reset", "The rule \(rule) reset the connection (faults.reset).",
                    true
                )
            }
            return (
                status, "injected-fault", "Injected fault",
                "Sluice answered \(status) because the rule \(rule) injects it (faults.status); the origin was not asked.",
                false
            )
        case .validationFailed(let failure):
            return (502, failure.reasons[0].rawValue, failure.reasons[0].title, failure.detail, false)
        case .contractViolation(let failure):
            return (
                failure.direction == .response ? 502 : 400, "contract-violation",
                failure.direction == .response
                    ? "The response breaks the API contract" : "The request breaks the API contract",
                failure.detail, false
            )
        case .badRequest(let reason):
            switch reason {
            case .malformed(let what): return (400, "bad-request", "Malformed request", what, true)
            case .requestLineTooLong(let limit):
                return (
                    414, "request-line-too-long", "Request line too long", "The request line exceeds \(limit) bytes.",
                    true
                )
            case .headersTooLarge(let limit):
                return (
                    431, "headers-too-large", "Request header fields too large",
                    "The header section exceeds \(limit) bytes.", true
                )
            case .tooManyFields(let limit):
                return (
                    431, "headers-too-large", "Request header fields too large",
                    "The header section has more than \(limit) field lines.", true
                )
            case .bodyTooLarge(let limit):
                return (
                    413, "body-too-large", "Request body too large",
                    "The request body exceeds \(limit) bytes (limits.max_request_body).", true
                )
            case .notAProxyRequest:
                return (
                    400, "not-a-proxy-request", "This is a forward proxy",
                    "Sluice is an HTTP forward proxy: send absolute-form requests by configuring it as your proxy, at the address this request came to: curl -x http://HOST:PORT http://example.com/, or http_proxy=http://HOST:PORT (`sluice env` prints the lines for a terminal).",
                    false
                )
            case .unsupportedScheme(let scheme):
                return (
                    400, "unsupported-scheme", "Unsupported URL scheme",
                    "Only http and https URLs can be proxied, not \(scheme).", false
                )
            case .unsupportedTransferCoding(let coding):
                return (
                    501, "unsupported-transfer-coding", "Transfer coding not implemented",
                    "Transfer-Encoding \(coding) is not supported; use chunked.", true
                )
            case .unsupportedVersion(let version):
                return (
                    505, "http-version-not-supported", "HTTP version not supported",
                    "\(version) is not supported; use HTTP/1.1.", true
                )
            case .unsupportedExpectation(let value):
                return (
                    417, "expectation-failed", "Expectation failed",
                    "Expect: \(value) is not supported; only 100-continue is.", true
                )
            case .timedOut:
                return (408, "request-timeout", "Request timeout", "The client did not send the request in time.", true)
            case .misdirected(let detail):
                return (421, "misdirected-request", "Misdirected request", detail, false)
            case .onboardingNotFound(let url):
                return (
                    404, "onboarding-not-found", "Not part of the onboarding page",
                    "\(url) is not one of Sluice's onboarding pages; open http://sluice.internal/ (plain HTTP).", false
                )
            case .onboardingMethodNotAllowed(let method, let url):
                return (
                    405, "method-not-allowed", "Method not allowed",
                    "\(url) is a page to open (GET or HEAD), not to \(method).", false
                )
            }
        case .onboardingAuthenticationRequired:
            return (
                401, "authentication-required", "Authentication required",
                "This page of the proxy wants the proxy's user and password (proxy_auth), as the proxy does.", false
            )
        case .proxyAuthenticationRequired:
            return (
                407, "proxy-authentication-required", "Proxy authentication required",
                "This proxy wants a user and password (Proxy-Authorization: Basic); curl: --proxy-user USER:PASSWORD.",
                false
            )
        case .forbidden(let reason):
            switch reason {
            case .clientNotAllowed(let address):
                return (403, "client-not-allowed", "Client not allowed", "\(address) is not in allow_clients.", true)
            case .connectPortNotAllowed(let port):
                return (
                    403, "connect-port-not-allowed", "CONNECT port not allowed",
                    "CONNECT to port \(port) is not allowed: tunnels reach only the ports in connect_ports (80 and 443 unless configured). Add \(port) to connect_ports, or list HOST:\(port) under tls.intercept to have Sluice see inside.",
                    false
                )
            case .loopDetected(let target):
                return (403, "loop-detected", "Forwarding loop", "\(target) is this proxy itself.", false)
            case .viaLoop(let target, let hops):
                return (
                    403, "loop-detected", "Forwarding loop",
                    "The request for \(target) already went through Sluice \(hops) times (Via): proxies that are each other's parent?",
                    false
                )
            case .targetDenied(let target, let rule):
                return (
                    403, "target-not-allowed", "Target not allowed", "\(target) may not be reached (\(rule)).", false
                )
            }
        case .upstreamFailed(let reason):
            switch reason {
            case .resolveFailed(let host):
                return (
                    502, "upstream-dns-failure", "Upstream name not resolved", "Could not resolve host \(host).", false
                )
            case .connectFailed(let host, let detail):
                return (
                    502, "upstream-connect-failure", "Upstream connection failed",
                    "Could not connect to \(host): \(detail)", false
                )
            case .timedOut(let detail):
                return (504, "upstream-timeout", "Upstream timeout", detail, false)
            case .tlsFailed(let detail):
                return (502, "upstream-tls-failure", "Upstream TLS failure", detail, false)
            case .certificateInvalid(let host, let detail):
                return (
                    502, "upstream-certificate-invalid", "Upstream certificate invalid",
                    "The certificate of \(host) is not trusted: \(detail)", false
                )
            case .pinMismatch(let host):
                return (
                    502, "upstream-pin-mismatch", "Upstream public key not pinned",
                    "The public key of \(host) matches none of the rule's pins.", false
                )
            case .badResponse(let detail):
                return (502, "upstream-bad-response", "Invalid upstream response", detail, false)
            case .cancelled(let detail):
                return (502, "upstream-cancelled", "Upstream response refused", detail, false)
            case .parentFailed(let parent, let detail):
                return (
                    502, "upstream-proxy-failed", "Upstream proxy failed",
                    "The parent proxy \(parent) failed: \(detail)",
                    false
                )
            case .mapLocalFailed(let rule, let file, let detail):
                return (
                    502, "map-local-failed", "Map local failed",
                    "The rule \(rule) answers with the file \(file), which \(detail).", false
                )
            case .parentAuthRequired(let parent):
                return (
                    502, "upstream-proxy-auth-required", "Upstream proxy wants credentials",
                    "The parent proxy \(parent) answered 407: it needs credentials (upstream.proxy with user:password@) or refused the ones given.",
                    false
                )
            }
        case .redirectFailed(let reason):
            switch reason {
            case .tooManyRedirects(let limit):
                return (502, "too-many-redirects", "Too many redirects", "More than \(limit) redirects.", false)
            case .cycle(let url):
                return (502, "redirect-cycle", "Redirect cycle", "The redirect to \(url) was already visited.", false)
            case .insecureOrInvalid(let location):
                return (
                    502, "redirect-not-followed", "Redirect not followed",
                    "Refused to follow the redirect to \(location) (downgrade or unsupported target).", false
                )
            case .bodyNotReplayable(let location):
                return (
                    502, "redirect-not-followed", "Redirect not followed",
                    "The redirect to \(location) would resend a request body that was already streamed.", false
                )
            case .refused(let status, let location):
                return (
                    502, "redirect-refused", "Redirect refused",
                    "The origin answered \(status) to \(location); the redirect policy is refuse.", false
                )
            }
        case .unavailable(let reason):
            switch reason {
            case .tooManyConnections(let limit):
                return (
                    503, "too-many-connections", "Too many connections",
                    "The proxy serves at most \(limit) connections.", true
                )
            case .shuttingDown:
                return (503, "shutting-down", "Shutting down", "The proxy is shutting down.", true)
            case .storedResponseGone:
                return (
                    503, "stored-response-gone", "Stored response gone",
                    "The stored response chosen to answer was purged before it was sent; ask again.", false
                )
            }
        }
    }
}

/// A problem member's value.
public typealias ProblemValue = JSONValue
