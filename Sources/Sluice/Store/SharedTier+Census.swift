import EventIO
import Logging
import Redis

/// What the shared tier holds: for `sluice cache stats`/`list`/`show` and the admin API, which
/// say which tier has an entry.
extension SharedTier {
    /// The tier's entries under this prefix.
    public struct Census: Sendable, Equatable {
        /// Stored entries (the host index sets not counted).
        public var entries = 0
        /// The servers counted (a Cluster's masters).
        public var servers = 0
        /// `used_memory` summed over them: all they hold, not only Sluice's entries.
        public var memory: Int64 = 0
    }

    /// Counts the entries (a SCAN of each server) and the servers' memory; `nil` when the tier
    /// is out or a server did not answer.
    func census(_ done: @escaping (Census?) -> Void) {
        guard let backend, isAvailable else { return done(nil) }
        var census = Census()
        var waiting = 0
        var failed = false
        func settle(_ ok: Bool) {
            if !ok { failed = true }
            waiting -= 1
            if waiting == 0 { done(failed ? nil : census) }
        }
        for server in backend.servers {
            census.servers += 1
            waiting += 2
            let askedMemory = backend.send(to: server, [Array("INFO".utf8), Array("memory".utf8)]) { reply in
                let line = reply?.text?.split(whereSeparator: \.isNewline).first { $0.hasPrefix("used_memory:") }
                census.memory += line.flatMap { Int64($0.dropFirst("used_memory:".count)) } ?? 0
                settle(line != nil)
            }
            if !askedMemory { settle(false) }
            scan(settings.prefix + "{*}:entry", on: server, backend: backend) { names in
                census.entries += names.count
            } done: { finished in
                settle(finished)
            }
        }
        if waiting == 0 { done(nil) }
    }

    /// Which of `keys` (cache keys) the tier holds now, one EXISTS each, pipelined; `nil` when
    /// the tier is out or did not answer.
    func holds(_ keys: [String], _ done: @escaping (Set<String>?) -> Void) {
        guard let backend, isAvailable else { return done(nil) }
        guard !keys.isEmpty else { return done([]) }
        var waiting = keys.count
        var held = Set<String>()
        var failed = false
        for key in keys {
            let redisKey = SharedRecord.redisKey(prefix: settings.prefix, key: key)
            let sent = backend.send(key: redisKey, [Array("EXISTS".utf8), redisKey]) { reply in
                switch reply {
                case .integer(let count)?: if count > 0 { held.insert(key) }
                default: failed = true
                }
                waiting -= 1
                if waiting == 0 { done(failed ? nil : held) }
            }
            if !sent {
                failed = true
                waiting -= 1
            }
        }
        if waiting == 0 { done(nil) }
    }

    /// ``holds(_:_:)`` within the tier's `timeout` (never longer), on the proxy's loop.
    func holds(_ keys: [String], within milliseconds: Int, _ done: @escaping (Set<String>?) -> Void) {
        var pending: ((Set<String>?) -> Void)? = done
        let timer = Timer(loop: loop) {
            pending?(nil)
            pending = nil
        }
        timer.schedule(milliseconds: milliseconds)
        holds(keys) { held in
            timer.cancel()
            pending?(held)
            pending = nil
        }
    }

    /// An entry of the shared tier, as `sluice cache show` prints it.
    public struct Entry: Sendable {
        public let url: String
        public let status: Int
        public let reason: String
        /// When the response arrived (seconds since 1970).
        public let responseTime: Double
        public let size: Int
        /// The request header values it was selected by (`Vary`), one `name: value` per line.
        public let variant: String
        public let headers: [(name: String, value: String)]
    }

    // MARK: - From the command line

    /// `sluice cache show URL` when this instance's file has nothing for it: the shared tier's
    /// entry for the key (`nil`: none), or why the tier could not say.
    public static func entryFromCommandLine(
        key: String, settings: Configuration.Cache.SharedTier, logger: Logger, timeout: Int = 3000
    ) -> Result<Entry?, CommandLineFailure> {
        var patient = settings
        patient.timeout = timeout  // not a proxy's lookup: there is time
        var found: Entry?
        let failure = onCommandLine(settings: patient, logger: logger, timeout: timeout + 1000) { tier, finish in
            tier.lookup(key) { record in
                found = record.map {
                    Entry(
                        url: $0.url, status: $0.status, reason: $0.reason, responseTime: $0.responseTime,
                        size: $0.body.count, variant: $0.variant, headers: $0.headers.map { ($0.name, $0.value) })
                }
                // A lookup that failed took the tier down (and said why there); none is nil.
                finish(tier.isAvailable ? nil : "the shared tier did not answer")
            }
        }
        if let failure { return .failure(CommandLineFailure(failure)) }
        return .success(found)
    }

    /// `sluice cache stats`: the census, or why there is none.
    public static func censusFromCommandLine(
        settings: Configuration.Cache.SharedTier, logger: Logger, timeout: Int = 10_000
    ) -> Result<Census, CommandLineFailure> {
        var census: Census?
        let failure = onCommandLine(settings: settings, logger: logger, timeout: timeout) { tier, finish in
            tier.census { counted in
                census = counted
                finish(counted == nil ? "the shared tier did not answer every SCAN" : nil)
            }
        }
        return census.map { .success($0) } ?? .failure(CommandLineFailure(failure ?? "no census"))
    }

    /// `sluice cache list`/`show`: which of `keys` the tier holds, or why that is not known.
    public static func holdsFromCommandLine(
        _ keys: [String], settings: Configuration.Cache.SharedTier, logger: Logger, timeout: Int = 3000
    ) -> Result<Set<String>, CommandLineFailure> {
        var held: Set<String>?
        let failure = onCommandLine(settings: settings, logger: logger, timeout: timeout) { tier, finish in
            tier.holds(keys) { answer in
                held = answer
                finish(answer == nil ? "the shared tier did not answer" : nil)
            }
        }
        return held.map { .success($0) } ?? .failure(CommandLineFailure(failure ?? "not known"))
    }

    /// Why the command line got no answer from the tier.
    public struct CommandLineFailure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Runs `work` against the tier on a loop of its own (another process than the proxies),
    /// once it is up, for at most `timeout` milliseconds. Returns why it could not, or `nil`.
    static func onCommandLine(
        settings: Configuration.Cache.SharedTier, logger: Logger, timeout: Int,
        _ work: @escaping (SharedTier, _ finish: @escaping (String?) -> Void) -> Void
    ) -> String? {
        let loop: EventLoop
        do { loop = try EventLoop() } catch { return "no event loop: \(error)" }
        var failure: String? = "the shared tier \(settings.host):\(settings.port) did not answer within \(timeout) ms"
        let tier = SharedTier(settings: settings, loop: loop, logger: logger)
        tier.whenUp = { [unowned tier] in
            tier.whenUp = nil
            work(tier) { reason in
                failure = reason
                loop.stop()
            }
        }
        tier.whenDown = { reason in
            failure = "the shared tier \(describe(settings)) is down (\(reason))"
            loop.stop()
        }
        let deadline = Timer(loop: loop) { loop.stop() }
        deadline.schedule(milliseconds: timeout)
        loop.run()
        deadline.cancel()
        return failure
    }
}
