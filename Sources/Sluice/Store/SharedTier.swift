import EventIO
import Logging
import Redis

#if canImport(Glibc)
    import Glibc
#endif

/// The shared tier (`cache.shared`): stored responses on a Redis (or Valkey) server that several
/// Sluice instances read and write, below each one's SQLite file. Spoken on the proxy's own loop
/// (hiredis's libevent adapter): a lookup never waits longer than `timeout`, a write never holds
/// up a client. A circuit breaker takes the tier out (local tier only) after failures and tries
/// again with growing pauses; each change of state is logged once. Purges and invalidations are
/// announced on a channel so that every instance drops its local copies. Loop-confined.
public final class SharedTier {
    let settings: Configuration.Cache.SharedTier
    let loop: EventLoop
    private let logger: Logger
    private(set) var backend: Backend?
    private var subscriber: RedisConnection?
    /// Distinguishes this instance's announcements from the others' (its own are ignored).
    private let instance = String(UInt64.random(in: 1...UInt64.max), radix: 36)

    /// What another instance announced.
    enum Announcement: Equatable, Sendable {
        case key(String)
        case host(String)
        case glob(String)
        case all
    }
    /// Told of what other instances purged or invalidated.
    var onAnnouncement: (Announcement) -> Void = { _ in }

    /// The breaker.
    enum Health: Equatable {
        case connecting
        case up
        /// Out until the reconnect; `reason` is why.
        case down(reason: String)
    }
    private(set) var breaker = CircuitBreaker()
    var health: Health { breaker.health }
    private var reconnectTimer: Timer?
    private(set) var counts = (lookups: 0, hits: 0, stores: 0, failures: 0)

    init(settings: Configuration.Cache.SharedTier, loop: EventLoop, logger: Logger) {
        self.settings = settings
        self.loop = loop
        self.logger = logger
        connect()
    }

    deinit {
        reconnectTimer?.cancel()
        backend?.close()
        subscriber?.close()
    }

    /// `redis://host:port/db`, for logs and `/health`.
    var description: String { Self.describe(settings) }

    /// `redis://host:port/db`, and ` (cluster)` for a Cluster.
    public static func describe(_ settings: Configuration.Cache.SharedTier) -> String {
        "redis://\(settings.host.contains(":") ? "[\(settings.host)]" : settings.host):\(settings.port)/\(settings.database)"
            + (settings.cluster ? " (cluster)" : "")
    }

    /// Announcements' channel. Pub/sub spans a server's databases: an instance on another
    /// database (with the same prefix) has a channel of its own.
    private var channel: String {
        settings.prefix + "invalidate" + (settings.database == 0 ? "" : "@\(settings.database)")
    }

    /// Resolves the server's name on the loop (hiredis would block on it), then connects.
    private func connect() {
        guard SocketAddress.parseIP(settings.host) == nil else { return connect(to: settings.host) }
        resolver.resolve(settings.host) { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(let address): self.connect(to: address.host)
            case .failure(let error): self.failed("\(self.settings.host) did not resolve (\(error))")
            }
        }
    }

    private lazy var resolver = DNSResolver(loop: loop)

    private func connect(to host: String) {
        if settings.cluster {
            backend = .cluster(
                RedisCluster(loop: loop, seeds: [(host, settings.port)], credentials: settings.credentials) {
                    [weak self] state in
                    self?.commandConnection(state)
                })
        } else {
            let connection = RedisConnection(
                loop: loop, host: host, port: settings.port, credentials: settings.credentials
            ) {
                [weak self] state in self?.commandConnection(state)
            }
            if settings.database != 0 {
                connection.send([Array("SELECT".utf8), Array(String(settings.database).utf8)]) { _ in }
            }
            backend = .single(connection)
        }
        let subscriber = RedisConnection(
            loop: loop, host: host, port: settings.port, credentials: settings.credentials
        ) { _ in }
        subscriber.subscribe(channel) { [weak self] message in
            guard let self else { return }
            guard let message else {
                // Gone while the tier is torn down by `failed`: that failure's consequence, not news.
                guard let current = self.subscriber else { return }
                if case .closed(let reason) = current.state { return self.failed(reason) }
                return self.failed("the subscription was lost")
            }
            self.received(message)
        }
        self.subscriber = subscriber
    }

    private func commandConnection(_ state: RedisConnection.State) {
        switch state {
        case .connecting: break
        case .connected: confirm()
        case .closed(let reason):
            failed(reason)
        }
    }

    /// A connection is only a tier that answers: a PING within ``confirmLimit`` brings it up
    /// (a paused or overloaded server accepts connections and answers nothing); none, and the
    /// attempt failed: the next one waits longer.
    private func confirm() {
        guard let backend else { return }
        let limit = max(settings.timeout, Self.confirmLimit)
        final class Once {
            var done = false
        }
        let once = Once()
        let timer = Timer(loop: loop) { [weak self] in
            guard !once.done else { return }
            once.done = true
            self?.failed("the server did not answer PING within \(limit) ms", lost: true)
        }
        timer.schedule(milliseconds: limit)
        let sent = backend.sendToAny([Array("PING".utf8)]) { [weak self] reply in
            timer.cancel()
            guard !once.done, let self else { return }
            once.done = true
            switch reply {
            case .error(let text)?: return self.failed(text, lost: true)
            // (Closed: its state change says so, once.)
            case nil: return
            default: break
            }
            let change = self.breaker.connected()
            // Sent before any lookup can be: the tier never hands back what was purged meanwhile.
            self.replayPending()
            if change.cameBack { self.logger.notice("shared cache tier \(self.description) is back") }
            if change.becameUp { self.whenUp?() }
        }
        if !sent {
            timer.cancel()
            once.done = true
            failed("the connection was lost", lost: true)
        }
    }

    /// The longest a new connection's PING may take (or `timeout`, when longer).
    static let confirmLimit = 500

    /// Runs each time the tier comes up.
    var whenUp: (() -> Void)?
    /// Runs each time the tier goes down, with why.
    var whenDown: ((String) -> Void)?

    /// `done` runs once every command sent before has been answered (or the connection is gone).
    func flush(_ done: @escaping (Bool) -> Void) {
        guard let backend else { return done(false) }
        var waiting = 0
        var confirmed = true
        waiting = backend.sendToEach([Array("PING".utf8)]) { _, reply in
            if reply == nil { confirmed = false }
            waiting -= 1
            if waiting == 0 { done(confirmed) }
        }
        if waiting == 0 { done(false) }
    }

    /// Whether lookups and writes go to the tier now.
    var isAvailable: Bool { health == .up && replaying == 0 }

    /// Purges and invalidations made while the tier was out, for the reconnect.
    private(set) var pending = PendingPurges()

    /// Carries out what was purged or invalidated while the tier was out.
    private func replayPending() {
        guard let backend else { return }
        let work = pending.take()
        // Lookups wait until what the purges remove is gone: a key's DEL goes ahead of any GET on
        // its connection, but a host's or every entry's names come back first (ZRANGE, SCAN).
        // What does not get through waits for the next reconnect.
        switch work {
        case .none: return
        case .everything(let announcement):
            replaying += 1
            removeAll(backend) { [weak self] failure in
                guard let self else { return }
                self.replaying -= 1
                if let failure {
                    self.pending.addEverything(announcement)
                    self.unconfirmed(failure)
                }
            }
            announce(announcement)
        case .some(let keys, let hosts):
            for host in hosts {
                replaying += 1
                removeHost(host, backend) { [weak self] failure in
                    guard let self else { return }
                    self.replaying -= 1
                    if let failure {
                        self.pending.add(host: host)
                        self.unconfirmed(failure)
                    }
                }
                announce("host", host)
            }
            for key in keys {
                removeKey(key, backend)
                announce("key", key)
            }
        }
        logger.notice("shared cache tier \(description): purges made while it was out carried out")
    }

    /// Replays of host and whole purges still running: lookups wait for them (``isAvailable``).
    private var replaying = 0

    /// A failure: after three in a row (or a lost connection) the tier is out until a reconnect.
    /// `lost`: the connection is of no use whatever its state (an unconfirmed one).
    private func failed(_ reason: String, lost: Bool = false) {
        counts.failures += 1
        let now = Double(EventLoop.monotonicNanoseconds()) / 1e9
        guard
            case .out(let announce, let retryIn) = breaker.failed(
                reason, connectionLost: lost || (backend?.isClosed ?? true), now: now)
        else { return }
        if announce {
            logger.warning(
                "shared cache tier \(description) is down (\(reason)); local tier only, retrying in \(Int(breaker.backoff)) s"
            )
        }
        whenDown?(reason)
        // Forgotten before they are closed: what closing them fails (a pending lookup, the
        // subscription) must not replace this reason (a refused password read "subscription lost").
        let (closing, closingSubscriber) = (backend, subscriber)
        backend = nil
        subscriber = nil
        closing?.close()
        closingSubscriber?.close()
        guard let retryIn else { return }
        let timer = Timer(loop: loop) { [weak self] in
            guard let self else { return }
            self.breaker.retrying()
            self.connect()
        }
        timer.schedule(milliseconds: Int(retryIn * 1000))
        reconnectTimer = timer
    }

    // MARK: - Reading

    /// The record stored for `key`, or `nil` (none, not whole, the tier out or too slow): at
    /// most `timeout` later, always on a later loop turn.
    func lookup(_ key: String, completion: @escaping (SharedRecord?) -> Void) {
        guard isAvailable, let backend else {
            loop.callSoon { completion(nil) }
            return
        }
        counts.lookups += 1
        final class Once {
            var done = false
        }
        let once = Once()
        let timer = Timer(loop: loop) { [weak self] in
            guard !once.done else { return }
            once.done = true
            self?.failed("a lookup took longer than \(self?.settings.timeout ?? 0) ms")
            completion(nil)
        }
        timer.schedule(milliseconds: settings.timeout)
        let redisKey = SharedRecord.redisKey(prefix: settings.prefix, key: key)
        let sent = backend.send(key: redisKey, [Array("GET".utf8), redisKey]) { [weak self] reply in
            timer.cancel()
            guard !once.done, let self else { return }
            once.done = true
            switch reply {
            case .string(let value)?:
                self.breaker.succeeded()
                guard let record = SharedRecord(decoding: value), record.key == key else {
                    // Torn, foreign or of another version: never served, and removed.
                    self.logger.notice("shared cache tier: an entry for \(key) did not check out; removed")
                    backend.send(key: redisKey, [Array("DEL".utf8), redisKey]) { _ in }
                    return completion(nil)
                }
                self.counts.hits += 1
                completion(record)
            case .null?:
                self.breaker.succeeded()
                completion(nil)
            case .error(let text)? where text.hasPrefix("WRONGTYPE"):
                // Another kind of value under the entry's name (not Sluice's): a foreign value,
                // not a failing server; removed as a torn one is.
                self.breaker.succeeded()
                self.logger.notice("shared cache tier: the key for \(key) held another type of value; removed")
                backend.send(key: redisKey, [Array("DEL".utf8), redisKey]) { _ in }
                completion(nil)
            case .error(let text)?:
                self.failed(text)
                completion(nil)
            default:
                // No answer: the connection was lost (unless `failed` is closing it already).
                if self.backend != nil { self.failed("the connection was lost") }
                completion(nil)
            }
        }
        if !sent {
            timer.cancel()
            once.done = true
            failed("a command could not be sent")
            loop.callSoon { completion(nil) }
        }
    }

    // MARK: - Writing

    /// Stores a record for `seconds` (its freshness lifetime and stale windows); pipelined,
    /// unanswered by the caller. The host index lets a host's entries be purged everywhere.
    func store(_ record: SharedRecord, seconds: Int64) {
        guard isAvailable, let backend, seconds > 0, Int64(record.body.count) <= settings.maxEntry else { return }
        counts.stores += 1
        let redisKey = SharedRecord.redisKey(prefix: settings.prefix, key: record.key)
        let set = [Array("SET".utf8), redisKey, record.encoded(), Array("EX".utf8), Array(String(seconds).utf8)]
        backend.send(key: redisKey, set) { [weak self] reply in
            guard case .error(let text)? = reply, let self else { return }
            // A full server (maxmemory, noeviction) refuses writes and still answers reads: no
            // failure of the tier, said (once a minute) and counted. (A read-only replica, after a
            // failover, is one: the reconnect finds the new master.)
            if text.hasPrefix("OOM") { return self.refusedStore(text) }
            self.failed(text)
        }
        // The host index (for host purges) as a sorted set of entry names by when they expire:
        // each store drops the ones gone by, so it holds what lives and no more.
        let index = hostIndex(record.host)
        let now = Int64(time(nil))
        backend.send(key: index, [Array("ZADD".utf8), index, Array(String(now + seconds).utf8), redisKey]) { _ in }
        // Gone by a minute ago (instances' clocks may differ by a little).
        let past = Array(String(now - 60).utf8)
        backend.send(key: index, [Array("ZREMRANGEBYSCORE".utf8), index, Array("-inf".utf8), past]) { _ in }
        // The index lives as long as its longest-lived entry: only ever lengthened (GT, Redis 7;
        // older servers refuse GT and get a day at least).
        let lifetime = Array(String(seconds + 60).utf8)
        backend.send(key: index, [Array("EXPIRE".utf8), index, lifetime, Array("GT".utf8)]) { reply in
            if case .integer(0)? = reply {
                // No expiry yet (a new index): GT never sets one.
                backend.send(key: index, [Array("EXPIRE".utf8), index, lifetime, Array("NX".utf8)]) { _ in }
            } else if case .error? = reply {
                let day = Array(String(max(seconds + 60, 86_400)).utf8)
                backend.send(key: index, [Array("EXPIRE".utf8), index, day]) { _ in }
            }
        }
    }

    /// Stores the server refused, and the last reason (`/health`).
    private(set) var refusedStores: (count: Int, reason: String?) = (0, nil)
    private var lastRefusalLog = 0.0

    private func refusedStore(_ reason: String) {
        refusedStores = (refusedStores.count + 1, reason)
        let now = Double(EventLoop.monotonicNanoseconds()) / 1e9
        guard lastRefusalLog == 0 || now - lastRefusalLog >= 60 else { return }
        lastRefusalLog = now
        logger.warning(
            "shared cache tier \(description) refuses to store (\(reason)); entries are not shared until it takes them (said once a minute)"
        )
    }

    /// A host's index of entry names (a sorted set; `host:` named the set earlier versions kept).
    private func hostIndex(_ host: String) -> [UInt8] { Array((settings.prefix + "hosts:" + host.lowercased()).utf8) }
    private func olderHostIndex(_ host: String) -> [UInt8] {
        Array((settings.prefix + "host:" + host.lowercased()).utf8)
    }

    // MARK: - Purges and invalidation

    /// Removes `key` from the tier and tells the other instances to drop their copies (on the
    /// reconnect, when the tier is out now).
    func invalidate(key: String) {
        guard let backend, isAvailable else { return pending.add(key: key) }
        removeKey(key, backend)
        announce("key", key)
    }

    /// Deletes one key's entry; a deletion the server does not confirm (an error such as a
    /// Cluster's `CLUSTERDOWN`, or no answer) is kept for the next reconnect and counts as a
    /// failure (three take the tier out, and the reconnect carries it out).
    private func removeKey(_ key: String, _ backend: Backend) {
        let group = Deletions { [weak self] failure in
            guard let self, let failure else { return }
            self.pending.add(key: key)
            self.unconfirmed(failure)
        }
        group.delete(SharedRecord.redisKey(prefix: settings.prefix, key: key), on: backend)
        group.allSent()
    }

    /// Removes a host's entries (through the host index) and announces it.
    func purge(host: String) {
        guard let backend, isAvailable else { return pending.add(host: host) }
        removeHost(host, backend) { [weak self] failure in
            guard let self, let failure else { return }
            self.pending.add(host: host)
            self.unconfirmed(failure)
        }
        announce("host", host)
    }

    /// A deletion the tier did not confirm: kept (by the caller), and a failure.
    private func unconfirmed(_ reason: String) {
        logger.debug("shared cache tier: a deletion was not confirmed (\(reason)); kept for the reconnect")
        failed(reason)
    }

    /// Deletes a host's entries (its index, and the set earlier versions kept); `done(nil)` once
    /// every deletion is confirmed, else with why not.
    func removeHost(_ host: String, _ backend: Backend, done: @escaping (String?) -> Void) {
        let group = Deletions(done)
        var lists = 2
        func reply(_ name: [UInt8], _ reply: RedisConnection.Reply?) {
            switch reply {
            case .array(let members)?:
                for case .string(let member) in members { group.delete(member, on: backend) }
                group.delete(name, on: backend)
            case .error(let text)? where text.hasPrefix("WRONGTYPE"): break  // (not a list of ours)
            case .error(let text)?: group.failed(text)
            default: group.failed("the connection was lost")
            }
            lists -= 1
            if lists == 0 { group.allSent() }
        }
        let index = hostIndex(host)
        let older = olderHostIndex(host)
        if !backend.send(
            key: index, [Array("ZRANGE".utf8), index, Array("0".utf8), Array("-1".utf8)],
            reply: {
                reply(index, $0)
            })
        {
            reply(index, nil)
        }
        if !backend.send(key: older, [Array("SMEMBERS".utf8), older], reply: { reply(older, $0) }) {
            reply(older, nil)
        }
    }

    /// Removes every entry of this prefix (a URL glob cannot be matched in the tier, so a glob
    /// purge empties it too; over-purging only costs misses) and announces what was purged.
    func purgeAll(announcing announcement: Announcement = .all) {
        guard let backend, isAvailable else { return pending.addEverything(announcement) }
        removeAll(backend) { [weak self] failure in
            guard let self, let failure else { return }
            self.pending.addEverything(announcement)
            self.unconfirmed(failure)
        }
        announce(announcement)
    }

    /// Unlinks every entry of this prefix on every server (one by one: in a Cluster each key may
    /// live in another slot); `done(nil)` once every unlink is confirmed, else with why not.
    func removeAll(_ backend: Backend, done: @escaping (String?) -> Void) {
        let group = Deletions(done)
        let servers = backend.servers
        var scanning = servers.count
        guard scanning > 0 else {
            group.failed("no server to ask")
            return group.allSent()
        }
        for server in servers {
            scan(settings.prefix + "*", on: server, backend: backend) { names in
                for name in names { group.delete(name, on: backend, command: "UNLINK") }
            } done: { finished in
                if !finished { group.failed("a SCAN page did not come") }
                scanning -= 1
                if scanning == 0 { group.allSent() }
            }
        }
    }

    func announce(_ announcement: Announcement) {
        switch announcement {
        case .glob(let glob): announce("glob", glob)
        default: announce("all", "")
        }
    }

    /// Walks one server's keys that match `pattern` with SCAN, handing each page of names to
    /// `page`; `done(true)` after the last page, `done(false)` when a page did not come.
    func scan(
        _ pattern: String, on server: String, backend: Backend, cursor: String = "0",
        page: @escaping ([[UInt8]]) -> Void, done: @escaping (Bool) -> Void = { _ in }
    ) {
        let command = [
            Array("SCAN".utf8), Array(cursor.utf8), Array("MATCH".utf8), Array(pattern.utf8),
            Array("COUNT".utf8), Array("1000".utf8),
        ]
        let sent = backend.send(to: server, command) { [weak self] reply in
            guard let self, case .array(let parts)? = reply, parts.count == 2, let next = parts[0].text,
                case .array(let keys) = parts[1]
            else { return done(false) }
            page(keys.compactMap { if case .string(let name) = $0 { name } else { nil } })
            guard next != "0" else { return done(true) }
            self.scan(pattern, on: server, backend: backend, cursor: next, page: page, done: done)
        }
        if !sent { done(false) }
    }

    func announce(_ kind: String, _ subject: String) {
        let message = [Array("PUBLISH".utf8), Array(channel.utf8), Array("\(instance) \(kind) \(subject)".utf8)]
        backend?.sendToAny(message) { _ in }
    }

    private func received(_ message: [UInt8]) {
        let parts = String(decoding: message, as: UTF8.self).split(
            separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] != instance else { return }
        let subject = String(parts[2])
        switch parts[1] {
        case "key": onAnnouncement(.key(subject))
        case "host": onAnnouncement(.host(subject))
        case "glob": onAnnouncement(.glob(subject))
        case "all": onAnnouncement(.all)
        default: break
        }
    }
}

extension SharedTier {
    /// One server, or a Cluster (commands routed by their key's slot).
    enum Backend {
        case single(RedisConnection)
        case cluster(RedisCluster)

        var isClosed: Bool {
            switch self {
            case .single(let connection): if case .closed = connection.state { true } else { false }
            case .cluster(let cluster): if case .closed = cluster.state { true } else { false }
            }
        }

        /// The servers that hold keys (`""`: the one server), for SCAN and PING on each.
        var servers: [String] {
            switch self {
            case .single: [""]
            case .cluster(let cluster): cluster.masters
            }
        }

        /// A command about `key` (sent to its slot's master in a Cluster).
        @discardableResult
        func send(key: [UInt8], _ arguments: [[UInt8]], reply: @escaping (RedisConnection.Reply?) -> Void) -> Bool {
            switch self {
            case .single(let connection): connection.send(arguments, reply: reply)
            case .cluster(let cluster): cluster.send(key: key, arguments, reply: reply)
            }
        }

        /// One server's command, by address.
        @discardableResult
        func send(to server: String, _ arguments: [[UInt8]], reply: @escaping (RedisConnection.Reply?) -> Void) -> Bool
        {
            switch self {
            case .single(let connection): connection.send(arguments, reply: reply)
            case .cluster(let cluster): cluster.send(toMaster: server, arguments, reply: reply)
            }
        }

        /// The same command on every server; returns how many were sent.
        func sendToEach(_ arguments: [[UInt8]], reply: @escaping (String, RedisConnection.Reply?) -> Void) -> Int {
            servers.filter { server in send(to: server, arguments) { reply(server, $0) } }.count
        }

        /// A command for any server (PUBLISH reaches a whole Cluster).
        @discardableResult
        func sendToAny(_ arguments: [[UInt8]], reply: @escaping (RedisConnection.Reply?) -> Void) -> Bool {
            switch self {
            case .single(let connection): connection.send(arguments, reply: reply)
            case .cluster(let cluster): cluster.sendToAny(arguments, reply: reply)
            }
        }

        func close() {
            switch self {
            case .single(let connection): connection.close()
            case .cluster(let cluster): cluster.close()
            }
        }
    }
}

/// Deletions sent as a group (a key, a host's entries, every entry): `done(nil)` once every one
/// was confirmed and nothing more is to be sent (``allSent()``), else `done` with the first
/// reason one was not (an error, a lost connection). Called once.
final class Deletions {
    private var outstanding = 0
    private var sending = true
    private var failure: String?
    private var done: ((String?) -> Void)?

    init(_ done: @escaping (String?) -> Void) { self.done = done }

    func delete(_ name: [UInt8], on backend: SharedTier.Backend, command: String = "DEL") {
        outstanding += 1
        let sent = backend.send(key: name, [Array(command.utf8), name]) { [self] reply in
            switch reply {
            case .error(let text)?: failed(text)
            case nil: failed("the connection was lost")
            default: break
            }
            outstanding -= 1
            finishIfDone()
        }
        if !sent {
            failed("the connection was lost")
            outstanding -= 1
        }
    }

    func failed(_ reason: String) { if failure == nil { failure = reason } }

    func allSent() {
        sending = false
        finishIfDone()
    }

    private func finishIfDone() {
        guard !sending, outstanding == 0, let done else { return }
        self.done = nil
        done(failure)
    }
}
