import EventIO
import Logging

extension SharedTier {
    /// What a purge does in the shared tier: the entries go, and every instance hears of it.
    /// `keys`: the URL keys a `keyOrURL` purge named (read from the local file before it purged).
    func purge(_ selector: CacheInspector.Selector, keys: [String]) {
        switch selector {
        case .all: purgeAll()
        case .host(let host): purge(host: host)
        case .urlGlob(let glob): purgeAll(announcing: .glob(glob))
        case .keyOrURL: for key in Set(keys) { invalidate(key: key) }
        }
    }

    /// The same, for a caller that waits: `done(nil)` once the tier confirmed every deletion,
    /// else with why not (the command line: nothing keeps its purge for a reconnect).
    func purge(_ selector: CacheInspector.Selector, keys: [String], done: @escaping (String?) -> Void) {
        guard let backend, isAvailable else { return done("the tier is out") }
        switch selector {
        case .all, .urlGlob:
            removeAll(backend, done: done)
            if case .urlGlob(let glob) = selector { announce(.glob(glob)) } else { announce(.all) }
        case .host(let host):
            removeHost(host, backend, done: done)
            announce("host", host)
        case .keyOrURL:
            let group = Deletions(done)
            for key in Set(keys) {
                group.delete(SharedRecord.redisKey(prefix: settings.prefix, key: key), on: backend)
                announce("key", key)
            }
            group.allSent()
        }
    }

    /// `sluice cache purge` (another process than the proxies): the same purge in the shared tier
    /// and the same announcement. Returns why it could not, or `nil` when the tier confirmed
    /// every command.
    public static func purgeFromCommandLine(
        _ selector: CacheInspector.Selector, keys: [String], settings: Configuration.Cache.SharedTier,
        logger: Logger, timeout: Int = 3000
    ) -> String? {
        onCommandLine(settings: settings, logger: logger, timeout: timeout) { tier, finish in
            tier.purge(selector, keys: keys) { failure in
                // (The announcements too: answered before the flush's PING.)
                tier.flush { confirmed in
                    finish(failure ?? (confirmed ? nil : "the shared tier went away before it confirmed the purge"))
                }
            }
        }
    }
}
