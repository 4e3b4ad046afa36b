import Codec
import EventIO

/// What each admin endpoint answers. The cache endpoints go through ``CacheInspector``, the same
/// query layer as `sluice cache`.
struct AdminRoutes {
    unowned let server: AdminServer

    enum Answer {
        case json(Int, JSONValue)
        /// A refusal: its status and what to say (an `application/problem+json` answer).
        case error(Int, String)
        case text(contentType: String, String)
        /// A stored body, sent chunk by chunk as the client reads it.
        case body(HTTPFields, length: Int64, CacheInspector, entry: Int64)
        case events
        /// A file of the admin page (``AdminPage``).
        case asset(contentType: String, [UInt8])
        /// Bytes kept in memory (a watched exchange's body).
        case bytes(HTTPFields, [UInt8])
        /// An answer that waits (for the shared tier, at most a second or its timeout; for a
        /// composed request). What starts it may return what to do if the caller leaves first.
        case awaiting((@escaping (Answer) -> Void) -> (() -> Void)?)
    }

    var proxy: ProxyServer { server.proxy }

    /// The methods a path takes (the `Allow` of its 405, RFC 9110 §15.5.6); the answer's routes
    /// below are the truth, this table says them.
    static func allowedMethods(_ path: String) -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        switch (parts.first ?? "", parts.count) {
        case ("tls", 2): return "GET, HEAD, DELETE"
        case ("rules", 3): return "PUT"
        case ("compose", 1), ("purge", 1): return "POST"
        case ("breakpoints", 2): return "GET, HEAD, PUT, DELETE"
        case ("paused", 3): return "POST"
        case ("cache", 2): return "GET, HEAD, DELETE"
        default: return "GET, HEAD"
        }
    }

    func answer(method: String, path: String, query: [String: String], body: [UInt8] = []) -> Answer {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        let reading = method == "GET" || method == "HEAD"
        if reading, let asset = AdminPage.asset(path) { return .asset(contentType: asset.type, asset.bytes) }
        if reading, parts.count == 3, parts[0] == "exchanges", parts[2] == "body" { return exchangeBody(parts[1]) }
        if parts == ["tls", "passthrough"] {
            switch method {
            case "GET", "HEAD": return .json(200, passthroughList())
            case "DELETE": return clearPassthrough(host: query["host"])
            default: return .error(405, "\(method) is not allowed on \(path)")
            }
        }
        if parts.first == "rules" { return rules(method: method, parts: Array(parts.dropFirst()), query: query) }
        if parts == ["contracts"], reading { return .json(200, contractCoverage(rule: query["rule"])) }
        if parts.first == "device", reading { return device(parts) }
        if parts.first == "breakpoints" {
            return breakpoints(method: method, parts: Array(parts.dropFirst()), body: body)
        }
        if parts.first == "paused" { return paused(method: method, parts: Array(parts.dropFirst()), body: body) }
        if parts == ["compose"] {
            return method == "POST" ? compose(body) : .error(405, "POST a draft to /compose")
        }
        let known: Set<String> = ["health", "stats", "metrics", "events", "cache", "purge", "series"]
        guard let first = parts.first, known.contains(first), parts.count <= 3,
            parts.count == 1 || first == "cache", parts.count < 3 || parts[2] == "body"
        else {
            return .error(
                404,
                "no such endpoint; try / (the page), /health, /stats, /metrics, /series, /cache, /cache/{id}, /cache/{id}/body, /exchanges/{id}/body, /events, POST /purge, /tls/passthrough, /rules, PUT /rules/{name}/faults, /contracts, /device, /device/qr.png, POST /compose, /breakpoints, PUT|DELETE /breakpoints/{name}, /paused, POST /paused/{id}/resume|abort|answer"
            )
        }
        let notAllowed = Answer.error(405, "\(method) is not allowed on \(path)")
        switch (first, parts.count) {
        case ("cache", 2) where method == "DELETE":
            return purge(.keyOrURL(parts[1]), requireEntry: true)
        case ("purge", _):
            return method == "POST" ? purge(query) : notAllowed
        case _ where !reading:
            return notAllowed
        case ("health", _): return .json(200, health())
        case ("stats", _): return .json(200, stats())
        case ("metrics", _):
            return .text(
                contentType: "text/plain; version=0.0.4; charset=utf-8", server.metrics.text(proxy, feed: server.feed))
        case ("events", _): return .events
        case ("series", _):
            let seconds = query["seconds"].flatMap { Int($0) } ?? Series.seconds
            return .json(200, server.feed.series.json(now: proxy.clock(), seconds: seconds))
        case ("cache", 1): return cacheList(query)
        case ("cache", 2): return cacheEntry(parts[1])
        default: return cacheBody(parts[1])
        }
    }

    // MARK: - Stats (health: AdminRoutes+Health.swift)

    private func stats() -> JSONValue {
        let stats = proxy.stats
        var cache: [(String, JSONValue)] = [("enabled", .bool(proxy.cache != nil))]
        if let store = proxy.cache {
            store.noticeChangesElsewhere()  // a purge by the CLI counts at once, not at the next request
            cache += [
                ("bytes", .number(Int(store.totalBytes))), ("capacity", .number(Int(store.capacity))),
                ("hits", .number(stats.cacheHits)), ("stores", .number(stats.cacheStores)),
                ("collapsed_waiting", .number(proxy.collapserWaiting)),
                ("shared", sharedHealth()),
            ]
        }
        let minter = proxy.interceptor?.context.minter
        let tlsStats = JSONValue.object([
            ("intercepting", .bool(proxy.interceptor != nil)), ("intercepted", .number(stats.tlsIntercepted)),
            ("certificate_refusals", .number(stats.tlsCertificateRefusals)),
            ("handshake_failures", .number(stats.tlsHandshakeFailures)),
            ("passthrough", passthroughList()), ("passthrough_started", .number(stats.tlsPassthroughStarted)),
            ("passthrough_tunnels", .number(stats.tlsPassthroughTunnels)),
            ("leaves_minted", .number(minter?.minted ?? 0)), ("leaves_kept", .number(minter?.count ?? 0)),
            (
                "leaf_mint_ms_mean",
                .double(
                    ((minter.map { $0.minted > 0 ? Double($0.mintingNanoseconds) / Double($0.minted) / 1e3 : 0 } ?? 0)
                        .rounded() / 1000))
            ),
        ])
        return .object([
            (
                "connections",
                .object([
                    ("open", .number(stats.connectionsOpen)), ("accepted", .number(stats.connectionsAccepted)),
                    ("refused", .number(stats.connectionsRefused)),
                ])
            ),
            ("requests", .number(stats.requests)), ("responses", .number(stats.responses)),
            ("errors", .number(stats.errors)), ("tunnels", .number(stats.tunnels)),
            ("tunnels_carrying_http", .number(stats.tunnelsCarryingHTTP)),
            ("upgrades", .number(stats.upgrades)), ("websocket_messages", .number(stats.webSocketMessages)),
            ("tls", tlsStats),
            ("faults", faultCounts()),
            ("recording", recordingStats()), ("replay", replayStats()),
            (
                "upstream",
                .object([
                    ("tasks", .number(stats.upstreamTasks)), ("connections", .number(stats.upstreamConnections)),
                    // Which transport carried each task (its last transfer): upstream.engine.
                    (
                        "transfers",
                        .object([
                            ("native", .number(stats.upstreamNativeTransfers)),
                            ("curl", .number(stats.upstreamCurlTransfers)),
                        ])
                    ),
                    // Bodies moved socket to socket in the kernel (large plain pass-through).
                    (
                        "spliced",
                        .object([
                            ("bodies", .number(stats.upstreamSplicedBodies)),
                            ("bytes", .number(Int(stats.upstreamSplicedBytes))),
                        ])
                    ),
                    // The parents by description: never their credentials.
                    ("parent_http", .optional(proxy.environment.parents.forHTTP?.description)),
                    ("parent_https", .optional(proxy.environment.parents.forHTTPS?.description)),
                    (
                        "parent_tls",
                        .object([
                            ("handshakes", .number(stats.parentTLSHandshakes)),
                            ("resumed", .number(stats.parentTLSResumed)),
                        ])
                    ),
                ])
            ),
            (
                "validation",
                .object([
                    ("rejected", .number(stats.validationRejected)), ("reported", .number(stats.validationReported)),
                ])
            ),
            ("contracts", contractStats()),
            (
                "json",
                .object([("stripped", .number(stats.jsonStripped)), ("untouched", .number(stats.jsonUntouched))])
            ),
            ("cache", .object(cache)),
            (
                "events",
                .object([
                    ("subscribers", .number(server.feed.subscriberCount)), ("dropped", .number(server.feed.dropped)),
                ])
            ),
        ])
    }

    // MARK: - Cache

    func inspector(writable: Bool = false) throws -> CacheInspector {
        try CacheInspector(settings: proxy.configuration.cache, writable: writable)
    }

    private func unavailable(_ error: any Error) -> Answer {
        .error(503, "the cache cannot be read: \(error)")
    }

    /// A watched exchange's body as the client got it (the first MiB), while the feed keeps it.
    private func exchangeBody(_ id: String) -> Answer {
        guard let number = Int(id), let capture = server.feed.bodies.capture(number) else {
            return .error(404, "no body kept for exchange \(id) (kept while the page watches)")
        }
        var headers = HTTPFields()
        let fields = capture.responseFields
        let type = fields.first { $0.0.lowercased() == "content-type" }?.1
        headers.append(name: "Content-Type", value: type ?? "application/octet-stream", code: .contentType)
        let whole = capture.bodyTotal == Int64(capture.body.count)
        if let coding = fields.first(where: { $0.0.lowercased() == "content-encoding" })?.1 {
            // A cut compressed body cannot be decoded: it is offered as bytes.
            if whole {
                headers.append(name: "Content-Encoding", value: coding, code: .contentEncoding)
            } else {
                headers.set("Content-Type", "application/octet-stream")
            }
        }
        headers.append(name: "Sluice-Body-Total", value: String(capture.bodyTotal))
        return .bytes(headers, capture.body)
    }

    private func cacheSearch(_ text: String, limit: Int) -> Answer {
        do {
            let found = try inspector().search(
                text, in: [.url, .headers, .body], limit: limit, now: proxy.clock(),
                decode: { coding, body in
                    try? ContentCoding(token: coding)?.decode(body, limit: 16 << 20)
                })
            let entries = found.map { match in
                var json = match.entry.json(headers: false)
                if case .object(var members) = json {
                    members.append(("matched", .array(match.places.map { .string($0.rawValue) })))
                    json = .object(members)
                }
                return (key: match.entry.key, json: json)
            }
            return withTiers(entries) { .json(200, .array($0)) }
        } catch {
            return unavailable(error)
        }
    }

    private func cacheList(_ query: [String: String]) -> Answer {
        if let text = query["q"], !text.isEmpty {
            return cacheSearch(text, limit: min(Int(query["limit"] ?? "") ?? 100, 1000))
        }
        var filter = CacheInspector.Filter()
        filter.host = query["host"]
        filter.url = query["url"]
        filter.contentType = query["content_type"]
        if let status = query["status"] {
            guard let code = Int(status) else { return .error(400, "status must be a number") }
            filter.status = code
        }
        if query["stale"] != nil { filter.freshness = .stale }
        if query["fresh"] != nil { filter.freshness = .fresh }
        if let sort = query["sort"] {
            guard let order = CacheInspector.Filter.Order(rawValue: sort) else {
                return .error(400, "sort takes recent, size, hits or age")
            }
            filter.order = order
        }
        if let limit = query["limit"] {
            guard let count = Int(limit), count >= 0 else {
                return .error(400, "limit must be a number")
            }
            filter.limit = min(count, 10_000)
        }
        do {
            let entries = try inspector().list(filter, now: proxy.clock())
            return withTiers(entries.map { ($0.key, $0.json(headers: false)) }) { .json(200, .array($0)) }
        } catch {
            return unavailable(error)
        }
    }

    private func cacheEntry(_ id: String) -> Answer {
        guard Int64(id) != nil else { return .error(400, "an entry is named by its id") }
        do {
            let inspector = try inspector()
            guard let entry = try inspector.entries(for: id, now: proxy.clock()).first else {
                return .error(404, "no entry \(id)")
            }
            // With what the page explains: the variants of its URL and the last storing decision.
            guard case .object(var members) = entry.json(headers: true) else { return .json(200, .null) }
            let variants = try inspector.entries(for: entry.url, now: proxy.clock())
            members.append(
                (
                    "variants",
                    .array(variants.map { .object([("id", .number(Int($0.id))), ("variant", .string($0.variant))]) })
                ))
            if let decision = try inspector.decision(for: entry.key) {
                members.append(
                    (
                        "decision",
                        .object([
                            ("time", .double(decision.time)), ("stored", .bool(decision.stored)),
                            ("reason", .optional(decision.reason)),
                        ])
                    ))
            }
            return withTiers([(entry.key, .object(members))]) { .json(200, $0.first ?? .null) }
        } catch {
            return unavailable(error)
        }
    }

    /// Entries of the local file with the tiers that hold them: `tiers` (`local`, and `shared`
    /// when the shared tier has the key too) and `shared` (`null` when the tier did not say).
    /// Without a shared tier only `tiers`, at once.
    private func withTiers(_ entries: [(key: String, json: JSONValue)], _ answer: @escaping ([JSONValue]) -> Answer)
        -> Answer
    {
        func adding(_ json: JSONValue, _ extra: [(String, JSONValue)]) -> JSONValue {
            guard case .object(let members) = json else { return json }
            return .object(members + extra)
        }
        guard let shared = proxy.tiers?.shared else {
            return answer(entries.map { adding($0.json, [("tiers", .array([.string("local")]))]) })
        }
        return .awaiting { deliver in
            shared.holds(entries.map(\.key), within: max(shared.settings.timeout, 1000)) { held in
                deliver(
                    answer(
                        entries.map { entry in
                            let inShared = held?.contains(entry.key)
                            let tiers = ["local"] + (inShared == true ? ["shared"] : [])
                            return adding(
                                entry.json,
                                [
                                    ("tiers", .array(tiers.map { .string($0) })),
                                    ("shared", inShared.map { .bool($0) } ?? .null),
                                ]
                            )
                        }))
            }
            return nil  // (bounded by its timeout)
        }
    }

    private func cacheBody(_ id: String) -> Answer {
        guard let number = Int64(id) else { return .error(400, "an entry is named by its id") }
        do {
            let inspector = try inspector()
            guard let entry = try inspector.entries(for: id, now: proxy.clock()).first else {
                return .error(404, "no entry \(id)")
            }
            var headers = HTTPFields()
            headers.append(
                name: "Content-Type", value: entry.contentType ?? "application/octet-stream", code: .contentType)
            if let coding = entry.headers[.contentEncoding] {
                headers.append(name: "Content-Encoding", value: coding, code: .contentEncoding)
            }
            return .body(headers, length: entry.size, inspector, entry: number)
        } catch {
            return unavailable(error)
        }
    }

}
