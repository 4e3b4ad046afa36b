import EventIO

/// `GET /health`: up or stopping, the cache tiers, and whether the last upstream attempts succeeded.
extension AdminRoutes {
    func health() -> JSONValue {
        let recent = server.feed.recent
        let failures = recent.filter { $0.error != nil }
        let lastSuccess = recent.last { $0.error == nil }
        let lastFailure = failures.last
        // Reachable unless the latest attempts failed (no attempts yet: nothing against it).
        let reachable = recent.suffix(3).contains { $0.error == nil } || recent.isEmpty
        return .object([
            ("status", .string(proxy.isShuttingDown ? "stopping" : "ok")),
            ("uptime_s", .double((proxy.clock() - server.startTime).rounded())),
            ("listen", .string(proxy.localAddress.description)),
            ("connections", .number(proxy.openConnections)),
            (
                "cache",
                .string(
                    proxy.cache == nil
                        ? (proxy.configuration.cache.enabled ? "unavailable" : "off")
                        : proxy.cache?.failsStores == true ? "not-storing" : "ok")
            ),
            ("shared_cache", sharedHealth()),
            (
                "upstream",
                .object([
                    ("reachable", .bool(reachable)), ("recent_attempts", .number(recent.count)),
                    ("recent_failures", .number(failures.count)),
                    ("last_success", lastSuccess.map { .double($0.time) } ?? .null),
                    (
                        "last_failure",
                        lastFailure.map { .object([("time", .double($0.time)), ("error", .optional($0.error))]) }
                            ?? .null
                    ),
                ])
            ),
        ])
    }

    func sharedHealth() -> JSONValue {
        guard let shared = proxy.tiers?.shared else { return .string("off") }
        let state: String
        var reason: String?
        switch shared.health {
        case .connecting: state = "connecting"
        case .up: state = "up"
        case .down(let why):
            state = "down"
            reason = why
        }
        let counts = shared.counts
        return .object([
            ("server", .string(shared.description)), ("state", .string(state)), ("reason", .optional(reason)),
            ("lookups", .number(counts.lookups)), ("hits", .number(counts.hits)), ("stores", .number(counts.stores)),
            ("failures", .number(counts.failures)),
            // Writes a full (or read-only) server refused, and its last word on it.
            ("refused_stores", .number(shared.refusedStores.count)),
            ("refusal", .optional(shared.refusedStores.reason)),
        ])
    }
}
