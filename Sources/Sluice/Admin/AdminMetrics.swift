/// `GET /metrics` in the Prometheus text exposition format (version 0.0.4).
enum AdminMetrics {
    static func text(_ proxy: ProxyServer, feed: EventFeed) -> String {
        let stats = proxy.stats
        var out = ""
        func metric(_ name: String, _ type: String, _ help: String, _ samples: [(String, Double)]) {
            out += "# HELP sluice_\(name) \(help)\n# TYPE sluice_\(name) \(type)\n"
            for (labels, value) in samples {
                let number = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
                out += "sluice_\(name)\(labels) \(number)\n"
            }
        }
        metric("requests_total", "counter", "Client requests read.", [("", Double(stats.requests))])
        metric("responses_total", "counter", "Responses completed.", [("", Double(stats.responses))])
        metric("errors_total", "counter", "Exchanges that ended in an error.", [("", Double(stats.errors))])
        metric(
            "responses_by_class_total", "counter", "Responses by status class.",
            feed.statusClasses.enumerated().map { ("{class=\"\($0.offset + 1)xx\"}", Double($0.element)) })
        metric("connections_open", "gauge", "Client connections open.", [("", Double(stats.connectionsOpen))])
        metric(
            "connections_accepted_total", "counter", "Client connections accepted.",
            [("", Double(stats.connectionsAccepted))])
        metric(
            "connections_refused_total", "counter", "Client connections refused.",
            [("", Double(stats.connectionsRefused))])
        metric("tunnels_total", "counter", "CONNECT tunnels opened.", [("", Double(stats.tunnels))])
        metric("upstream_tasks_total", "counter", "Upstream tasks started.", [("", Double(stats.upstreamTasks))])
        metric(
            "upstream_connections_total", "counter", "Upstream connections opened.",
            [("", Double(stats.upstreamConnections))])
        metric("cache_hits_total", "counter", "Responses served from the cache.", [("", Double(stats.cacheHits))])
        metric("cache_stores_total", "counter", "Responses stored.", [("", Double(stats.cacheStores))])
        metric("cache_bytes", "gauge", "Bytes of stored bodies.", [("", Double(proxy.cache?.totalBytes ?? 0))])
        metric("cache_capacity_bytes", "gauge", "cache.capacity.", [("", Double(proxy.cache?.capacity ?? 0))])
        metric(
            "validation_total", "counter", "Responses that failed validation, by outcome.",
            [
                ("{outcome=\"rejected\"}", Double(stats.validationRejected)),
                ("{outcome=\"reported\"}", Double(stats.validationReported)),
            ])
        metric(
            "json_strip_total", "counter", "JSON bodies null-stripped or left untouched.",
            [
                ("{outcome=\"stripped\"}", Double(stats.jsonStripped)),
                ("{outcome=\"untouched\"}", Double(stats.jsonUntouched)),
            ])
        func histogram(_ name: String, _ help: String, _ counts: [Int], _ sum: Double) {
            out += "# HELP sluice_\(name) \(help)\n# TYPE sluice_\(name) histogram\n"
            var cumulative = 0
            for (index, bound) in EventFeed.durationBuckets.enumerated() {
                cumulative += counts[index]
                out += "sluice_\(name)_bucket{le=\"\(bound)\"} \(cumulative)\n"
            }
            cumulative += counts[EventFeed.durationBuckets.count]
            out += "sluice_\(name)_bucket{le=\"+Inf\"} \(cumulative)\n"
            out += "sluice_\(name)_sum \(sum)\nsluice_\(name)_count \(cumulative)\n"
        }
        histogram(
            "exchange_duration_seconds", "Client request head to last byte.", feed.durationCounts, feed.durationSum)
        histogram(
            "upstream_first_byte_seconds", "Upstream transfer start to the first response byte.",
            feed.firstByteCounts, feed.firstByteSum)
        return out
    }
}
