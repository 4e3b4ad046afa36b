/// RFC 5861 `stale-while-revalidate`: the client got the stale entry at once; this one request
/// refreshes it behind its back. A 304 updates the stored head (and those of the key's other
/// variants with its strong validator), a new cacheable response replaces the entry, an error or
/// an uncacheable answer leaves the entry as it was.
final class BackgroundRefresh: TaskDelegate {
    unowned let env: ExchangeEnvironment
    let admission: CacheAdmission
    let entry: CacheStore.Entry
    /// The key's other stored variants.
    let others: [CacheStore.Entry]
    /// Detached when let go of (its delegate reference is unowned).
    private var task: UpstreamTask? {
        didSet { if oldValue !== task { oldValue?.detach() } }
    }
    private var writer: CacheWriter?
    private var notModified: ResponseHead?
    /// The request and hooks, for the plain request a 304 about another representation calls for.
    private var sent: (request: UpstreamRequest, hooks: UpstreamTask.Hooks)?

    init(env: ExchangeEnvironment, admission: CacheAdmission, entry: CacheStore.Entry, others: [CacheStore.Entry] = [])
    {
        self.env = env
        self.admission = admission
        self.entry = entry
        self.others = others
    }

    deinit { task?.detach() }

    /// Sends the conditional request (the client's request, with the entry's validators instead of its own).
    func start(_ upstream: UpstreamRequest, hooks: UpstreamTask.Hooks) {
        var request = upstream
        for name in ResponseValidator.conditionalFields { request.headers.remove(name) }
        sent = (request, hooks)
        for condition in Revalidation.conditions(for: entry) { request.headers.set(line: condition) }
        let task = env.session.makeTask(request, delegate: self, hooks: hooks)
        self.task = task
        task.start()
    }

    /// Nobody waits for a background refresh: interim responses go nowhere.
    func task(_ task: UpstreamTask, didReceiveInterim response: ResponseHead) {}

    func task(_ task: UpstreamTask, didReceive response: ResponseHead) {
        if response.status == 304 {
            notModified = response
            return
        }
        var failed = false
        if let accept = admission.entry.rule.accept {
            failed =
                ResponseValidator.validate(
                    response, request: task.currentRequest, acceptance: accept, rule: admission.entry.rule.name) != nil
        }
        if case .writing(let writer, _) = admission.begin(response, validationFailed: failed, now: env.clock()) {
            self.writer = writer
        }
    }

    func task(_ task: UpstreamTask, didReceive bytes: UnsafeRawBufferPointer) -> Bool {
        if let writer, !writer.append(bytes, now: env.clock()) { self.writer = nil }
        return true
    }

    func task(_ task: UpstreamTask, fillBody buffer: UnsafeMutableRawBufferPointer) -> BodyChunk { .end }

    func task(_ task: UpstreamTask, didCompleteWith error: SluiceError?) {
        // A 304 about another representation (RFC 9111 §4.3.4) updates nothing: asked once more,
        // plainly, its answer may replace the entry (the refresh stays in `env.refreshes` meanwhile).
        if error == nil, let answer = notModified,
            !Revalidation.selects(answer, entry) || Revalidation.changesVary(answer, entry),
            let (request, hooks) = sent.take()
        {
            notModified = nil
            let again = env.session.makeTask(request, delegate: self, hooks: hooks)
            self.task = again
            return again.start()
        }
        defer {
            writer = nil
            self.task = nil
            env.refreshes[admission.key] = nil
        }
        if error != nil {
            writer?.abort()
        } else if let notModified {
            let settings = env.cacheSettings
            for stored in [entry] + Revalidation.alsoSelected(by: notModified, among: others) {
                let freshened = Revalidation.freshened(
                    stored, by: notModified, requestTime: admission.requestTime, now: env.clock(),
                    shared: settings.shared, storesSetCookie: settings.storesSetCookie,
                    authorized: admission.request.contains(.authorization), facts: settings.facts)
                if let kept = freshened.kept { admission.cache.refresh(kept) }
            }
        } else if let writer, writer.commit(decision: task.cachingDecision, now: env.clock()) {
            env.stats.cacheStores += 1
        }
    }
}
