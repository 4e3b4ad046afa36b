import EventIO
import Logging
import TLS

#if canImport(Glibc)
    import Glibc
#endif

/// Everything an exchange uses besides its client: handed to it whole, so that another kind of
/// client connection (or a test) can run exchanges without a ``ProxyServer``. One per proxy,
/// loop-confined; the reloadable parts (rules, the transform limit) change in place.
final class ExchangeEnvironment {
    /// The loop everything runs on.
    let loop: EventLoop
    /// Wall-clock seconds since the epoch; tests replace it to age the cache without sleeping.
    var clock: () -> Double = {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
    /// The upstream session engine.
    let session: Session
    /// Per-exchange hooks (the session's own are consulted by the session).
    let hooks: UpstreamTask.Hooks
    /// The cache tiers; `nil` when there is no cache.
    let cache: (any CacheTier)?
    /// The cache settings in force.
    let cacheSettings: Configuration.Cache
    /// What the exchange machine needs of them; `nil` without a cache.
    let machineCache: ExchangeMachine.CacheRules?
    /// Collapsed forwarding: who fetches which key, who waits.
    let collapser = Collapser()
    /// Storage the exchanges' drivers reuse (``Exchange/run(_:)``): the actions of an event and
    /// the events raised while they run, kept empty with their room between turns (`nil` while
    /// taken: moved out and back, never copied, and the shared empty array's slow reference
    /// counting is not touched).
    var spareActions: [ExchangeMachine.Action]? = []
    var spareEvents: [ExchangeMachine.Event]? = []
    /// `stale-while-revalidate` refreshes running, by key (one per key).
    var refreshes: [String: BackgroundRefresh] = [:]
    /// The rules in force.
    var rules: RuleBook
    /// The rules' faults as they run: dice, switches, counts.
    let faults = FaultBook()
    /// Access and target policy.
    let policy: Policy
    /// Counters.
    let stats: Stats
    /// `Date` values, formatted once a second.
    let date = HTTPDate()
    let logger: Logger
    /// Request parsing limits (the request body's among them).
    let parserLimits: RequestParser.Limits
    /// `limits.max_transform_body`.
    var transformLimit: Int
    /// `limits.max_held_bodies`: what holding stages take their bytes from.
    let heldBodies: HeldBodyBudget
    /// Shutdown has begun: responses say `Connection: close`.
    var isShuttingDown = false
    /// The parent proxies in force (`upstream.proxy`, `no_proxy`), resolved at start.
    var parents = ParentRouting()
    /// TLS to `https://` parents (blind tunnels through them; libcurl has its own), made at start
    /// when one is configured.
    var parentTLS: TLSClientContext?
    /// `record:`: the recording exchanges are written into.
    var recorder: Recorder?
    /// `replay:`: the recording requests are answered from.
    var replayBook: ReplayBook?
    /// Who watches exchanges as they happen (the admin page), if anyone may. Held strongly, as
    /// the session's monitors hold it too: a weak reference would give the feed a side table,
    /// and each of its retains (every monitor moment of every exchange) the slow path.
    var watcher: (any ExchangeWatcher)?
    /// TLS to `https://` origins for upgraded exchanges (WebSockets), per way of trusting.
    /// TLS contexts for origins Sluice connects to itself (shared with the native transport: one
    /// set of resumable sessions per way of trusting).
    var originTLS: OriginTLSContexts { session.native.tls }
    /// `breakpoints:`: what pauses, and what is paused.
    let breakpoints: BreakpointBook
    /// What the onboarding page (`http://sluice.internal/`) offers.
    var onboarding = Onboarding()
    /// The last exchange number given (exchanges are numbered from 1 in the order they start).
    private(set) var lastExchangeID = 0

    func nextExchangeID() -> Int {
        lastExchangeID += 1
        return lastExchangeID
    }

    init(
        loop: EventLoop, session: Session, hooks: UpstreamTask.Hooks, cache: (any CacheTier)?,
        configuration: Configuration,
        policy: Policy, stats: Stats, logger: Logger
    ) {
        self.loop = loop
        self.session = session
        self.hooks = hooks
        self.cache = cache
        cacheSettings = configuration.cache
        machineCache = cache == nil ? nil : ExchangeMachine.CacheRules(configuration.cache)
        rules = configuration.ruleBook
        self.policy = policy
        self.stats = stats
        self.logger = logger
        parserLimits = configuration.parserLimits
        breakpoints = BreakpointBook(
            configuration.breakpoints.points, timeoutMilliseconds: configuration.breakpoints.timeout, loop: loop,
            clock: {
                var now = timespec()
                clock_gettime(CLOCK_REALTIME, &now)
                return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
            }, logger: logger)
        transformLimit = configuration.limits.maxTransformBody
        heldBodies = HeldBodyBudget(total: configuration.limits.maxHeldBodies)
    }
}
