/// Purges through the admin API: the file (sparing what hits are reading), and the shared tier.
extension AdminRoutes {
    /// A purge reaches the shared tier and, through it, every other instance; while the tier is
    /// out it is carried out when it is back. What happened there (`nil`: no tier).
    func announce(_ selector: CacheInspector.Selector, inspector: CacheInspector) -> String? {
        guard let shared = proxy.tiers?.shared else { return nil }
        let reached = shared.isAvailable
        shared.purge(selector, keys: CacheInspector.keys(of: selector, in: inspector, now: proxy.clock()))
        // Sent; what the tier does not confirm is kept and sent again on the reconnect.
        if reached { return "sent and announced" }
        let why: String
        if case .down(let reason) = shared.health { why = reason } else { why = "connecting" }
        return "not reached now (\(why)): carried out when it is back"
    }

    func purge(_ query: [String: String]) -> Answer {
        let selectors: [CacheInspector.Selector] = [
            query["all"].map { _ in .all }, query["host"].map { .host($0) }, query["url"].map { .urlGlob($0) },
            query["key"].map { .keyOrURL($0) },
        ].compactMap { $0 }
        guard selectors.count == 1, let selector = selectors.first else {
            return .error(400, "say what to purge: ?all, ?host=H, ?url=GLOB or ?key=URL|ID")
        }
        return purge(selector, requireEntry: false)
    }

    func purge(_ selector: CacheInspector.Selector, requireEntry: Bool) -> Answer {
        do {
            let inspector = try inspector(writable: true)
            let shared = announce(selector, inspector: inspector)
            // What hits are reading stays until they end (hidden now).
            let reading = Set(proxy.cache.map { Array($0.readers.keys) } ?? [])
            let (entries, bytes, hidden) = try inspector.purge(selector, sparing: reading)
            proxy.cache?.doom(hidden)
            if requireEntry, entries == 0 { return .error(404, "nothing stored for that") }
            var members: [(String, JSONValue)] = [("purged", .number(entries)), ("bytes", .number(Int(bytes)))]
            if let shared { members.append(("shared", .string(shared))) }
            return .json(200, .object(members))
        } catch {
            return .error(503, "the cache could not be purged: \(error)")
        }
    }
}
