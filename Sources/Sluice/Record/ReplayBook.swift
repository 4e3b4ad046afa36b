/// `replay:`: the requests a recording holds, and which recorded response answers a request.
/// A request matches a recorded one when the method, the URL (query parameters in any order)
/// and, unless `match_body: false`, the body's SHA-256 agree, and the fields `match_headers`
/// names have the same values. Several matches are served in recorded order, then the last one
/// again. Heads are held in memory; bodies are read from the file when served. Loop-confined.
final class ReplayBook {
    struct Entry {
        let id: Int64
        let method: String
        let url: String
        let target: RequestURL
        let digest: String
        let bodySize: Int64
        /// The `match_headers` values, in that order (`nil`: absent).
        let headers: [String?]
        let complete: Bool
        let head: ResponseHead
        let trailers: HTTPFields
    }

    let settings: Configuration.Replay
    let recording: Recording
    private let entries: [Entry]
    /// Entries by method and normalised URL, in recorded order.
    private var byRequest: [RequestKey: [Int]] = [:]
    /// The next match to serve, by the whole matching key.
    private var cursors: [MatchKey: Int] = [:]

    /// Method and URL: what a request must share with a recorded one to be compared at all.
    struct RequestKey: Hashable {
        let method: String
        let url: RequestURL
    }

    /// A request key with the body's digest and the `match_headers` values.
    struct MatchKey: Hashable {
        let request: RequestKey
        let digest: String?
        let headers: [String?]
    }
    /// Bodies read from the file, kept for the next time while they fit in ``bodyBudget``.
    private var bodies: [Int64: [UInt8]] = [:]
    private var keptBytes = 0
    static let bodyBudget = 64 << 20

    init(settings: Configuration.Replay, file: String) throws(Recording.Failure) {
        self.settings = settings
        recording = try Recording.open(file)
        var entries: [Entry] = []
        for exchange in try recording.exchanges(bodies: false) {
            let headers = HTTPFields(exchange.requestHeaders.map { ($0.name, $0.value) })
            var responseFields = HTTPFields(exchange.responseHeaders.map { ($0.name, $0.value) })
            responseFields.removeAll { !RecordedExchange.keepsResponseField($0.name) }
            entries.append(
                Entry(
                    id: exchange.id, method: exchange.method, url: exchange.url, target: RequestURL(exchange.url),
                    digest: exchange.requestBodyDigest, bodySize: exchange.requestBodySize,
                    headers: settings.matchHeaders.map { headers[$0] }, complete: exchange.responseComplete,
                    head: ResponseHead(status: exchange.status, reason: exchange.reason, headers: responseFields),
                    trailers: HTTPFields(exchange.responseTrailers.map { ($0.name, $0.value) })))
        }
        self.entries = entries
        for (index, entry) in entries.enumerated() {
            byRequest[RequestKey(method: entry.method, url: entry.target), default: []].append(index)
        }
    }

    var count: Int { entries.count }

    /// What answers a request: a recorded response, or why none does.
    enum Answer {
        case recorded(ReplayedResponse)
        case miss(ReplayMiss)
    }

    /// - Parameter bodyDigest: the request body's SHA-256 (hex); `nil` when it was too large to read.
    func answer(method: String, url: String, target parsed: TargetURL?, headers: HTTPFields, bodyDigest: String?)
        -> Answer
    {
        let target = parsed.map(RequestURL.init) ?? RequestURL(url)
        let values = settings.matchHeaders.map { headers[$0] }
        let request = RequestKey(method: method, url: target)
        let candidates = (byRequest[request] ?? []).filter { index in
            let entry = entries[index]
            return (!settings.matchBody || entry.digest == bodyDigest) && entry.headers == values
        }
        guard !candidates.isEmpty else {
            return .miss(closest(method: method, target: target, url: url, headers: values, digest: bodyDigest))
        }
        let key = MatchKey(request: request, digest: settings.matchBody ? bodyDigest : nil, headers: values)
        let next = cursors[key, default: 0]
        cursors[key] = next + 1
        let entry = entries[candidates[min(next, candidates.count - 1)]]
        guard entry.complete else {
            return .miss(
                ReplayMiss(
                    request: method + " " + url, closest: "#\(entry.id) \(entry.method) \(entry.url)",
                    differences: ["its response body was recorded cut (record.max_body); it is not replayed"]))
        }
        var body: [UInt8]
        do {
            if let kept = bodies[entry.id] {
                body = kept
            } else {
                body = try recording.responseBody(id: entry.id)
                if keptBytes + body.count <= ReplayBook.bodyBudget {
                    bodies[entry.id] = body
                    keptBytes += body.count
                }
            }
        } catch {
            return .miss(
                ReplayMiss(
                    request: method + " " + url, closest: "#\(entry.id) \(entry.method) \(entry.url)",
                    differences: ["its body cannot be read: \(error.description)"]))
        }
        var head = entry.head
        // A credential the recording redacted is not replayed: `Set-Cookie: [redacted]` would
        // set a nameless cookie in a browser.
        head.headers.removeAll { RecordedExchange.isCredential($0.name) && $0.value == RecordedExchange.redacted }
        if method != "HEAD", !ReplayBook.isBodiless(entry.head.status) {
            head.headers.set("Content-Length", String(body.count))
        }
        return .recorded(
            ReplayedResponse(
                id: entry.id, head: head, body: method == "HEAD" ? [] : body,
                trailers: method == "HEAD" ? HTTPFields() : entry.trailers))
    }

    static func isBodiless(_ status: Int) -> Bool { status < 200 || status == 204 || status == 304 }

    /// Client heads of recorded responses served as they are, by recorded exchange and
    /// keep-alive (bounded by the recording's size: one per exchange and connection mode).
    private var plainHeads: [Int64: (keepAlive: [UInt8]?, close: [UInt8]?)] = [:]

    /// The client head of a recorded response served as it is: its fields, then Sluice's `Via`
    /// and `Cache-Status` (and `Connection: close`), as a fetched response's would read.
    func plainHead(_ response: ReplayedResponse, keepAlive: Bool) -> [UInt8] {
        if let kept = plainHeads[response.id], let head = keepAlive ? kept.keepAlive : kept.close { return head }
        var headers = response.head.headers
        Forwarding.appendVia(&headers, version: "1.1")
        headers.append(name: "Cache-Status", value: CacheStatus(.replay).description, code: .cacheStatus)
        if !keepAlive { headers.append(name: "Connection", value: "close", code: .connection) }
        let head = ResponseWriter.head(status: response.head.status, reason: response.head.reason, headers: headers)
        var kept = plainHeads[response.id] ?? (nil, nil)
        if keepAlive { kept.keepAlive = head } else { kept.close = head }
        plainHeads[response.id] = kept
        return head
    }

    /// The recorded request most like this one, and how it differs.
    private func closest(method: String, target: RequestURL, url: String, headers: [String?], digest: String?)
        -> ReplayMiss
    {
        let request = method + " " + url
        var best: (score: Int, index: Int)?
        for (index, entry) in entries.enumerated() {
            var score = 0
            if entry.target.origin == target.origin { score += 16 }
            if entry.target.path == target.path { score += 8 }
            if entry.method == method { score += 4 }
            if entry.target.query == target.query { score += 2 }
            if entry.digest == digest { score += 1 }
            if best == nil || score > best!.score { best = (score, index) }
        }
        guard let best else {
            return ReplayMiss(request: request, closest: nil, differences: ["the recording holds no exchanges"])
        }
        let entry = entries[best.index]
        var differences: [String] = []
        if entry.method != method { differences.append("method: recorded \(entry.method), got \(method)") }
        if entry.target.origin != target.origin {
            differences.append("origin: recorded \(entry.target.origin), got \(target.origin)")
        }
        if entry.target.path != target.path {
            differences.append("path: recorded \(entry.target.path), got \(target.path)")
        }
        if entry.target.query != target.query {
            differences.append("query: recorded \"\(entry.target.query)\", got \"\(target.query)\"")
        }
        if settings.matchBody, entry.digest != digest {
            differences.append(
                digest == nil
                    ? "body: too large to match (over limits.max_transform_body)"
                    : "body: recorded \(entry.bodySize) bytes with SHA-256 \(entry.digest.prefix(12))…, got a different body"
            )
        }
        for (index, name) in settings.matchHeaders.enumerated() where entry.headers[index] != headers[index] {
            differences.append(
                "header \(name): recorded \(entry.headers[index].map { "\"\($0)\"" } ?? "none"), got \(headers[index].map { "\"\($0)\"" } ?? "none")"
            )
        }
        if differences.isEmpty { differences.append("all of it matches, but an earlier match was not complete") }
        return ReplayMiss(
            request: request, closest: "#\(entry.id) \(entry.method) \(entry.url)", differences: differences)
    }
}

/// A recorded response on its way to the client in place of the origin's.
public struct ReplayedResponse: Sendable {
    /// The recorded exchange's number.
    public let id: Int64
    public let head: ResponseHead
    public let body: [UInt8]
    /// The trailer fields recorded after the body (gRPC's status); empty without.
    public let trailers: HTTPFields
}

/// Why a recording holds no answer for a request (a `504` with `replay.on_miss: fail`).
public struct ReplayMiss: Sendable, Equatable {
    /// `METHOD url` of the request.
    public let request: String
    /// `#id METHOD url` of the closest recorded request, when the recording holds any.
    public let closest: String?
    /// What differs between them.
    public let differences: [String]
}

/// A URL split for matching: origin (scheme and authority, lower case, default port left out),
/// path, and the query's parameters sorted (their order does not matter).
struct RequestURL: Hashable {
    let origin: String
    let path: String
    let query: String

    /// From URL text (a recording's, a HAR's): read byte by byte.
    init(_ url: String) {
        let bytes = Array(url.utf8)
        var end = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.count
        if end == 0 { end = bytes.count }
        var afterScheme = 0
        if let colon = bytes[..<end].firstIndex(of: UInt8(ascii: ":")), colon + 2 < end,
            bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
        {
            afterScheme = colon + 3
        }
        let pathStart =
            bytes[afterScheme..<end].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? end
        let question = bytes[pathStart..<end].firstIndex(of: UInt8(ascii: "?"))
        let lowered = bytes[..<pathStart].map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        self.init(
            origin: String(decoding: lowered, as: UTF8.self),
            path: String(decoding: bytes[pathStart..<(question ?? end)], as: UTF8.self),
            query: question.map { String(decoding: bytes[($0 + 1)..<end], as: UTF8.self) } ?? "")
    }

    /// From a parsed request target (no parsing again).
    init(_ target: TargetURL) {
        let whole = target.pathAndQuery.utf8
        let question = whole.firstIndex(of: UInt8(ascii: "?"))
        var origin = target.scheme
        origin += "://"
        origin += target.host
        if !target.hasDefaultPort {
            origin += ":"
            origin += String(target.port)
        }
        self.init(
            origin: origin, path: question.map { String(target.pathAndQuery[..<$0]) } ?? target.pathAndQuery,
            query: question.map { String(target.pathAndQuery[whole.index(after: $0)...]) } ?? "")
    }

    private init(origin: String, path: String, query: String) {
        var origin = origin
        if origin.hasPrefix("http://"), origin.hasSuffix(":80") { origin.removeLast(3) }
        if origin.hasPrefix("https://"), origin.hasSuffix(":443") { origin.removeLast(4) }
        self.origin = origin
        self.path = path.isEmpty ? "/" : path
        // One parameter (or none) needs no sorting.
        self.query =
            query.utf8.contains(UInt8(ascii: "&"))
            ? query.split(separator: "&").map(String.init).sorted().joined(separator: "&") : query
    }

    var normalized: String { origin + path + (query.isEmpty ? "" : "?" + query) }
}
