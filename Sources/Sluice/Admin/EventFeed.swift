import Contract
import EventIO
import TLS

/// Exchanges as Server-Sent Events for `GET /events` (AFNetworking's "task did complete"
/// notification, for people and the admin page): `start` when one begins, `progress` at most four
/// times a second while its bytes move, `exchange` when it completes. Also what the page needs
/// besides: the bodies of the last watched exchanges (bounded), per-second counts for the last
/// ten minutes (`/series`) and the recent upstream outcomes for `/health`.
final class EventFeed: EventMonitor, ExchangeWatcher {
    private var subscribers: [AdminConnection] = []
    /// Events not sent to a subscriber that had fallen behind by more than this.
    static let backlogLimit = 1 << 20
    private(set) var dropped = 0

    /// The last upstream attempts, newest last: when, and the error if it failed.
    private(set) var recent: [(time: Double, error: String?)] = []
    static let recentLimit = 20
    var clock: () -> Double = { 0 }
    /// How URLs to the admin API begin (`http://127.0.0.1:8081/`): a page opened through the
    /// proxy polls it, and its own requests are not the traffic it shows.
    var adminURLPrefixes: [String] = []
    let loop: EventLoop
    let series = Series()
    let bodies = CapturedBodies()

    init(loop: EventLoop) { self.loop = loop }

    /// The last exchanges (without their bodies) and when they ended, oldest first from
    /// `historyStart`: a page opened now lists what came before it.
    private var history: [(record: ExchangeRecord, time: Double)] = []
    private var historyStart = 0
    static let historyLimit = 200

    func subscribe(_ connection: AdminConnection) {
        for offset in 0..<history.count {
            let (record, time) = history[(historyStart + offset) % history.count]
            connection.connection.write(
                Array(("event: exchange\ndata: " + EventFeed.json(record, time: time).json + "\n\n").utf8))
        }
        subscribers.append(connection)
        if progressTimer == nil {
            let timer = Timer(loop: loop, repeats: true) { [unowned self] in self.sendProgress() }
            timer.schedule(milliseconds: EventFeed.progressInterval)
            progressTimer = timer
        }
    }

    func unsubscribe(_ connection: AdminConnection) {
        subscribers.removeAll { $0 === connection }
        if subscribers.isEmpty {
            progressTimer?.cancel()
            progressTimer = nil
            running.removeAll()
        }
    }

    var subscriberCount: Int { subscribers.count }

    private func send(_ event: String, _ data: JSONValue) {
        guard !subscribers.isEmpty else { return }
        let frame = Array(("event: " + event + "\ndata: " + data.json + "\n\n").utf8)
        for subscriber in subscribers {
            if subscriber.connection.outputCount > EventFeed.backlogLimit {
                dropped += 1
                continue
            }
            subscriber.connection.write(frame)
        }
    }

    // MARK: - ExchangeWatcher

    var isWatching: Bool { !subscribers.isEmpty }

    /// Running exchanges that may keep their bodies at once (1 MiB each): more keep headers only,
    /// so that many large transfers while the page is open stay within bounded memory.
    static let bodyCapturesRunning = 64

    var bodyRoom: Int { running.count < EventFeed.bodyCapturesRunning ? ExchangeCapture.bodyLimit : 0 }

    /// Exchanges running while someone watches, with the progress last sent for each.
    private var running: [Int: (exchange: Weak<Exchange>, last: (Int64, Int64))] = [:]
    private var progressTimer: Timer?
    /// 4 progress events a second at most per exchange.
    static let progressInterval = 250
    /// Most exchanges reported per progress tick (the oldest first).
    static let progressLimit = 200

    func exchangeDidStart(_ exchange: Exchange) {
        if isAdminTraffic(exchange.machine.context.url) { return }
        running[exchange.id] = (Weak(exchange), (-1, -1))
        send(
            "start",
            .object([
                ("id", .number(exchange.id)), ("time", .double(clock())), ("method", .string(exchange.request.method)),
                ("url", .string(exchange.machine.context.url)),
            ]))
    }

    func upgradeDidSwitch(_ record: ExchangeRecord) {
        guard !subscribers.isEmpty else { return }
        var json = EventFeed.json(record, time: clock())
        if case .object(var members) = json {
            members.append(("upgraded", .bool(true)))
            json = .object(members)
        }
        send("exchange", json)
    }

    func webSocketMessage(_ id: Int, _ message: WebSocketFrames.Message) {
        send("websocket", EventFeed.json(message, id: id, time: clock()))
    }

    /// A WebSocket message for `/events`: text when it is UTF-8 (text frames, close reasons),
    /// else hex; the preview is the first KiB.
    static func json(_ message: WebSocketFrames.Message, id: Int, time: Double) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("id", .number(id)), ("time", .double(time)), ("direction", .string(message.direction.rawValue)),
            ("opcode", .number(Int(message.opcode.rawValue))), ("size", .number(Int(message.size))),
            ("frames", .number(message.frames)), ("compressed", .bool(message.compressed)),
            ("truncated", .bool(message.truncated)),
        ]
        var payload = message.preview[...]
        if let code = message.closeCode {
            members.append(("close_code", .number(Int(code))))
            payload = payload.dropFirst(2)
        }
        // A preview that cut a character keeps the text before it (at most 3 bytes go).
        if message.truncated, message.opcode != .binary {
            var end = payload.endIndex
            while end > payload.startIndex, end > payload.endIndex - 3, payload[end - 1] & 0xC0 == 0x80 { end -= 1 }
            if end > payload.startIndex, payload[end - 1] >= 0xC0 { end -= 1 }
            if String(validating: payload, as: UTF8.self) == nil { payload = payload[..<end] }
        }
        if message.opcode != .binary, let text = String(validating: payload, as: UTF8.self) {
            members.append(("text", .string(text)))
        } else {
            members.append(("hex", .string(Digest.hex(payload))))
        }
        return .object(members)
    }

    private func sendProgress() {
        var sent = 0
        for id in running.keys.sorted() where sent < EventFeed.progressLimit {
            guard let (box, last) = running[id], let exchange = box.value else {
                running[id] = nil
                continue
            }
            let progress = exchange.progress
            guard (progress.up, progress.down) != last else { continue }
            running[id] = (box, (progress.up, progress.down))
            sent += 1
            send(
                "progress",
                .object([
                    ("id", .number(id)), ("method", .string(exchange.request.method)),
                    ("url", .string(exchange.machine.context.url)), ("started", .double(exchange.startedAt)),
                    ("up", .number(Int(progress.up))), ("up_total", progress.upTotal.map { .number(Int($0)) } ?? .null),
                    ("down", .number(Int(progress.down))),
                    ("down_total", progress.downTotal.map { .number(Int($0)) } ?? .null),
                ]))
        }
    }

    // MARK: - EventMonitor

    func task(_ task: UpstreamTask, didCompleteWith error: SluiceError?) {
        // Only the origin's own failures say something about reachability.
        var failure: String?
        if let error, case .upstreamFailed(let reason) = error {
            if case .cancelled = reason {} else { failure = Problem(error).detail }
        }
        recent.append((clock(), failure))
        if recent.count > EventFeed.recentLimit { recent.removeFirst(recent.count - EventFeed.recentLimit) }
    }

    /// Whether `url` is the admin API's own (reached through the proxy by a page set to use it).
    private func isAdminTraffic(_ url: String) -> Bool {
        !adminURLPrefixes.isEmpty && adminURLPrefixes.contains { url.hasPrefix($0) }
    }

    func exchangeDidComplete(_ record: ExchangeRecord) {
        running[record.id] = nil
        if isAdminTraffic(record.url) { return }
        let now = clock()
        series.count(record, now: now)
        var kept = record
        kept.capture = nil
        if history.count < EventFeed.historyLimit {
            history.append((kept, now))
        } else {
            history[historyStart] = (kept, now)
            historyStart = (historyStart + 1) % EventFeed.historyLimit
        }
        guard !subscribers.isEmpty else { return }
        if let capture = record.capture { bodies.keep(record.id, capture) }
        send("exchange", EventFeed.json(record, time: now))
    }

    /// `null` without a contract; else its outcome and, when broken, the violations.
    static func contract(_ record: ExchangeRecord) -> JSONValue {
        guard let outcome = record.contract else { return .null }
        var members: [(String, JSONValue)] = [("outcome", .string(outcome.text))]
        let failures = record.contractFailures
        if let failure = failures.first, case .object(let details) = failure.jsonValue { members += details }
        // A reported request's failure beside the response's.
        if failures.count > 1 { members.append(("request", failures[1].jsonValue)) }
        return .object(members)
    }

    static func json(_ record: ExchangeRecord, time: Double) -> JSONValue {
        // The response's checks: passed, failed (reported) or rejected; `null` when the exchange
        // failed before any check could run (an upstream failure, an injected fault).
        var validation: JSONValue = record.error == nil && record.status > 0 ? .string("passed") : .null
        if let failure = record.validationFailure { validation = .string("failed: " + failure) }
        switch record.error {
        case .validationFailed(let failure): validation = .string("rejected: " + failure.detail)
        case .contractViolation(let failure): validation = .string("rejected: " + failure.detail)
        default: break
        }
        var members: [(String, JSONValue)] = [
            ("id", .number(record.id)),
            ("time", .double(time)), ("client", .string(record.client)), ("method", .string(record.method)),
            ("url", .string(record.url)), ("http_version", .string("HTTP/" + record.clientProtocol)),
            ("status", .number(record.status)), ("bytes", .number(Int(record.bytesSent))),
            ("duration_ms", .double((record.duration * 1e6).rounded() / 1e3)),
            ("upstream_ms", record.upstreamTime.map { .double(($0 * 1e6).rounded() / 1e3) } ?? .null),
            ("cache_status", .optional(record.cacheStatus?.description)), ("rule", .optional(record.rule)),
            ("validation", validation), ("transform", .optional(record.transform)),
            ("mapped", .optional(record.mapping)), ("fault", .optional(record.fault)),
            ("breakpoint", .optional(record.breakpoint)),
            ("paused_ms", EventFeed.json(record.paused)),
            ("replayed", record.replayed.map { .number(Int($0)) } ?? .null),
            ("error", record.error.map { .string(Problem($0).detail) } ?? .null), ("aborted", .bool(record.aborted)),
            ("timeline", record.timeline.map(EventFeed.json) ?? .null),
            ("contract", EventFeed.contract(record)),
        ]
        if let error = record.error {
            let problem = Problem(error)
            members.append(
                (
                    "problem",
                    .object([
                        ("type", .string(problem.type)), ("title", .string(problem.title)),
                        ("status", .number(problem.status)), ("detail", .string(problem.detail)),
                    ])
                ))
        }
        if let capture = record.capture {
            members += [
                ("request_headers", .array(capture.requestHeaders.map { .strings([$0.0, $0.1]) })),
                ("response_headers", .array(capture.responseFields.map { .strings([$0.0, $0.1]) })),
                ("stripped_keys", .array(capture.strippedPaths.map { .string($0) })),
                ("body_captured", .number(capture.body.count)),
            ]
            if let sent = capture.sentRequest {
                members.append(
                    (
                        "sent_request",
                        .object([
                            ("method", .optional(sent.method)), ("url", .optional(sent.url)),
                            ("headers", .array((sent.headers ?? []).map { .strings([$0.0, $0.1]) })),
                            ("body_size", .number(capture.sentBodySize)),
                        ])
                    ))
            }
        }
        return .object(members)
    }

    /// How long breakpoints held the request and the response (`null`: neither paused).
    static func json(_ paused: PausedTime) -> JSONValue {
        guard paused != PausedTime() else { return .null }
        func ms(_ seconds: Double) -> JSONValue { .double((seconds * 1e6).rounded() / 1e3) }
        return .object([("request", ms(paused.request)), ("response", ms(paused.response))])
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

/// A reference that does not keep its object alive.
final class Weak<T: AnyObject> {
    weak var value: T?
    init(_ value: T) { self.value = value }
}

/// The bodies of the last watched exchanges, as sent to the client: at most 1 MiB each and
/// ``budget`` in all, the oldest dropped first.
final class CapturedBodies {
    static let budget = 32 << 20
    private var kept: [Int: ExchangeCapture] = [:]
    private var order: [Int] = []
    private var bytes = 0

    func keep(_ id: Int, _ capture: ExchangeCapture) {
        guard kept[id] == nil else { return }
        kept[id] = capture
        order.append(id)
        bytes += capture.body.count
        while bytes > CapturedBodies.budget || order.count > 5000, let oldest = order.first {
            order.removeFirst()
            if let gone = kept.removeValue(forKey: oldest) { bytes -= gone.body.count }
        }
    }

    func capture(_ id: Int) -> ExchangeCapture? { kept[id] }
}

/// Counts per second for the last ten minutes: requests, cache hits, responses by class,
/// validation failures (rejected or reported). Fixed memory, updated by every exchange.
final class Series {
    static let seconds = 600
    /// requests, hits, 1xx/2xx, 3xx, 4xx, 5xx (and none sent), validation failures (status and
    /// content type), contract failures (rejected or reported).
    static let names = ["requests", "hits", "2xx", "3xx", "4xx", "5xx", "validation_failures", "contract_failures"]
    private var buckets = [[Int]](repeating: [Int](repeating: 0, count: names.count), count: Series.seconds)
    private var stamps = [Int](repeating: -1, count: Series.seconds)

    func count(_ record: ExchangeRecord, now: Double) {
        let second = Int(now)
        let slot = second % Series.seconds
        if stamps[slot] != second {
            stamps[slot] = second
            buckets[slot] = [Int](repeating: 0, count: Series.names.count)
        }
        buckets[slot][0] += 1
        if record.cacheStatus?.isHit == true { buckets[slot][1] += 1 }
        switch record.status {
        case 0..<300: buckets[slot][2] += 1
        case 300..<400: buckets[slot][3] += 1
        case 400..<500: buckets[slot][4] += 1
        default: buckets[slot][5] += 1
        }
        // A reported contract failure also marks the response (`validationFailure`); it is
        // counted as a contract failure only.
        var failed = record.validationFailure != nil && record.validationFailure != record.contractFailure?.detail
        if case .validationFailed = record.error { failed = true }
        if failed { buckets[slot][6] += 1 }
        if record.contract == .failed { buckets[slot][7] += 1 }
    }

    /// The last `seconds` seconds, oldest first, each series an array of counts.
    func json(now: Double, seconds: Int = Series.seconds) -> JSONValue {
        let last = Int(now)
        let span = max(1, min(seconds, Series.seconds))
        var columns = [[Int]](repeating: [], count: Series.names.count)
        for second in (last - span + 1)...last {
            let slot = ((second % Series.seconds) + Series.seconds) % Series.seconds
            let values = stamps[slot] == second ? buckets[slot] : [Int](repeating: 0, count: Series.names.count)
            for index in Series.names.indices { columns[index].append(values[index]) }
        }
        return .object(
            [("end", .number(last)), ("seconds", .number(span))]
                + zip(Series.names, columns).map { ($0.0, .array($0.1.map { .number($0) })) })
    }
}
