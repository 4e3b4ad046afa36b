import EventIO

/// The driver's way upstream: the request as forwarded (a rule's mapping, rewrite, trust and
/// parent), its contract check, the session's task; background refreshes; RFC 9111 admission.
extension Exchange {
    /// The request as a rule forwards it.
    func makeForwardRequest() -> UpstreamRequest {
        var upstream = Forwarding.upstreamRequest(for: request, url: route.url!)
        if let remote = route.rule.upstream {
            // Map remote: another origin; the cache key, logs and problems keep the client's URL.
            let original = upstream.url
            upstream.url = remote.map(original)
            if remote.keepsHost { upstream.headers.append(name: "Host", value: original.authority, code: .host) }
            notes.mapping = remote.label
        }
        if let rewrite = route.rule.rewrite {
            rewrite.request.apply(to: &upstream.headers)
            if !rewrite.response.isEmpty { upstream.responseRewrite = rewrite.response }
        }
        upstream.fromLocalClient = client.isLocal
        upstream.trust = route.rule.tls
        upstream.parent = env.parents.parent(
            host: upstream.url.host, https: upstream.url.scheme == "https", rule: route.rule.proxy)
        return upstream
    }

    func refreshInBackground(_ entry: CacheStore.Entry, others: [CacheStore.Entry]) {
        guard let cache = env.cache, env.refreshes[entry.key] == nil else { return }
        let refresh = BackgroundRefresh(
            env: env, admission: admission(cache: cache, requestTime: env.clock()), entry: entry, others: others)
        env.refreshes[entry.key] = refresh
        refresh.start(forwardRequest, hooks: fetchHooks())
    }

    /// RFC 9111 §3 admission for this exchange's response, whose request went upstream at
    /// `requestTime` (§4.2.3: the time the origin took counts in the stored response's age).
    func admission(cache: any CacheTier, requestTime: Double) -> CacheAdmission {
        var admission = CacheAdmission(
            cache: cache, settings: env.cacheSettings, key: machine.context.url, url: route.url!,
            method: request.method, request: request.headers, requestTime: requestTime, entry: route.entry)
        admission.carriesContent = request.bodyFraming != .none && request.bodyFraming != .length(0)
        return admission
    }

    // MARK: - Fetch

    func fetch(conditions: [HTTPFields.Field]) {
        var upstream = forwardRequest
        // (Looked at first: iterating an array retains it, and the shared empty one's count is
        // kept the slow way.)
        if !conditions.isEmpty { for condition in conditions { upstream.headers.set(line: condition) } }
        // A request breakpoint (once per exchange), before the origin or the recording answers.
        if env.breakpoints.pausesRequests, notes.breakpoint == nil, let url = route.url {
            // Matched on the client's request, as rules are.
            let points = env.breakpoints.candidates(
                for: .request, method: request.method, host: url.host, path: url.pathAndQuery, fields: request.headers)
            if !points.isEmpty {
                switch replay {
                case nil: return readForBreakpoint(points, upstream)
                // Replaying: the body was read to match the recording already.
                case .answering(_, let held), .forwarding(let held, _):
                    return bodyRead(held, whole: body.isComplete, points: points, upstream: upstream)
                case .gathering: break
                }
            }
        }
        send(upstream)
    }

    /// Sends the request upstream: its contract check first, then the session's task. A client
    /// that expects `100 Continue` and has not had one (its body is unread: nothing was held for
    /// a replay or a breakpoint) has its expectation forwarded, so the origin may refuse the
    /// upload before it is sent (RFC 9110 §10.1.1); not while it is recorded (a recording keeps
    /// the body the client sent, which a refusal would leave unread: its replay would not match).
    func send(_ upstream: UpstreamRequest) {
        var upstream = upstream
        if !body.isComplete, body.expectation == .unanswered, replay == nil, capture?.requestTap == nil,
            request.getsContinue,
            env.session.settings.continueTimeoutMilliseconds > 0
        {
            upstream.expectsContinue = true
            body.forwardExpectation()
        }
        outgoing.sent = upstream
        if let failure = checkRequestHead(upstream) {
            // Nothing reaches the origin: the exchange ends as a failed fetch would.
            return run(.upstreamCompleted(.contractViolation(failure), ownError: nil, now: env.clock()))
        }
        var replayed: ReplayedResponse?
        if case .answering(let response, _) = replay { replayed = response }
        let task = env.session.makeTask(upstream, delegate: self, hooks: fetchHooks(), replaying: replayed)
        self.task = task
        task.start()
    }

    /// The request's contract check (`requests: report | enforce`), made once whether the answer
    /// comes from the origin or the cache: the failure when its head breaks an enforced promise;
    /// a request without a body has its verdict now.
    func checkRequestHead(_ upstream: UpstreamRequest) -> ContractFailure? {
        guard route.rule.contract?.requests ?? .off != .off, outgoing.contract == nil,
            let check = ContractRun.request(upstream, rule: route.rule, limit: env.transformLimit)
        else { return nil }
        outgoing.contract = check
        if check.headFailsEnforced {
            env.stats.contractChecked += 1
            env.stats.contractFailed += 1
            return check.headFailure()
        }
        if case .none = upstream.body, check.validatesBody || !check.headViolations.isEmpty {
            requestVerdict(check.finish(), of: check)
        }
        return nil
    }

    /// The proxy's own hooks, then the rule's; the session adds its own where both have none.
    func fetchHooks() -> UpstreamTask.Hooks { env.hooks.merging(route.hooks) }
}
