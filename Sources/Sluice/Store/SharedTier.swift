import EventIO
import Logging
import Redis

/// The shared tier (`cache.shared`): stored responses on a Redis (or Valkey) server that several
/// Sluice instances read and write, below each one's SQLite file. Spoken on the proxy's own loop
/// (hiredis's libevent adapter): a lookup never waits longer than `timeout`, a write never holds
/// up a client. A circuit breaker takes the tier out (local tier only) after failures and tries
/// again with growing pauses; each change of state is logged once. Purges and invalidations are
/// announced on a channel so that every instance drops its local copies. Loop-confined.
public final class SharedTier {
    let settings: Configuration.Cache.SharedTier
    let loop: EventLoop
    let logger: Logger
    private(set) var backend: Backend?
    private var subscriber: RedisConnection?
    /// Distinguishes this instance's announcements from the others' (its own are ignored).
    let instance = String(UInt64.random(in: 1...UInt64.max), radix: 36)

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
    var breaker = CircuitBreaker()
    var health: Health { breaker.health }
    private var reconnectTimer: Timer?
    var counts = (lookups: 0, hits: 0, stores: 0, failures: 0)

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
        let awaited = AwaitedReply(loop: loop, milliseconds: limit) { [weak self] in
            self?.failed("the server did not answer PING within \(limit) ms", lost: true)
        }
        let sent = backend.sendToAny([Array("PING".utf8)]) { [weak self] reply in
            guard awaited.settle(), let self else { return }
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
        if !sent, awaited.settle() { failed("the connection was lost", lost: true) }
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

    /// Replays of host and whole purges still running: lookups wait for them (``isAvailable``).
    var replaying = 0

    /// Purges and invalidations made while the tier was out, for the reconnect.
    var pending = PendingPurges()

    /// A failure: after three in a row (or a lost connection) the tier is out until a reconnect.
    /// `lost`: the connection is of no use whatever its state (an unconfirmed one).
    func failed(_ reason: String, lost: Bool = false) {
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

    /// Stores the server refused, and the last reason (`/health`).
    var refusedStores: (count: Int, reason: String?) = (0, nil)
    var lastRefusalLog = 0.0

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

/// A reply awaited for at most a time: whichever comes first, the reply or the time running out,
/// counts (``settle()``); `expired` runs if the time does.
final class AwaitedReply {
    private var settled = false
    private var timer: Timer?

    init(loop: EventLoop, milliseconds: Int, expired: @escaping () -> Void) {
        let timer = Timer(loop: loop) { [weak self] in
            guard let self, self.settle() else { return }
            expired()
        }
        timer.schedule(milliseconds: milliseconds)
        self.timer = timer
    }

    /// Whether this is the first to settle it (the timer is then stopped).
    func settle() -> Bool {
        guard !settled else { return false }
        settled = true
        timer?.cancel()
        return true
    }
}
