import EventIO
import Logging
import TLS

#if canImport(Glibc)
    import Glibc
#endif

/// The proxy port: accepts clients, applies access control and the connection limit, owns the
/// session engine, and shuts down gracefully.
public final class ProxyServer {
    /// The configuration in force.
    public let configuration: Configuration
    /// The loop everything runs on.
    public let loop: EventLoop
    /// The upstream session engine.
    public let session: Session
    /// Counters.
    public let stats = Stats()
    /// Every contract check since the start, per rule × operation × status (`GET /contracts`).
    public let contractCoverage = ContractCoverage()
    /// The address actually bound (real port when configured with port 0).
    public var localAddress: SocketAddress { boundAddress }
    /// Whether shutdown has begun.
    public private(set) var isShuttingDown = false

    /// The rules in force (replaced by ``reload(_:)``).
    public var ruleBook: RuleBook { environment.rules }
    /// The local cache tiers (`nil` when disabled or when the file could not be opened); exchanges
    /// see them as ``CacheTier`` through ``environment``.
    let tiers: TieredCache?
    /// The response cache's file.
    var cache: CacheStore? { tiers?.file }
    private var cacheFlushTimer: Timer?
    /// What every exchange runs with (the collaborators it would otherwise reach through the server).
    let environment: ExchangeEnvironment
    /// Wall-clock seconds since the epoch; tests replace it to age the cache without sleeping.
    public var clock: () -> Double {
        get { environment.clock }
        set { environment.clock = newValue }
    }
    /// `limits.max_transform_body` in force.
    public var transformLimit: Int { environment.transformLimit }
    let parserLimits: RequestParser.Limits
    let policy: Policy
    let resolver: DNSResolver
    var date: HTTPDate { environment.date }
    let logger: Logger
    private let accessLog: AccessLog
    /// HTTPS interception; `nil` when no host is to be intercepted.
    let interceptor: Interceptor?
    private var listener: Listener?
    /// The bound address, kept after the listener closes.
    private var boundAddress: SocketAddress
    private var clients: [ObjectIdentifier: ClientConnection] = [:]
    private var shutdownCompletion: (() -> Void)?
    private var shutdownTimer: Timer?

    /// Binds the proxy port and prepares the session.
    /// - Parameters:
    ///   - configuration: what to do.
    ///   - loop: the loop to run on (the caller runs it).
    ///   - logger: access and error lines go here.
    ///   - hooks: per-exchange hooks; the redirect hook defaults to the configured policy.
    /// - Throws: ``ListenFailure`` when the port cannot be bound, ``LocalCA/Failure`` when
    ///   interception is configured and the local CA cannot be used (a key others can read).
    public init(
        configuration: Configuration, loop: EventLoop, logger: Logger, hooks: UpstreamTask.Hooks? = nil
    ) throws {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        parserLimits = configuration.parserLimits
        var tiers: TieredCache?
        if configuration.cache.enabled {
            do {
                let store = try CacheStore(settings: configuration.cache, logger: logger)
                let local = TieredCache(file: store, memoryBudget: Int(configuration.cache.memory))
                if let settings = configuration.cache.sharedTier {
                    local.shared = ProxyServer.sharedTier(
                        settings, cache: configuration.cache, tiers: local, loop: loop, logger: logger)
                }
                tiers = local
                // Ten times a second: at thousands of distinct URLs a second, a once-a-second batch of
                // decisions held the loop for ~25 ms (p99 at c=1); a tenth of it is a short pause.
                let timer = Timer(loop: loop, repeats: true) { [weak store] in store?.flushPending() }
                timer.schedule(milliseconds: 100)
                cacheFlushTimer = timer
            } catch {
                logger.error("cache disabled: cannot open \(configuration.cache.path): \(error)")
            }
        }
        self.tiers = tiers
        policy = Policy(
            configuration: configuration, credentials: try configuration.proxyAuth.map(ProxyCredentials.init))
        session = Session(loop: loop, settings: Session.Settings(configuration))
        session.redirectHandler = Redirector(policy: configuration.redirects.policy)
        environment = ExchangeEnvironment(
            loop: loop, session: session, hooks: hooks ?? .empty, cache: tiers,
            configuration: configuration, policy: policy, stats: stats, logger: logger)
        if let file = configuration.record.file {
            let recorder = try Recorder(settings: configuration.record, file: file, loop: loop, logger: logger)
            environment.recorder = recorder
            session.eventMonitor.add(recorder)
        }
        if let file = configuration.replay.file {
            let book = try ReplayBook(settings: configuration.replay, file: file)
            environment.replayBook = book
            logger.info(
                "replaying \(book.count) recorded exchange(s) from \(file); a request not in it is \(configuration.replay.onMiss == .fail ? "answered 504" : "forwarded")"
            )
        }
        interceptor = try ProxyServer.makeInterceptor(configuration, logger: logger, now: environment.clock())
        resolver = DNSResolver(loop: loop)
        accessLog = AccessLog(logger: logger, accessEnabled: configuration.log.access, stats: stats)
        session.eventMonitor.add(accessLog)
        session.eventMonitor.add(contractCoverage)
        guard let address = Configuration.socketAddress(configuration.listen) else {
            throw ListenFailure(key: "listen", address: configuration.listen, code: 0)
        }
        if let refusal = Self.listenRefusal(configuration) { throw refusal }
        if let refusal = Self.clientCertificateRefusal(configuration) { throw refusal }
        for warning in Self.likelyMistakes(configuration) { logger.warning("\(warning)") }
        boundAddress = address
        let listener = try ListenFailure.binding(key: "listen", address: configuration.listen) {
            () throws(EventIOError) in
            try Listener(loop: loop, address: address) { [unowned self] fd, peer in self.accept(fd: fd, peer: peer) }
        }
        listener.onAcceptFailure = { [logger] code in
            logger.error(
                "accepting connections failed (\(String(cString: strerror(code)))): paused for \(Listener.backoffMilliseconds) ms at a time until it works again"
            )
        }
        self.listener = listener
        boundAddress = listener.localAddress
        addSelfAddress(boundAddress)
        environment.onboarding = Onboarding(
            certificate: LocalCA.exists(configuration.tls) ? try? LocalCA.certificate(configuration.tls) : nil,
            intercepting: interceptor != nil,
            proxyAddresses: LANAddresses.reaching(boundAddress, allowClients: configuration.allowClients),
            needsCredentials: configuration.proxyAuth != nil, port: boundAddress.port)
        environment.parents = try ProxyServer.parents(configuration, listening: boundAddress)
        environment.parentTLS = try ProxyServer.parentTLS(configuration, routing: environment.parents)
        let parents = [environment.parents.forHTTP, environment.parents.forHTTPS].compactMap { $0 }
        if let parent = parents.first {
            logger.info("requests go through the parent proxy \(parent)")
        }
    }

    /// The shared tier, and what this instance does when another announces a purge.
    private static func sharedTier(
        _ settings: Configuration.Cache.SharedTier, cache: Configuration.Cache, tiers: TieredCache, loop: EventLoop,
        logger: Logger
    ) -> SharedTier {
        let shared = SharedTier(settings: settings, loop: loop, logger: logger)
        shared.onAnnouncement = { [unowned tiers] announcement in
            let selector: CacheInspector.Selector
            switch announcement {
            case .key(let key): return tiers.invalidateLocally(key: key)
            case .host(let host): selector = .host(host)
            case .glob(let glob): selector = .urlGlob(glob)
            case .all: selector = .all
            }
            do {
                _ = try CacheInspector(settings: cache, writable: true).purge(selector)
            } catch {
                logger.warning("a purge announced by another instance could not be applied: \(error)")
            }
        }
        logger.info("shared cache tier: \(shared.description) (prefix \(settings.prefix))")
        return shared
    }

    /// The interceptor when hosts are to be intercepted: the local CA is loaded, or created (and
    /// where it is said once) when there is none yet.
    private static func makeInterceptor(_ configuration: Configuration, logger: Logger, now: Double) throws
        -> Interceptor?
    {
        for rule in configuration.rules + [configuration.defaults] where rule.tls?.verify == false {
            logger.warning(
                "rule \(rule.name): tls.verify is false: origins' certificates are not checked (allowInvalidCertificates)"
            )
        }
        for (line, hasWarnings) in configuration.contractLines {
            if hasWarnings { logger.warning("\(line)") } else { logger.notice("\(line)") }
        }
        let settings = configuration.tls
        guard settings.isConfigured(rules: configuration.rules) else { return nil }
        let authority: CertificateAuthority
        if LocalCA.exists(settings) {
            authority = try LocalCA.load(settings)
        } else {
            authority = try LocalCA.create(settings, now: now)
            logger.notice(
                "created a local CA for HTTPS interception: \(settings.caCert) (SHA-256 \(authority.sha256Fingerprint)); clients must trust it: run `sluice ca export` for the certificate and how"
            )
        }
        logger.notice(
            "intercepting HTTPS for \((settings.intercept.map(\.text) + configuration.rules.filter(\.intercept).map { "rule " + $0.name }).joined(separator: ", ")) with the CA \(authority.subject)"
        )
        return try Interceptor(settings: settings, authority: authority)
    }

    /// Marks another of this process's listening addresses as "self" (the admin port, say).
    public func addSelfAddress(_ address: SocketAddress, admin: Bool = false) {
        policy.addSelfAddress(address, admin: admin)
        session.targetGuard = policy.targets
    }

    /// Applies the reloadable part of a new configuration (rules, defaults, the redirect policy,
    /// `limits.max_transform_body` and `max_held_bodies`, `breakpoints:`) without touching connections; exchanges already running keep
    /// the rule they started with.
    /// - Returns: the changed keys that need a restart (they are not applied).
    @discardableResult
    public func reload(_ new: Configuration) -> [String] {
        // A client certificate that cannot be used would fail every request of its rule: the
        // reload is refused, said once, and the rules in force stay.
        if let refusal = Self.clientCertificateRefusal(new) {
            logger.error("configuration not reloaded: \(refusal.reason)")
            return []
        }
        environment.rules = new.ruleBook
        environment.faults.restart()  // the file's faults again: seeds restart, switches back on
        environment.transformLimit = new.limits.maxTransformBody
        environment.heldBodies.total = new.limits.maxHeldBodies
        session.redirectHandler = Redirector(policy: new.redirects.policy)
        environment.breakpoints.reload(new.breakpoints)
        var old = configuration
        old.breakpoints = new.breakpoints
        old.rules = new.rules
        old.defaults = new.defaults
        old.redirects.policy = new.redirects.policy
        old.limits.maxTransformBody = new.limits.maxTransformBody
        old.limits.maxHeldBodies = new.limits.maxHeldBodies
        var pending: [String] = []
        if old.listen != new.listen { pending.append("listen") }
        if old.proxyAuth != new.proxyAuth { pending.append("proxy_auth") }
        if old.allowClients != new.allowClients || old.connectPorts != new.connectPorts
            || old.denyTargets != new.denyTargets || old.loopbackTargets != new.loopbackTargets
        {
            pending.append("access")
        }
        if old.limits != new.limits { pending.append("limits") }
        if old.timeouts != new.timeouts { pending.append("timeouts") }
        if old.upstream != new.upstream || old.redirects != new.redirects { pending.append("upstream") }
        if old.log != new.log { pending.append("log") }
        if old.cache != new.cache { pending.append("cache") }
        if old.tls != new.tls { pending.append("tls") }
        if old.record != new.record { pending.append("record") }
        if old.replay != new.replay { pending.append("replay") }
        return pending
    }

    /// Exchanges waiting for another's fetch of the same URL (collapsed forwarding).
    public var collapserWaiting: Int { environment.collapser.waiting }
    /// Background refreshes (`stale-while-revalidate`) still running; each is done with the cache when it leaves.
    public var refreshesRunning: Int { environment.refreshes.count }
    /// Fetches going on for collapsed waiters after their leader's client left.
    public var collapserOrphans: Int { environment.collapser.orphanCount }

    /// Client connections open now.
    public var openConnections: Int { clients.count }

    // MARK: - Accepting

    private func accept(fd: Int32, peer: SocketAddress) {
        let connection = Connection(loop: loop, fd: fd, peer: peer)
        guard policy.allowsClient(peer) else {
            return refuse(connection, .forbidden(reason: .clientNotAllowed(peer.unmapped.host)))
        }
        guard !isShuttingDown else { return refuse(connection, .unavailable(reason: .shuttingDown)) }
        guard clients.count < configuration.limits.maxConnections else {
            return refuse(
                connection, .unavailable(reason: .tooManyConnections(limit: configuration.limits.maxConnections)))
        }
        stats.connectionsAccepted += 1
        stats.connectionsOpen += 1
        let client = ClientConnection(connection: connection, environment: clientEnvironment)
        clients[ObjectIdentifier(client)] = client
    }

    private func refuse(_ connection: Connection, _ error: SluiceError) {
        stats.connectionsRefused += 1
        let problem = Problem(error)
        connection.write(ResponseWriter.problem(problem, keepAlive: false, headOnly: false, date: date.now))
        // One line for the first refusal of a second, then one that counts the rest: a storm of
        // clients turned away (thousands a second) must not become thousands of log writes.
        if refusalLog.isScheduled {
            refusedQuietly[problem.slug, default: 0] += 1
        } else {
            log(
                ExchangeRecord(
                    client: connection.peer?.description ?? "?", method: "-", url: "-", status: problem.status,
                    bytesSent: Int64(problem.body.utf8.count), duration: 0, upstreamTime: nil, error: error,
                    aborted: false))
            refusalLog.schedule(milliseconds: 1000)
        }
        connection.closeAfterFlush()
        keepUntilClosed(connection)
    }

    /// Refusals not logged one by one in the current second, by problem type.
    private var refusedQuietly: [String: Int] = [:]
    private lazy var refusalLog: Timer = Timer(loop: loop) { [unowned self] in
        guard !refusedQuietly.isEmpty else { return }
        for (slug, count) in refusedQuietly.sorted(by: { $0.key < $1.key }) {
            logger.warning("\(count) more connection(s) refused in the last second (\(slug))")
        }
        refusedQuietly.removeAll()
        refusalLog.schedule(milliseconds: 1000)  // a storm that goes on: one line a second
    }

    /// Connections flushing before their close: the object must outlive the flush and linger.
    private var lingering: [Connection] = []

    private func keepUntilClosed(_ connection: Connection) {
        guard !connection.isClosed else { return }
        lingering.append(connection)
        if lingering.count > 64 { lingering.removeAll { $0.isClosed } }
    }

    func connectionDidClose(_ client: ClientConnection) {
        guard clients.removeValue(forKey: ObjectIdentifier(client)) != nil else { return }
        stats.connectionsOpen -= 1
        keepUntilClosed(client.connection)
        if isShuttingDown, clients.isEmpty { completeShutdown() }
    }

    /// Writes a record through the access log (for exchanges that never reached the session).
    func log(_ record: ExchangeRecord) { accessLog.exchangeDidComplete(record) }

    // MARK: - Shutdown

    /// Stops accepting, closes idle connections, lets busy ones finish (at most `shutdown_grace`),
    /// then calls `completion` on the loop thread.
    public func shutdown(completion: @escaping () -> Void) {
        guard !isShuttingDown else { return }
        isShuttingDown = true
        environment.isShuttingDown = true
        shutdownCompletion = completion
        listener = nil  // new connections are refused from now on
        environment.breakpoints.releaseAll()
        for client in Array(clients.values) { client.shutdownIfIdle() }
        if clients.isEmpty { return completeShutdown() }
        shutdownTimer = Timer(loop: loop) { [unowned self] in
            self.logger.warning("shutdown grace period over; closing \(self.clients.count) connection(s)")
            for client in Array(self.clients.values) { client.abandonAtShutdown() }
            self.completeShutdown()
        }
        shutdownTimer?.schedule(milliseconds: configuration.timeouts.shutdownGrace)
    }

    private func completeShutdown() {
        shutdownTimer?.cancel()
        cacheFlushTimer?.cancel()
        cache?.flushPending(force: true)
        environment.recorder?.close()
        guard let completion = shutdownCompletion else { return }
        shutdownCompletion = nil
        completion()
    }
}

/// `sluice serve` cannot start with this parent proxy configuration.
public struct ParentProxyRefused: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}
