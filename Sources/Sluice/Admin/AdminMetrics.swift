import Contract
import Metrics
import Prometheus

/// The proxy's metrics through swift-metrics, kept in a Prometheus registry of the admin server
/// (not the process-wide one: several proxies in one process keep their own) and written by
/// `GET /metrics` in the text exposition format. Exchanges are counted and timed as they finish;
/// the counters of ``Stats`` are brought up to date at each scrape.
final class AdminMetrics: EventMonitor {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let responsesByClass: [Metrics.Counter]
    /// By outcome name; a handful, searched in order (comparing short strings costs less than
    /// hashing one per response).
    private let cacheOutcomes: [(outcome: String, counter: Metrics.Counter)]
    // Timings of every exchange: plain counters on the loop thread, written at the scrape (five
    // swift-metrics timers cost a lock and a Duration search each, 2 % of a pass-through request).
    private let exchangeDuration = TimingHistogram(
        "sluice_exchange_duration_seconds", help: "Time from a request's head to the end of its response.")
    private let firstByte = TimingHistogram(
        "sluice_upstream_first_byte_seconds", help: "Time from sending a request upstream to its response's first byte."
    )
    private let dns = TimingHistogram(
        "sluice_upstream_dns_seconds", help: "Time resolving origin names.")
    private let connect = TimingHistogram(
        "sluice_upstream_connect_seconds", help: "Time connecting to origins.")
    private let tls = TimingHistogram(
        "sluice_upstream_tls_seconds", help: "Time of TLS handshakes with origins.")
    private let stats: [(counter: Metrics.Counter, value: (Stats) -> Int)]
    private var reported: [Int]
    private let connectionsOpen: Metrics.Gauge
    private let cacheBytes: Metrics.Gauge
    private let cacheCapacity: Metrics.Gauge
    private let eventSubscribers: Metrics.Gauge

    /// Histogram buckets from 0.25 ms to 10 s: a hit takes well under a millisecond.
    static let buckets: [Double] = [
        0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    init() {
        let factory = PrometheusMetricsFactory(registry: registry)
        self.factory = factory
        // Each family's `# HELP`, said where it is declared (the registry writes none).
        var helps: [String: String] = [:]
        func family(_ name: String, _ help: String) -> String {
            helps[name] = help
            return name
        }
        let responses = family("sluice_responses_total", "Responses sent to clients, by status class.")
        responsesByClass = (1...5).map {
            Metrics.Counter(label: responses, dimensions: [("class", "\($0)xx")], factory: factory)
        }
        let lookups = family("sluice_cache_lookups_total", "Cache lookups, by outcome.")
        cacheOutcomes = ["hit", "miss", "stale", "collapsed", "stale_if_error", "bypass"].map {
            ($0, Metrics.Counter(label: lookups, dimensions: [("outcome", $0)], factory: factory))
        }
        func counter(
            _ name: String, _ help: String, _ dimensions: [(String, String)] = [],
            _ value: @escaping (Stats) -> Int
        ) -> (Metrics.Counter, (Stats) -> Int) {
            (Metrics.Counter(label: family(name, help), dimensions: dimensions, factory: factory), value)
        }
        let validationHelp = "Responses that failed the rules' validation, rejected or only reported."
        let stripHelp = "JSON request bodies looked at for null-valued keys, by outcome."
        let transfersHelp = "Upstream transfers, by engine (native HTTP/1.1 or libcurl)."
        stats = [
            counter("sluice_requests_total", "Request heads parsed (CONNECTs included).") { $0.requests },
            counter("sluice_errors_total", "Exchanges that ended in an error: a problem response or a cut connection.")
            { $0.errors },
            counter("sluice_connections_accepted_total", "Client connections accepted.") { $0.connectionsAccepted },
            counter("sluice_connections_refused_total", "Client connections refused (max_connections, allow_clients).")
            { $0.connectionsRefused },
            counter("sluice_tunnels_total", "CONNECT tunnels opened.") { $0.tunnels },
            counter("sluice_tunnels_spliced_total", "Tunnels whose bytes moved socket to socket in the kernel.") {
                $0.tunnelsSpliced
            },
            counter(
                "sluice_tunnels_carrying_http_total",
                "Tunnels whose client spoke plain HTTP inside, served as requests."
            ) { $0.tunnelsCarryingHTTP },
            counter("sluice_upgrades_total", "Upgraded exchanges relayed (WebSocket and others).") { $0.upgrades },
            counter("sluice_websocket_messages_total", "WebSocket messages relayed.") { $0.webSocketMessages },
            counter("sluice_tls_intercepted_total", "TLS connections intercepted with the local CA.") {
                $0.tlsIntercepted
            },
            counter(
                "sluice_tls_certificate_refusals_total",
                "Intercepted handshakes the client refused (it does not trust the CA)."
            ) { $0.tlsCertificateRefusals },
            counter(
                "sluice_tls_passthrough_started_total",
                "Passthrough windows started (a client refused the CA twice within a minute)."
            ) { $0.tlsPassthroughStarted },
            counter(
                "sluice_tls_passthrough_tunnels_total",
                "Tunnels opened blind because their client was in a passthrough window."
            ) { $0.tlsPassthroughTunnels },
            counter(
                "sluice_tls_handshake_failures_total",
                "Intercepted handshakes that failed for another reason than the certificate."
            ) { $0.tlsHandshakeFailures },
            counter(
                "sluice_upstream_tasks_total",
                "Upstream tasks started (one per request sent upstream, redirects included)."
            ) { $0.upstreamTasks },
            counter(
                "sluice_upstream_connections_total",
                "Upstream tasks that opened a new connection (the rest reused one)."
            ) { $0.upstreamConnections },
            counter("sluice_upstream_transfers_total", transfersHelp, [("engine", "native")]) {
                $0.upstreamNativeTransfers
            },
            counter("sluice_upstream_transfers_total", transfersHelp, [("engine", "curl")]) {
                $0.upstreamCurlTransfers
            },
            counter("sluice_upstream_spliced_bodies_total", "Response bodies moved origin to client in the kernel.") {
                $0.upstreamSplicedBodies
            },
            counter("sluice_upstream_spliced_bytes_total", "Bytes of those bodies.") { Int($0.upstreamSplicedBytes) },
            counter("sluice_cache_hits_total", "Responses served from the cache.") { $0.cacheHits },
            counter("sluice_cache_stores_total", "Responses stored in the cache.") { $0.cacheStores },
            counter("sluice_validation_failures_total", validationHelp, [("outcome", "rejected")]) {
                $0.validationRejected
            },
            counter("sluice_validation_failures_total", validationHelp, [("outcome", "reported")]) {
                $0.validationReported
            },
            counter("sluice_json_strip_total", stripHelp, [("outcome", "stripped")]) { $0.jsonStripped },
            counter("sluice_json_strip_total", stripHelp, [("outcome", "untouched")]) { $0.jsonUntouched },
        ]
        reported = [Int](repeating: 0, count: stats.count)
        connectionsOpen = Metrics.Gauge(
            label: family("sluice_connections_open", "Client connections open now."), factory: factory)
        cacheBytes = Metrics.Gauge(label: family("sluice_cache_bytes", "Bytes the cache holds."), factory: factory)
        cacheCapacity = Metrics.Gauge(
            label: family("sluice_cache_capacity_bytes", "The cache's configured capacity in bytes."), factory: factory)
        eventSubscribers = Metrics.Gauge(
            label: family("sluice_event_subscribers", "Clients following the admin event stream now."), factory: factory
        )
        sharedUp = Metrics.Gauge(
            label: family("sluice_shared_cache_up", "1 while the shared (Redis) tier is in use, else 0."),
            factory: factory)
        let shared = family("sluice_shared_cache_operations_total", "Operations on the shared tier, by kind.")
        sharedCounters = ["lookup", "hit", "store", "failure", "refused"].map { operation in
            Metrics.Counter(label: shared, dimensions: [("operation", operation)], factory: factory)
        }
        // Made as they are first seen (``labelledCounter(_:_:)``).
        _ = family("sluice_contract_checks_total", "Exchanges checked against an API contract, by rule and outcome.")
        _ = family("sluice_contract_violations_total", "Contract violations, by rule, operation and schema keyword.")
        _ = family("sluice_faults_injected_total", "Faults injected, by rule and kind.")
        self.helps = helps
    }

    /// Each family's `# HELP` text, by name.
    private let helps: [String: String]

    /// The shared tier: 1 while it is in use, and its lookups, hits, stores, failures and refused stores.
    private let sharedUp: Metrics.Gauge
    private let sharedCounters: [Metrics.Counter]
    private var sharedReported = [0, 0, 0, 0, 0]

    /// Counters with labels known only at run time (`sluice_contract_checks_total{rule,outcome}`,
    /// `sluice_contract_violations_total{rule,operation,keyword}`,
    /// `sluice_faults_injected_total{rule,kind}`), made as they are first seen, at most 2 000.
    private var labelledCounters: [String: Metrics.Counter] = [:]

    private func labelledCounter(_ label: String, _ dimensions: [(String, String)]) -> Metrics.Counter {
        let key = label + dimensions.map { $0.0 + "=" + $0.1 }.joined(separator: ",")
        if let known = labelledCounters[key] { return known }
        let counter = Metrics.Counter(label: label, dimensions: dimensions, factory: factory)
        labelledCounters[key] = counter
        return counter
    }

    private func countContract(_ record: ExchangeRecord) {
        guard let outcome = record.contract, let rule = record.rule else { return }
        labelledCounter("sluice_contract_checks_total", [("rule", rule), ("outcome", outcome.kind)]).increment()
        for failure in record.contractFailures where labelledCounters.count < 2000 {
            let operation = failure.operationId ?? failure.template.map { "\(failure.method) \($0)" } ?? "-"
            var keywords: [String: Int] = [:]
            for violation in failure.violations { keywords[violation.keyword, default: 0] += 1 }
            // Past the violations kept (20), only their number is known.
            if failure.total > failure.violations.count {
                keywords["unlisted", default: 0] += failure.total - failure.violations.count
            }
            for (keyword, count) in keywords {
                labelledCounter(
                    "sluice_contract_violations_total",
                    [("rule", rule), ("operation", operation), ("keyword", keyword)]
                ).increment(by: count)
            }
        }
    }

    /// Fault injections already counted, by rule and kind.
    private var faultsReported: [String: Int] = [:]

    func exchangeDidComplete(_ record: ExchangeRecord) {
        countContract(record)
        if (100..<600).contains(record.status) { responsesByClass[record.status / 100 - 1].increment() }
        exchangeDuration.record(record.duration)
        if let status = record.cacheStatus {
            let summary = status.summary
            cacheOutcomes.first { $0.outcome == summary }?.counter.increment()
        }
        if let timeline = record.timeline, record.upstreamTime != nil {
            firstByte.record(timeline.firstByte)
            dns.record(timeline.dns)
            connect.record(timeline.connect)
            tls.record(timeline.tls)
        }
    }

    /// The text for `GET /metrics`.
    func text(_ proxy: ProxyServer, feed: EventFeed) -> String {
        let current = proxy.stats
        for (index, stat) in stats.enumerated() {
            let value = stat.value(current)
            if value > reported[index] { stat.counter.increment(by: value - reported[index]) }
            reported[index] = value
        }
        for (rule, kinds) in proxy.stats.faultsInjected {
            for (kind, value) in kinds {
                let key = rule + "\u{0}" + kind.rawValue
                guard value > faultsReported[key, default: 0], labelledCounters.count < 2000 else { continue }
                labelledCounter("sluice_faults_injected_total", [("rule", rule), ("kind", kind.rawValue)])
                    .increment(by: value - faultsReported[key, default: 0])
                faultsReported[key] = value
            }
        }
        connectionsOpen.record(current.connectionsOpen)
        proxy.cache?.noticeChangesElsewhere()
        cacheBytes.record(proxy.cache?.totalBytes ?? 0)
        cacheCapacity.record(proxy.cache?.capacity ?? 0)
        eventSubscribers.record(feed.subscriberCount)
        if let shared = proxy.tiers?.shared {
            sharedUp.record(shared.isAvailable ? 1 : 0)
            let counts = shared.counts
            for (index, value) in [
                counts.lookups, counts.hits, counts.stores, counts.failures, shared.refusedStores.count,
            ]
            .enumerated()
            where value > sharedReported[index] {
                sharedCounters[index].increment(by: value - sharedReported[index])
                sharedReported[index] = value
            }
        }
        var bytes: [UInt8] = []
        registry.emit(into: &bytes)
        for histogram in [exchangeDuration, firstByte, dns, connect, tls] { histogram.emit(into: &bytes) }
        return described(String(decoding: bytes, as: UTF8.self))
    }

    /// `text` with a `# HELP` line before each family's `# TYPE` line (the registry writes none):
    /// what Prometheus, Grafana and `promtool check metrics` show and expect.
    private func described(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count + 4096)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("# TYPE ") {
                let name = line.dropFirst("# TYPE ".count).prefix { $0 != " " }
                if let help = helps[String(name)] { out += "# HELP \(name) \(help)\n" }
            }
            out += line
            out += "\n"
        }
        return String(out.dropLast())
    }

}

/// A histogram of seconds over ``AdminMetrics/buckets``, counted on the loop thread and written in
/// the text exposition format (as swift-prometheus writes its own).
final class TimingHistogram {
    let name: String
    /// Its `# HELP` text.
    let help: String
    private var counts = [Int](repeating: 0, count: AdminMetrics.buckets.count)
    private var sum = 0.0
    private var count = 0

    init(_ name: String, help: String) {
        self.name = name
        self.help = help
    }

    func record(_ seconds: Double) {
        count += 1
        sum += seconds
        if let index = AdminMetrics.buckets.firstIndex(where: { seconds <= $0 }) { counts[index] += 1 }
    }

    func emit(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: "# HELP \(name) \(help)\n# TYPE \(name) histogram\n".utf8)
        var cumulative = 0
        for (bound, inBucket) in zip(AdminMetrics.buckets, counts) {
            cumulative += inBucket
            buffer.append(contentsOf: "\(name)_bucket{le=\"\(bound)\"} \(cumulative)\n".utf8)
        }
        buffer.append(contentsOf: "\(name)_bucket{le=\"+Inf\"} \(count)\n".utf8)
        buffer.append(contentsOf: "\(name)_sum \(sum)\n\(name)_count \(count)\n".utf8)
    }
}
