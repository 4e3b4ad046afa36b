import EventIO

/// The session's native HTTP/1.1 transport: keep-alive connections pooled per origin, lent to one
/// transfer at a time. Idle connections stay registered with the loop (a close or stray bytes
/// evict them at once), expire after `timeouts.upstream_idle`, and number at most
/// `upstream.max_idle_connections` in all; `upstream.max_connections_per_host` bounds the
/// connections per origin (transfers beyond it wait for one). Loop-confined.
final class NativeTransport {
    let loop: EventLoop
    let settings: Session.Settings
    /// Names resolved without blocking the loop.
    private(set) lazy var resolver = DNSResolver(loop: loop)
    /// TLS client contexts per way of trusting, shared with upgraded exchanges.
    let tls = OriginTLSContexts()

    /// Each origin's connections and waiting transfers (an origin with none has no pool). A
    /// request hashes its origin once, at checkout; its connection goes back to the pool it
    /// points at.
    private var pools: [OriginKey: OriginPool] = [:]
    /// The pool last asked for, while it is listed: requests to one origin in a row (the common
    /// case) find it without hashing the origin again.
    private var lastPool: OriginPool?
    private var idleTotal = 0
    /// Origins whose TLS refused `http/1.1`: libcurl carries them (HTTP/2).
    private var onlyHTTP2: Set<OriginKey> = []
    private var sweeper: Timer?

    init(loop: EventLoop, settings: Session.Settings) {
        self.loop = loop
        self.settings = settings
    }

    /// Idle connections and their pools hold each other: closed and let go of here.
    deinit {
        lastPool = nil
        for pool in pools.values {
            for connection in pool.idle { connection.close() }
            pool.idle = []
            pool.waiting = []
        }
    }

    /// Connections idle in the pool now.
    var idleCount: Int { idleTotal }

    /// Whether this transport carries `request`: `upstream.engine: auto`, no parent proxy, an
    /// `http://` or `https://` origin that is not known to speak only HTTP/2, and not gRPC (which
    /// needs HTTP/2 to its origin).
    func carries(_ request: UpstreamRequest) -> Bool {
        guard settings.engine == .auto, request.parent == nil else { return false }
        switch request.url.scheme {
        case "http":
            return true
        case "https":
            if let type = request.headers[.contentType], type.lowercased().hasPrefix("application/grpc") {
                return false
            }
            return onlyHTTP2.isEmpty || !onlyHTTP2.contains(OriginKey(request))
        default:
            return false
        }
    }

    func speaksOnlyHTTP2(_ key: OriginKey) { onlyHTTP2.insert(key) }

    // MARK: - Lending

    /// Finds `transfer` a connection: an idle one to its origin, a new one, or (at the
    /// per-origin limit) the next one released.
    func checkout(for transfer: NativeTransfer, fresh: Bool = false) {
        if !fresh, let connection = takeIdle(pool(transfer.key)) { return transfer.begin(on: connection) }
        // Asked again: closing an expired idle connection may have closed the origin's last, and
        // its pool went with it.
        let pool = self.pool(transfer.key)
        let limit = settings.maxConnectionsPerHost
        if limit > 0, pool.open >= limit {
            pool.waiting.append(transfer)
            return
        }
        openConnection(for: transfer, in: pool)
    }

    private func pool(_ key: OriginKey) -> OriginPool {
        if let lastPool, lastPool.key == key { return lastPool }
        let pool: OriginPool
        if let listed = pools[key] {
            pool = listed
        } else {
            pool = OriginPool(key: key)
            pools[key] = pool
        }
        lastPool = pool
        return pool
    }

    /// An origin left with no connection and no transfer waiting loses its pool.
    private func dropIfUnused(_ pool: OriginPool) {
        guard pool.open <= 0, pool.waiting.isEmpty, pools[pool.key] === pool else { return }
        pools[pool.key] = nil
        if lastPool === pool { lastPool = nil }
    }

    private func openConnection(for transfer: NativeTransfer, in pool: OriginPool) {
        let connection = OriginConnection(pool: pool, transport: self)
        pool.open += 1
        transfer.opening(connection)
        connection.open(
            guarded: { [weak transfer] address in transfer?.mayConnect(to: address) ?? false },
            refused: { [weak transfer] in transfer?.refusal ?? .upstreamFailed(reason: .cancelled(detail: "")) }
        ) { [unowned self, weak transfer] outcome in
            // Unowned: a connection lives in its pool or with a transfer, either way no longer
            // than the transport (a transfer's exchange holds the session, which holds it); weak
            // would give the transport a side table, and each of its retains the slow path.
            guard let transfer, transfer.isWaiting(for: connection) else {
                // The transfer gave up meanwhile: a ready connection serves the next one.
                if case .ready = outcome { return self.park(connection) }
                return self.forget(connection)
            }
            switch outcome {
            case .ready:
                transfer.begin(on: connection)
            case .failed(let error):
                self.forget(connection)
                transfer.couldNotConnect(error)
            case .declined:
                self.forget(connection)
                transfer.declined()
            }
        }
    }

    /// The most recently used idle connection in `pool` that is still fit (not expired).
    private func takeIdle(_ pool: OriginPool) -> OriginConnection? {
        guard !pool.idle.isEmpty else { return nil }
        let now = EventLoop.monotonicNanoseconds()
        while let connection = pool.idle.popLast() {
            idleTotal -= 1
            if now &- connection.idleSince < expiry, connection.isReusable { return connection }
            forget(connection)
        }
        return nil
    }

    private var expiry: UInt64 { UInt64(max(1000, settings.idleTimeoutMilliseconds)) * 1_000_000 }

    /// A transfer is done with `connection`: idle in the pool when `reusable`, closed otherwise;
    /// either way a transfer waiting for this origin is served.
    func release(_ connection: OriginConnection, reusable: Bool) {
        if reusable, connection.isReusable {
            connection.release()
            if let next = nextWaiting(connection.pool) { return next.begin(on: connection) }
            park(connection)
        } else {
            forget(connection)
        }
    }

    private func park(_ connection: OriginConnection) {
        if settings.maxIdleConnections <= 0 { return forget(connection) }
        if idleTotal >= settings.maxIdleConnections { evictOldest() }
        connection.release()
        connection.pool.idle.append(connection)
        idleTotal += 1
        scheduleSweep()
    }

    /// An idle connection the origin closed (or wrote to): out of the pool, closed.
    func evict(_ connection: OriginConnection) {
        let pool = connection.pool
        if let index = pool.idle.firstIndex(where: { $0 === connection }) {
            pool.idle.remove(at: index)
            idleTotal -= 1
        }
        forget(connection)
    }

    /// Closes `connection` and counts it out; a transfer waiting for its origin opens a new one.
    /// An origin left with no connection and no transfer waiting loses its pool.
    private func forget(_ connection: OriginConnection) {
        connection.close()
        let pool = connection.pool
        pool.open -= 1
        if let next = nextWaiting(pool) { return openConnection(for: next, in: pool) }
        dropIfUnused(pool)
    }

    private func nextWaiting(_ pool: OriginPool) -> NativeTransfer? {
        while !pool.waiting.isEmpty {
            let next = pool.waiting.removeFirst()
            if next.wantsConnection { return next }
        }
        return nil
    }

    /// A transfer that waited gave up.
    func withdraw(_ transfer: NativeTransfer) {
        guard let pool = pools[transfer.key], let index = pool.waiting.firstIndex(where: { $0 === transfer }) else {
            return
        }
        pool.waiting.remove(at: index)
        dropIfUnused(pool)
    }

    private func evictOldest() {
        var oldest: OriginConnection?
        for pool in pools.values {
            if let first = pool.idle.first, first.idleSince < (oldest?.idleSince ?? .max) { oldest = first }
        }
        if let oldest { evict(oldest) }
    }

    /// Closes idle connections past their time, while there are any.
    private func scheduleSweep() {
        if sweeper == nil {
            sweeper = Timer(loop: loop) { [unowned self] in self.sweep() }
        }
        guard let sweeper, !sweeper.isScheduled else { return }
        sweeper.schedule(milliseconds: max(1000, settings.idleTimeoutMilliseconds / 2))
    }

    private func sweep() {
        let now = EventLoop.monotonicNanoseconds()
        for pool in pools.values {
            for connection in pool.idle where now &- connection.idleSince >= expiry { evict(connection) }
        }
        if idleTotal > 0 { scheduleSweep() }
    }
}

/// One origin's connections in the native transport: the idle ones (the most recently used last),
/// how many are open or opening (the idle ones included, for the per-origin limit), and the
/// transfers waiting for one at that limit, first come first. Loop-confined.
final class OriginPool {
    let key: OriginKey
    var idle: [OriginConnection] = []
    var open = 0
    var waiting: [NativeTransfer] = []

    init(key: OriginKey) { self.key = key }
}
