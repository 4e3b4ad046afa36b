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

    /// `sluice cache purge` (another process than the proxies): the same purge in the shared tier
    /// and the same announcement, on a loop of its own, within `timeout` milliseconds.
    /// Returns why it could not, or `nil` when the tier confirmed every command.
    public static func purgeFromCommandLine(
        _ selector: CacheInspector.Selector, keys: [String], settings: Configuration.Cache.SharedTier,
        logger: Logger, timeout: Int = 3000
    ) -> String? {
        let loop: EventLoop
        do { loop = try EventLoop() } catch { return "no event loop: \(error)" }
        var failure: String? = "the shared tier \(settings.host):\(settings.port) did not answer within \(timeout) ms"
        let tier = SharedTier(settings: settings, loop: loop, logger: logger)
        tier.whenUp = { [unowned tier] in
            tier.whenUp = nil
            tier.purge(selector, keys: keys)
            tier.flush { confirmed in
                failure = confirmed ? nil : "the shared tier went away before it confirmed the purge"
                loop.stop()
            }
        }
        let deadline = Timer(loop: loop) { loop.stop() }
        deadline.schedule(milliseconds: timeout)
        loop.run()
        deadline.cancel()
        return failure
    }
}
