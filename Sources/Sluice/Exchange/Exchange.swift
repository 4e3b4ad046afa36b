import EventIO

/// The driver of one client request: it feeds events to its ``ExchangeMachine`` and carries out
/// the actions it returns (``ExchangePhase`` reads as the whole path). Body bytes stay here, on
/// their copy-avoiding way between libcurl, the cache tiers and the client.
final class Exchange {
    unowned let client: any ExchangeHost
    let env: ExchangeEnvironment
    let request: ProxyRequest
    let startTime = EventLoop.monotonicNanoseconds()
    /// Its number among the proxy's exchanges (the page's and `/events`' `id`).
    let id: Int
    /// What it keeps for a watcher, when one looks (``ExchangeWatcher``), or for the recording.
    var capture: ExchangeCapture?
    /// Where answering from a recording stands (`replay:`).
    var replay: ReplayStep?
    /// The rule's faults as drawn before it started (an upgrade's handshake that got a status or
    /// a hold: answered here rather than switched); drawn at its start otherwise.
    var drawnFaults: FaultPlan?
    // The driver's state is touched only from its own loop thread, one event at a time: the
    // dynamic exclusivity checks on these hot properties cost a few per cent of pass-through.
    @exclusivity(unchecked) private(set) var machine: ExchangeMachine
    /// What Route decided.
    let route: RouteDecision
    /// What Route answered: the machine's first event.
    private let routed: ExchangeMachine.Route
    /// The response on its way to the client, at the end of its delivery stages.
    let output: ResponseOutput
    /// What happens to the response on its way (``DeliveryStage``s), when anything does.
    @exclusivity(unchecked) var stages = ExchangeStages()
    /// What the record and the response head say about this exchange.
    @exclusivity(unchecked) var notes = ExchangeNotes()
    @exclusivity(unchecked) var body: RequestBody
    /// The request on its way upstream: as forwarded, as sent, its contract check, its pace.
    @exclusivity(unchecked) var outgoing = Outgoing()
    /// The fetch's task; one it lets go of is detached first (its delegate reference is unowned).
    var task: UpstreamTask? {
        didSet { if oldValue !== task { oldValue?.detach() } }
    }
    /// The entry being written for this response.
    var writer: CacheWriter?
    /// The stored body being read out: of a stored entry, or of the one the awaited fetch writes.
    var storedBody: StoredResponse.Reading?
    /// What the exchange waits for on its timer (a fault, a collapse leader, the paced upload).
    lazy var waiting = ExchangeWait(loop: env.loop) { [weak self] reason in self?.waited(reason) }
    /// Whether an event is being handled, and what waits for its turn.
    private var turn = Turn.idle

    /// The request upstream, from the exchange's start to its end.
    struct Outgoing {
        /// As it would be forwarded (made when first needed: a hit may never need it).
        var forward: UpstreamRequest?
        /// As sent upstream (with a revalidation's conditions).
        var sent: UpstreamRequest?
        /// Its contract check (`contract.requests: report | enforce`).
        var contract: ContractRun?
        /// `faults.bandwidth` for its body.
        var pace: Pace?
    }

    /// The request as it would be forwarded (built when first needed: a hit may never need it).
    var forwardRequest: UpstreamRequest {
        if let forward = outgoing.forward { return forward }
        let forward = makeForwardRequest()
        outgoing.forward = forward
        return forward
    }

    init(client: any ExchangeHost, env: ExchangeEnvironment, request: ProxyRequest) {
        self.client = client
        self.env = env
        self.request = request
        id = env.nextExchangeID()
        body = RequestBody(framing: request.bodyFraming, limits: env.parserLimits)
        output = ResponseOutput(stream: client.stream, keepAlive: request.wantsKeepAlive && !env.isShuttingDown)
        (route, routed) = RouteDecision.decide(
            request, policy: env.policy, rules: env.rules, localClient: client.isLocal)
        machine = ExchangeMachine(
            .init(
                request: request, url: RouteDecision.urlText(request), transform: nil,
                transformLimit: env.transformLimit,
                cache: env.machineCache, acceptance: route.rule.accept, ruleName: route.rule.name,
                checksContract: Self.hasContract(route.rule)))
    }

    /// Whether `rule` checks a contract, asked without copying it out (`contract != nil` makes an
    /// outlined copy of the optional struct: about 40 instructions on every request).
    static func hasContract(_ rule: Rule) -> Bool {
        if case .none = rule.contract { return false }
        return true
    }

    /// A task still running (the session holds it) no longer points back here.
    deinit { task?.detach() }

    /// Lets the machine run the routed request.
    func start() {
        if env.recorder != nil { tapForRecording() }
        if let watcher = env.watcher, watcher.isWatching {
            if capture == nil { capture = ExchangeCapture(request: request.headers, bodyRoom: watcher.bodyRoom) }
            watcher.exchangeDidStart(self)
        }
        let plan = drawnFaults ?? (route.url != nil ? env.faults.plan(for: route.entry) : nil)
        if plan != nil || capture != nil { composeWireStages(faults: plan) }
        if let plan { return inject(plan) }
        proceed()
    }

    /// Routes the request on (after any injected delay).
    func proceed(_ answer: ExchangeMachine.Route? = nil) {
        if answer == nil, replay == nil, env.replayBook != nil, route.url != nil, case .forward = routed {
            return beginReplay()
        }
        run(.routed(answer ?? routed, transform: route.transform, now: env.clock()))
    }

    /// Where the driver's loop stands (Varnish's `CNT_Request`: one loop kicks the request along).
    enum Turn {
        /// No event is being handled.
        case idle
        /// The loop is carrying out an event's actions; the events they raised wait, in order.
        case draining([ExchangeMachine.Event])
    }

    /// Feeds one event to the machine and carries out its actions in order; events raised while
    /// they run are queued and handled after them by the same loop, so the machine never sees an
    /// event in the middle of another's actions and `run` is never re-entered.
    ///
    /// The two arrays it works with (the actions, the queue) are the environment's, taken for
    /// the turn and given back emptied with their room: no exchange allocates either. One that
    /// runs inside another's actions finds them taken and makes its own.
    func run(_ event: consuming ExchangeMachine.Event) {
        if case .draining(var waiting) = turn {
            turn = .idle  // the array's only owner is `waiting` now: appended in place
            waiting.append(event)
            turn = .draining(waiting)
            return
        }
        turn = .draining(env.spareEvents.take() ?? [])
        var actions = env.spareActions.take() ?? []
        machine.handle(event, into: &actions)
        performAll(&actions)
        while case .draining(var waiting) = turn, !waiting.isEmpty {
            turn = .idle
            // (The usual queue has one event: taken from the end, without the general shift.)
            let next = waiting.count == 1 ? waiting.removeLast() : waiting.removeFirst()
            turn = .draining(waiting)
            machine.handle(next, into: &actions)
            performAll(&actions)
        }
        env.spareActions = actions
        guard case .draining(let emptied) = turn else { return }
        turn = .idle
        env.spareEvents = emptied
    }

    /// Whether the exchange ended, or its end waits for its turn in the loop.
    var hasFinished: Bool {
        if machine.isDone { return true }
        guard case .draining(let waiting) = turn else { return false }
        return waiting.contains { if case .finished = $0 { true } else { false } }
    }

    /// Carries out actions in order and leaves `actions` empty with its room. Each is moved out,
    /// not copied (a copy retains every payload and goes through the enum's outlined copy): the
    /// array (the driver's own, unique) is reversed, which only moves the elements, and taken
    /// from its end.
    private func performAll(_ actions: inout [ExchangeMachine.Action]) {
        if actions.count > 1 { actions.reverse() }
        while let action = actions.popLast() { perform(action) }
    }

    private func perform(_ action: consuming ExchangeMachine.Action) {
        switch action {
        case .fail(let error): fail(error)
        case .answerLocally: answerLocally()
        case .setCacheStatus(let status): notes.cacheStatus = status
        case .lookUp(let key): lookUp(key)
        case .wait(let key): wait(for: key)
        case .leave(let key):
            if case .collapse = waiting.reason { waiting.cancel() }
            env.collapser.leave(key, self)
        case .lead(let key): env.collapser.lead(key)
        case .release(let key): env.collapser.release(key, loop: env.loop)
        case .shareWhileWriting(let key):
            // Only a body of known length (within the entry limit, or the store was refused) is
            // streamed to waiters as it is written: one of unknown length may outgrow the limit
            // and be given up while healthy, so its waiters wait for the release and look again.
            if let writer, writer.expectedLength != nil { env.collapser.share(key, writer: writer, loop: env.loop) }
        case .serveWhileWritten(let writer, let answer): serveWhileWritten(writer, as: answer)
        case .rememberUncacheable(let key):
            let now = env.clock()
            env.collapser.rememberUncacheable(
                key, until: now + Double(env.cacheSettings.uncacheableTTL) / 1000, now: now)
        case .forgetUncacheable(let key): env.collapser.forgetUncacheable(key)
        case .countMiss: env.cache?.countMiss()
        case .fetch(let conditions): fetch(conditions: conditions)
        case .refreshInBackground(let entry, let others): refreshInBackground(entry, others: others)
        case .serve(let entry, let age, let answer): serve(entry, age: age, as: answer)
        case .refreshStored(let entry): env.cache?.refresh(entry)
        case .invalidate(let key): env.cache?.invalidate(key: key)
        case .deliverHead(let head, let plan): deliverHead(head, plan: plan, fromCache: false)
        case .commitStore:
            // An enforced contract's broken promise is never stored; a reported one is, with its
            // verdict (`contract report --cache` lists it).
            if let contract = stages.contract {
                let outcome = contract.finish()
                if case .failed(let failure) = outcome, contract.enforces(failure) {
                    writer.take()?.abandon(now: env.clock())
                } else {
                    writer?.contract = ContractRun.stored(outcome)
                }
            }
            if let writer = writer.take(), writer.commit(decision: task?.cachingDecision ?? .notAsked, now: env.clock())
            {
                env.stats.cacheStores += 1
                if !writer.keptFromTier, !writer.key.hasSuffix(CacheStore.piecesSuffix) {
                    env.cache?.share(key: writer.key, variant: writer.variant, now: env.clock())
                }
            }
        case .abandonStore:
            stages.response?.stage(TransformStage.self)?.abandon()
            writer.take()?.abandon(now: env.clock())
        case .endResponse: deliverEnd()
        case .cancelUpstream(let error):
            task?.cancel(error)
            task = nil
        case .stopStoredBody: stopStoredBody()
        case .finishClosing: finish(closeConnection: true)
        case .detachClient: detachClient()
        case .storeOnly(let head): store(head)
        case .endOrphan: env.collapser.disown(self)
        }
    }

    // MARK: - Lookup and collapse

    private func lookUp(_ key: String) {
        // A key just found not storable (hit-for-miss) is not asked of the shared tier either:
        // pass-through traffic never waits on it.
        let remote = env.cache?.hasRemoteTier == true && !env.collapser.isUncacheable(key, now: env.clock())
        guard let cache = env.cache, let candidates = cache.lookup(key, for: self, remote: remote) else { return }
        cacheTier(didFind: candidates)
    }

    private func wait(for key: String) {
        _ = env.collapser.join(key, self)
        // Like nginx's proxy_cache_lock_timeout: a fetch held up by its own slow client does not
        // hold the waiters up for longer than this; they then fetch for themselves.
        waiting.start(.collapse(key: key), milliseconds: max(1, env.cacheSettings.collapseTimeout))
        // The leader may already be writing an entry to share: offered at the next loop turn.
        if let writer = env.collapser.liveWriter(key) {
            env.loop.callSoon { [weak self] in self?.collapseMayStream(writer) }
        }
    }

    // MARK: - Client events

    /// More client input arrived (request body bytes).
    func clientDataAvailable() {
        guard body.takeWaiting() else { return }
        if case .gathering = replay { return gatherRequestBody() }
        task?.resume()
    }

    /// The client's output drained below its low-water mark.
    func clientDrained() {
        guard output.takeDrain() else { return }
        // A stage releasing a body it held goes first; the source waits until it is through (and
        // the response may be complete then).
        if let chain = stages.response {
            guard chain.drained() else { return }
            finishIfDone()
            if hasFinished { return }
        }
        if storedBody != nil { return pumpStoredBody() }
        task?.resume()
    }

    /// The client went away or stalled.
    func clientFailed(_ reason: SluiceError?) {
        notes.error = notes.error ?? reason
        let othersWait = machine.leadingKey.map(env.collapser.hasWaiters) ?? false
        run(.clientGone(reason, othersWait: othersWait))
    }

    /// Sends a head still held back for the body (none came in this loop turn).
    func sendHeldHead() {
        guard !hasFinished else { return }
        output.flushHeldHead()
    }

    // MARK: - Answers without an origin

    /// Answers with a problem (or, after the head was sent, cuts the connection).
    func fail(_ failure: SluiceError) {
        notes.error = failure
        // Nothing a stage holds or paces goes out after this answer (or cut).
        stages.response?.abandon()
        stages.wire?.abandon()
        output.dropHeldHead()
        if output.headSent { return finish(closeConnection: true) }
        let problem = Problem(failure, url: machine.context.url)
        if problem.closesConnection || !body.isComplete { output.keepAlive = false }
        // A problem is never stored: what was being stored of the origin's answer is abandoned
        // (RFC 9211 §2.6: `stored` only for what the cache keeps).
        if notes.cacheStatus?.stored == true {
            notes.cacheStatus?.stored = false
            notes.cacheStatus?.detail = "rejected"
        }
        // A gRPC call reads its status from `grpc-status`: the problem goes in gRPC's form.
        if client is HTTP2Stream, GRPCAnswer.isCall(request) {
            answerWhole(GRPCAnswer.head(problem, date: env.date.now), body: [], bodyBytes: 0)
            return finish(closeConnection: !output.keepAlive)
        }
        let headOnly = request.method == "HEAD"
        // The verdicts so far stay on the head (a request's broken contract under `report`), with
        // the broken contract that made this answer, as on any other head.
        var marks = notes.marks
        if case .contractViolation(let broken) = failure {
            marks.append(ContractRun.mark(.failed(broken), rule: broken.rule, direction: broken.direction))
        }
        answerWhole(
            ResponseWriter.problemHead(
                problem, keepAlive: output.keepAlive, date: env.date.now, cacheStatus: notes.cacheStatus,
                marks: marks),
            body: headOnly ? [] : Array(problem.body.utf8), bodyBytes: headOnly ? 0 : Int64(problem.body.utf8.count))
        finish(closeConnection: !output.keepAlive)
    }

    private func answerLocally() {
        if let path = route.onboardingPath { return answerOnboarding(path) }
        if let answer = route.rule.respond { return mapLocal(answer) }
        let (head, text) = LocalAnswer.maxForwardsZero(
            request, date: env.date.now, keepAlive: output.keepAlive)
        answerWhole(head, body: Array(text.utf8), bodyBytes: Int64(text.utf8.count))
        finishIfDone()
    }
}

extension Optional {
    /// The value, leaving `nil` behind.
    mutating func take() -> Wrapped? {
        defer { self = nil }
        return self
    }
}
