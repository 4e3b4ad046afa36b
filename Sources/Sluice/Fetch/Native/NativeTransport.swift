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

    /// Idle connections per origin, the most recently used last.
    private var idle: [OriginKey: [OriginConnection]] = [:]
    private var idleTotal = 0
    /// Open or opening connections per origin (idle ones included), for the per-origin limit.
    private var counts: [OriginKey: Int] = [:]
    /// Transfers waiting for a connection (the per-origin limit was reached), first come first.
    private var waiting: [OriginKey: [NativeTransfer]] = [:]
    /// Origins whose TLS refused `http/1.1`: libcurl carries them (HTTP/2).
    private var onlyHTTP2: Set<OriginKey> = []
    private var sweeper: Timer?

    init(loop: EventLoop, settings: Session.Settings) {
        self.loop = loop
        self.settings = settings
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
        let key = transfer.key
        if !fresh, let connection = takeIdle(key) { return transfer.begin(on: connection) }
        let limit = settings.maxConnectionsPerHost
        if limit > 0, counts[key, default: 0] >= limit {
            waiting[key, default: []].append(transfer)
            return
        }
        openConnection(for: transfer)
    }

    private func openConnection(for transfer: NativeTransfer) {
        let key = transfer.key
        let connection = OriginConnection(key: key, transport: self)
        counts[key, default: 0] += 1
        transfer.opening(connection)
        connection.open(
            guarded: { [weak transfer] address in transfer?.mayConnect(to: address) ?? false },
            refused: { [weak transfer] in transfer?.refusal ?? .upstreamFailed(reason: .cancelled(detail: "")) }
        ) { [weak self, weak transfer] outcome in
            guard let self else { return }
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

    /// The most recently used idle connection to `key` that is still fit (not expired).
    private func takeIdle(_ key: OriginKey) -> OriginConnection? {
        guard idleTotal > 0 else { return nil }
        let now = EventLoop.monotonicNanoseconds()
        while let connection = idle[key]?.popLast() {
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
            if let next = nextWaiting(connection.key) { return next.begin(on: connection) }
            park(connection)
        } else {
            forget(connection)
        }
    }

    private func park(_ connection: OriginConnection) {
        if settings.maxIdleConnections <= 0 { return forget(connection) }
        if idleTotal >= settings.maxIdleConnections { evictOldest() }
        connection.release()
        idle[connection.key, default: []].append(connection)
        idleTotal += 1
        scheduleSweep()
    }

    /// An idle connection the origin closed (or wrote to): out of the pool, closed.
    func evict(_ connection: OriginConnection) {
        if var list = idle[connection.key], let index = list.firstIndex(where: { $0 === connection }) {
            list.remove(at: index)
            idle[connection.key] = list.isEmpty ? nil : list
            idleTotal -= 1
        }
        forget(connection)
    }

    /// Closes `connection` and counts it out; a transfer waiting for its origin opens a new one.
    private func forget(_ connection: OriginConnection) {
        connection.close()
        let key = connection.key
        if let count = counts[key] { counts[key] = count > 1 ? count - 1 : nil }
        if let next = nextWaiting(key) { openConnection(for: next) }
    }

    private func nextWaiting(_ key: OriginKey) -> NativeTransfer? {
        guard var queue = waiting[key] else { return nil }
        while !queue.isEmpty {
            let next = queue.removeFirst()
            if next.wantsConnection {
                waiting[key] = queue.isEmpty ? nil : queue
                return next
            }
        }
        waiting[key] = nil
        return nil
    }

    /// A transfer that waited gave up.
    func withdraw(_ transfer: NativeTransfer) {
        guard var queue = waiting[transfer.key], let index = queue.firstIndex(where: { $0 === transfer }) else {
            return
        }
        queue.remove(at: index)
        waiting[transfer.key] = queue.isEmpty ? nil : queue
    }

    private func evictOldest() {
        var oldest: OriginConnection?
        for list in idle.values {
            if let first = list.first, first.idleSince < (oldest?.idleSince ?? .max) { oldest = first }
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
        for (_, list) in idle {
            for connection in list where now &- connection.idleSince >= expiry { evict(connection) }
        }
        if idleTotal > 0 { scheduleSweep() }
    }

    /// Closes every idle connection (shutdown).
    func closeIdle() {
        for list in idle.values { for connection in list { forget(connection) } }
        idle = [:]
        idleTotal = 0
    }
}
