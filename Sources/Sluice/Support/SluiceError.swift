/// Every failure a client can see, with its reason. Each reason maps to exactly one HTTP status,
/// one problem type and one log line (see ``Problem``).
public enum SluiceError: Error, Sendable, Equatable {
    /// The client's request was malformed or too large.
    case badRequest(reason: RequestFailureReason)
    /// The request is not allowed here.
    case forbidden(reason: ForbiddenReason)
    /// The upstream exchange failed.
    case upstreamFailed(reason: UpstreamFailureReason)
    /// The redirect policy stopped the exchange.
    case redirectFailed(reason: RedirectFailureReason)
    /// The proxy cannot take the request now.
    case unavailable(reason: UnavailableReason)
    /// The response failed its rule's `accept:` checks (enforce mode).
    case validationFailed(ValidationFailure)
    /// A response (502) or request (400) broke its rule's API contract (enforce mode).
    case contractViolation(ContractFailure)
    /// A rule's `faults:` answered this status instead of the origin (`status`), or cut the
    /// response (`reset`, after `afterBytes`; status 0).
    case injected(rule: String, status: Int, retryAfter: Int?)
    /// A person aborted the exchange at a breakpoint (502 `breakpoint-aborted`).
    case breakpointAborted(breakpoint: String)
    /// `replay.on_miss: fail`: the recording holds no response for the request (504).
    case replayMiss(ReplayMiss)
    /// `proxy_auth` is set and the request's `Proxy-Authorization` is missing or wrong (407,
    /// RFC 9110 §15.5.8).
    case proxyAuthenticationRequired
    /// `proxy_auth` is set, and a device asks for the onboarding page of the proxy itself (not
    /// through it) without the user and password, from where the page is not free (401: a browser
    /// answers it with a prompt, where a 407 reads as its own proxy's).
    case onboardingAuthenticationRequired

    /// Why a request was rejected while reading it (RFC 9112 framing and limits).
    public enum RequestFailureReason: Sendable, Equatable {
        /// Syntax error; the text says where.
        case malformed(String)
        /// The request line is longer than the limit (414).
        case requestLineTooLong(limit: Int)
        /// The header section is larger than the limit (431).
        case headersTooLarge(limit: Int)
        /// More header field lines than the limit (431).
        case tooManyFields(limit: Int)
        /// The body is larger than the limit (413).
        case bodyTooLarge(limit: Int)
        /// Origin-form (`GET /path`) sent to the proxy port.
        case notAProxyRequest
        /// A scheme other than http/https.
        case unsupportedScheme(String)
        /// A transfer coding other than chunked (501).
        case unsupportedTransferCoding(String)
        /// An HTTP version other than 1.0 / 1.1 (505).
        case unsupportedVersion(String)
        /// An `Expect` value other than `100-continue` (417, RFC 9110 §10.1.1).
        case unsupportedExpectation(String)
        /// The client stopped sending during the header section or body (408).
        case timedOut
        /// Inside an intercepted tunnel, a request for another authority than the CONNECT's (421).
        case misdirected(String)
        /// `sluice.internal` (the onboarding page) has no such path, or was asked for over `https`.
        case onboardingNotFound(String)
        /// A method other than GET or HEAD on one of the onboarding page's paths (405).
        case onboardingMethodNotAllowed(method: String, url: String)
    }

    /// Why a request was refused by policy.
    public enum ForbiddenReason: Sendable, Equatable {
        /// The client address is not in `allow_clients`.
        case clientNotAllowed(String)
        /// CONNECT to a port outside `connect_ports`.
        case connectPortNotAllowed(UInt16)
        /// The target is this proxy itself.
        case loopDetected(String)
        /// The request went through Sluices `hops` times already (its `Via`): proxies that are
        /// each other's parent.
        case viaLoop(String, hops: Int)
        /// The target address is refused by `deny_targets` or `loopback_targets` (named in `rule`).
        case targetDenied(target: String, rule: String)
    }

    /// Why the upstream exchange failed.
    public enum UpstreamFailureReason: Sendable, Equatable {
        /// The host name did not resolve.
        case resolveFailed(host: String)
        /// TCP connect failed or was refused.
        case connectFailed(host: String, detail: String)
        /// No response (or no progress) within the limit (504).
        case timedOut(detail: String)
        /// TLS failed (handshake).
        case tlsFailed(detail: String)
        /// The origin's certificate is not trusted: expired, unknown issuer, wrong name…
        case certificateInvalid(host: String, detail: String)
        /// The origin's public key matches none of the rule's pins.
        case pinMismatch(host: String)
        /// The origin closed or reset the connection or sent an invalid response.
        case badResponse(detail: String)
        /// A response handler cancelled the transfer at the headers.
        case cancelled(detail: String)
        /// The parent proxy could not be reached, refused the request or failed
        /// (`parent`: its ``ParentProxy/description``, never the credentials).
        case parentFailed(parent: String, detail: String)
        /// The parent proxy asked for credentials (407): none were configured, or they were refused.
        case parentAuthRequired(parent: String)
        /// A rule's `respond.file` could not be read (gone, unreadable, too large).
        case mapLocalFailed(rule: String, file: String, detail: String)
    }

    /// Why following a redirect failed.
    public enum RedirectFailureReason: Sendable, Equatable {
        /// More redirects than the limit.
        case tooManyRedirects(limit: Int)
        /// A URL was visited twice.
        case cycle(url: String)
        /// https → http, or a Location that is not http(s).
        case insecureOrInvalid(location: String)
        /// 307/308 would resend a request body that was already streamed upstream.
        case bodyNotReplayable(location: String)
        /// The policy is `refuse`.
        case refused(status: Int, location: String)
    }

    /// Why the proxy cannot serve now.
    public enum UnavailableReason: Sendable, Equatable {
        /// `limits.max_connections` reached.
        case tooManyConnections(limit: Int)
        /// The proxy is shutting down.
        case shuttingDown
        /// The stored response chosen to answer went away before any of it was sent (purged).
        case storedResponseGone
    }

    // MARK: - Error Booleans

    /// Whether the client's own request was at fault.
    public var isRequestError: Bool { if case .badRequest = self { true } else { false } }
    /// Whether the upstream exchange failed.
    public var isUpstreamError: Bool { if case .upstreamFailed = self { true } else { false } }
    /// Whether a redirect policy stopped the exchange.
    public var isRedirectError: Bool { if case .redirectFailed = self { true } else { false } }
    /// Whether a rule's `faults.reset` cut the response (the connection is reset, not closed).
    public var isInjectedReset: Bool { if case .injected(_, 0, _) = self { true } else { false } }
}
