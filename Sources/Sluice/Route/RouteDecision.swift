/// Route: what one request may do and under which rule — the target must be an absolute http(s)
/// URL that policy allows; the first matching rule (or `defaults`) gives the exchange its
/// ``Rule``; TRACE and OPTIONS with `Max-Forwards: 0` are answered by the proxy itself.
struct RouteDecision {
    /// The target (set once the request is routable).
    var url: TargetURL?
    /// The rule book's entry for the request: its rule, whether it matched, its hooks (shared, not copied).
    private(set) var entry: RuleBook.Entry
    /// The rule that applies (the defaults when none matched).
    var rule: Rule { entry.rule }
    /// Whether a rule (not the defaults) matched.
    var matched: Bool { entry.matched }
    /// Null stripping asked for by the rule or by `Sluice-Strip-Nulls`.
    var stripMode: NullStripper.Mode?
    /// A request for the onboarding page (``Onboarding``): its path, answered by Sluice.
    var onboardingPath: String?

    /// What delivery does to a JSON body: the rule's patch, then the stripping in force.
    var transform: JSONTransform? { JSONTransform(strip: stripMode, patch: rule.rewrite?.responsePatch) }

    init(_ entry: RuleBook.Entry) { self.entry = entry }

    /// The rule's name when a rule matched.
    var matchedName: String? { matched ? rule.name : nil }

    /// Whether the rule brings hooks of its own.
    var hasHooks: Bool { !entry.hooks.isEmpty }

    /// The rule's hooks (its redirect policy, its gate, its will-cache hook).
    var hooks: UpstreamTask.Hooks { entry.hooks }

    /// The URL for keys, problems and logs.
    static func urlText(_ request: ProxyRequest) -> String {
        // A client's target is usually spelled as the normalised text already: shared, not made.
        if case .absolute(let url) = request.target {
            return url.isSpelled(request.rawTarget) ? request.rawTarget : url.description
        }
        return request.rawTarget
    }

    /// Routes a request: the decision, and what the exchange does next.
    static func decide(_ request: ProxyRequest, policy: Policy, rules book: RuleBook, localClient: Bool)
        -> (route: RouteDecision, answer: ExchangeMachine.Route)
    {
        var route = RouteDecision(book.defaultsEntry)
        let url: TargetURL
        switch request.target {
        case .absolute(let target):
            url = target
        case .origin(let path):
            // A browser that asks the proxy's own address (a phone not set up yet): the onboarding page.
            if Onboarding.resource(method: request.method, path: path) != nil {
                route.onboardingPath = path
                return (route, .answerLocally)
            }
            return (route, .refused(.badRequest(reason: .notAProxyRequest)))
        case .asterisk:
            return (route, .refused(.badRequest(reason: .notAProxyRequest)))
        case .authority:
            return (route, .refused(.badRequest(reason: .malformed("CONNECT is handled by the tunnel"))))
        }
        if Onboarding.names(url.host) {
            guard url.scheme == "http", Onboarding.resource(method: request.method, path: url.pathAndQuery) != nil
            else {
                if url.scheme == "http", Onboarding.resource(method: "GET", path: url.pathAndQuery) != nil {
                    return (
                        route,
                        .refused(
                            .badRequest(
                                reason: .onboardingMethodNotAllowed(method: request.method, url: url.description)))
                    )
                }
                return (route, .refused(.badRequest(reason: .onboardingNotFound(url.description))))
            }
            route.onboardingPath = url.pathAndQuery
            return (route, .answerLocally)
        }
        if let refusal = policy.refusal(for: url, localClient: localClient) { return (route, .refused(refusal)) }
        // Two proxies that are each other's parent pass a request back and forth, each adding its
        // Via member (RFC 9110 §7.6.3): past a depth no real chain of Sluices has, it is a loop.
        if request.headers.contains(.via), case let hops = Forwarding.ownHops(request.headers),
            hops >= Forwarding.loopHops
        {
            return (route, .refused(.forbidden(reason: .viaLoop(url.description, hops: hops))))
        }
        route.entry = book.resolve(method: request.method, host: url.host, path: url.pathAndQuery)
        route.stripMode = stripping(requested: request.headers[.sluiceStripNulls], rule: route.rule.stripJSONNulls)
        if request.headers.contains(.expect), case .unsupported(let member) = request.expectation {
            return (route, .refused(.badRequest(reason: .unsupportedExpectation(member))))
        }
        if request.method == "TRACE" || request.method == "OPTIONS", Forwarding.maxForwards(request) == 0 {
            return (route, .answerLocally)
        }
        route.url = url
        // Map local: the rule's own answer, before the cache or any origin.
        if route.rule.respond != nil { return (route, .answerLocally) }
        return (route, .forward)
    }

    /// The stripping mode for a request: `Sluice-Strip-Nulls: 1|true|all` asks, `0|false` declines, else the rule's.
    static func stripping(requested: String?, rule: NullStripper.Mode?) -> NullStripper.Mode? {
        guard let requested else { return rule }
        switch requested.trimmingOWS().lowercased() {
        case "1", "true", "yes", "on", "members": return rule == .all ? .all : .members
        case "all": return .all
        case "0", "false", "no", "off": return nil
        default: return rule
        }
    }
}
