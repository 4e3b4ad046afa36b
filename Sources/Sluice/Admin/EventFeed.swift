import EventIO

/// Completed exchanges as Server-Sent Events for `GET /events` (AFNetworking's "task did
/// complete" notification, for people), and the recent upstream outcomes for `GET /health`.
final class EventFeed: EventMonitor {
    private var subscribers: [AdminConnection] = []
    /// Events not sent to a subscriber that had fallen behind by more than this.
    static let backlogLimit = 1 << 20
    private(set) var dropped = 0

    /// The last upstream attempts, newest last: when, and the error if it failed.
    private(set) var recent: [(time: Double, error: String?)] = []
    static let recentLimit = 20
    var clock: () -> Double = { 0 }

    func subscribe(_ connection: AdminConnection) { subscribers.append(connection) }

    func unsubscribe(_ connection: AdminConnection) { subscribers.removeAll { $0 === connection } }

    var subscriberCount: Int { subscribers.count }

    func task(_ task: UpstreamTask, didCompleteWith error: SluiceError?) {
        // Only the origin's own failures say something about reachability.
        var failure: String?
        if let error, case .upstreamFailed(let reason) = error {
            if case .cancelled = reason {} else { failure = Problem(error).detail }
        }
        recent.append((clock(), failure))
        if recent.count > EventFeed.recentLimit { recent.removeFirst(recent.count - EventFeed.recentLimit) }
    }

    func exchangeDidComplete(_ record: ExchangeRecord) {
        guard !subscribers.isEmpty else { return }
        let event = EventFeed.json(record, time: clock()).json
        let frame = Array(("event: exchange\ndata: " + event + "\n\n").utf8)
        for subscriber in subscribers {
            if subscriber.connection.outputCount > EventFeed.backlogLimit {
                dropped += 1
                continue
            }
            subscriber.connection.write(frame)
        }
    }

    static func json(_ record: ExchangeRecord, time: Double) -> JSONValue {
        var validation: JSONValue = .string("passed")
        if let failure = record.validationFailure { validation = .string("failed: " + failure) }
        if case .validationFailed(let failure) = record.error { validation = .string("rejected: " + failure.detail) }
        return .object([
            ("time", .double(time)), ("client", .string(record.client)), ("method", .string(record.method)),
            ("url", .string(record.url)), ("status", .number(record.status)), ("bytes", .number(Int(record.bytesSent))),
            ("duration_ms", .double((record.duration * 1e6).rounded() / 1e3)),
            ("upstream_ms", record.upstreamTime.map { .double(($0 * 1e6).rounded() / 1e3) } ?? .null),
            ("cache_status", .optional(record.cacheStatus)), ("rule", .optional(record.rule)),
            ("validation", validation), ("transform", .optional(record.transform)),
            ("error", record.error.map { .string(Problem($0).detail) } ?? .null), ("aborted", .bool(record.aborted)),
            ("timeline", record.timeline.map(EventFeed.json) ?? .null),
        ])
    }

    static func json(_ timeline: Timeline) -> JSONValue {
        func ms(_ seconds: Double) -> JSONValue { .double((seconds * 1e6).rounded() / 1e3) }
        return .object([
            ("queued_ms", ms(timeline.queued)), ("dns_ms", ms(timeline.dns)), ("connect_ms", ms(timeline.connect)),
            ("tls_ms", ms(timeline.tls)), ("first_byte_ms", ms(timeline.firstByte)),
            ("complete_ms", ms(timeline.complete)),
        ])
    }
}
