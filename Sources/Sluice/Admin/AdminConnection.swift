import EventIO

/// One admin client: a request, its answer, then the connection closes (an event stream stays
/// open until the client leaves).
final class AdminConnection: ConnectionDelegate {
    let connection: Connection
    unowned let server: AdminServer
    private var parser: RequestParser
    private var request: ProxyRequest?
    private var answered = false
    private var streaming = false
    /// Where an awaited answer (``AdminRoutes/Answer/awaiting``) is.
    private enum Awaiting {
        case none
        /// Started; its answer not given yet.
        case started
        /// Not given yet; what to do if the caller leaves first.
        case cancellable(() -> Void)
        case delivered
    }
    private var awaiting = Awaiting.none

    /// Largest request body the admin API reads: a composed request's draft or a paused
    /// item's edit, whose body may be as large as `limits.max_transform_body` (what breakpoints
    /// pause), written as JSON text or base64 (4/3): twice that, and at least 1 MiB.
    static func bodyLimit(transform: Int) -> Int {
        transform >= (Int.max - 64 * 1024) / 2 ? Int.max : max(1 << 20, transform * 2 + 64 * 1024)
    }
    /// The whole request (head and body) must arrive within this, however it trickles: the read
    /// timeout alone restarts with every byte, and 64 connections sending a byte every few
    /// seconds would keep the admin port from everyone (slowloris).
    static let requestDeadlineMilliseconds = 10_000
    private var deadline: Timer?

    init(connection: Connection, server: AdminServer) {
        self.connection = connection
        self.server = server
        var limits = RequestParser.Limits()
        limits.maxHeaderBytes = 16 * 1024
        limits.maxBodyBytes = Int64(AdminConnection.bodyLimit(transform: server.proxy.environment.transformLimit))
        parser = RequestParser(limits: limits)
        connection.delegate = self
        connection.setTimeouts(readMilliseconds: 10_000, writeMilliseconds: 10_000)
        let deadline = Timer(loop: server.proxy.loop) { [unowned self] in
            guard !self.answered else { return }
            self.respond(problem: Problem(.badRequest(reason: .timedOut)))
        }
        deadline.schedule(milliseconds: AdminConnection.requestDeadlineMilliseconds)
        self.deadline = deadline
    }

    func close() {
        bodyLease = nil
        connection.close()
        server.connectionDidClose(self)
    }

    // MARK: - ConnectionDelegate

    func connectionDidRead(_ connection: Connection) {
        guard !answered else {
            connection.drainInput(connection.inputCount)
            return
        }
        if request == nil {
            let outcome = connection.withInput(upTo: 16 * 1024 + 4) { parser.parse($0) }
            switch outcome {
            case .needMore: return
            case .failure(let error): return respond(problem: Problem(error))
            case .head(let head, let consumed):
                connection.drainInput(consumed)
                request = head
            }
        }
        guard let request else { return }
        // A small body, read whole (POST /compose's draft; other selectors travel in the query).
        var body: [UInt8] = []
        switch request.bodyFraming {
        case .none: break
        case .length(let length):
            guard connection.inputCount >= Int(length) else { return }
            body = connection.withInput(upTo: Int(length)) { Array($0) }
            connection.drainInput(Int(length))
        case .chunked, .streamEnd:
            return respond(
                problem: Problem(.badRequest(reason: .malformed("the admin API takes bodies with Content-Length"))))
        }
        deadline?.cancel()
        handle(request, body: body)
    }

    func connectionDidDrain(_ connection: Connection) { pump() }

    /// A stored body being sent: the chunks go out as the client reads them.
    private var stream: (inspector: CacheInspector, entry: Int64, next: Int64)?
    private var bodyLease: CacheReadLease?
    static let highWater = 256 * 1024

    private func pump() {
        // A client that is gone reads nothing more (its error event closes the connection).
        while var current = stream, !connection.writeBroken, connection.outputCount < AdminConnection.highWater {
            guard let chunk = try? current.inspector.chunk(of: current.entry, seq: current.next) else {
                stream = nil
                bodyLease = nil
                return finish()
            }
            connection.write(chunk)
            current.next += 1
            stream = current
        }
    }

    func connection(_ connection: Connection, didReceive event: Connection.Event) {
        if case .cancellable(let cancel) = awaiting {
            switch event {
            case .endOfStream, .error:
                awaiting = .delivered
                cancel()
                return close()
            default: break
            }
        }
        switch event {
        case .endOfStream where !answered && request == nil:
            close()
        case .endOfStream where streaming:
            close()
        case .error, .timeout(reading: false):
            close()
        case .timeout(reading: true) where streaming:
            break  // an event stream's client only reads
        case .timeout(reading: true) where !answered:
            respond(problem: Problem(.badRequest(reason: .timedOut)))
        default:
            break
        }
    }

    // MARK: - Answers

    private func handle(_ request: ProxyRequest, body: [UInt8]) {
        guard case .origin(let target) = request.target else {
            return respond(
                problem: Problem(
                    .badRequest(reason: .malformed("the admin API takes origin-form requests (GET /stats)"))))
        }
        // DNS rebinding: a page on another site resolving to 127.0.0.1 still says its own Host.
        guard let host = request.headers[.host], AdminConnection.isLoopbackAuthority(host) else {
            return respond(error: 403, "the Host must be a loopback address")
        }
        // CSRF: browsers say where a cross-site request comes from; only the admin page itself
        // (same origin: `http://` and the loopback Host checked above) may call.
        if let origin = request.headers[.origin], origin.lowercased() != "http://" + host.lowercased() {
            return respond(error: 403, "requests from other web pages (Origin) are refused")
        }
        let (path, query) = AdminConnection.split(target)
        let mutating = request.method == "DELETE" || request.method == "POST" || request.method == "PUT"
        if mutating, !server.token.isEmpty, request.headers[.authorization] != "Bearer " + server.token {
            return respond(
                error: 401, "this needs Authorization: Bearer <admin.token>",
                extra: [("WWW-Authenticate", "Bearer")])
        }
        deliver(
            AdminRoutes(server: server).answer(method: request.method, path: path, query: query, body: body),
            to: request)
    }

    private func deliver(_ answer: AdminRoutes.Answer, to request: ProxyRequest) {
        switch answer {
        case .json(let status, let value):
            respond(status: status, json: value)
        case .error(let status, let message):
            respond(error: status, message)
        case .text(let contentType, let text):
            respond(status: 200, contentType: contentType, body: Array(text.utf8))
        case .body(let headers, let length, let inspector, let entry):
            var headers = headers
            headers.append(name: "Content-Length", value: String(length), code: .contentLength)
            writeHead(status: 200, headers: headers)
            guard request.method != "HEAD" else { return finish() }
            stream = (inspector, entry, 0)
            // Its rows stay while it is read, whatever removes the entry meanwhile.
            bodyLease = server.proxy.cache?.lease(entry)
            pump()
        case .events:
            startEventStream()
        case .asset(let contentType, let bytes):
            var headers = HTTPFields([("Content-Type", contentType)])
            headers.append(name: "Content-Security-Policy", value: AdminPage.contentSecurityPolicy)
            respond(status: 200, headers: headers, body: bytes)
        case .bytes(let headers, let bytes):
            respond(status: 200, headers: headers, body: bytes)
        case .awaiting(let start):
            // What more comes is dropped; its end (the caller left) is heard however long the
            // answer takes (a person deciding a paused compose): no read timeout meanwhile.
            answered = true
            connection.setTimeouts(readMilliseconds: 0, writeMilliseconds: 30_000)
            awaiting = .started
            let cancel = start { [weak self] answer in
                guard let self, !self.connection.isClosed else { return }
                self.awaiting = .delivered
                self.deliver(answer, to: request)
            }
            // (An answer given at once needs no cancelling.)
            if case .started = awaiting, let cancel { awaiting = .cancellable(cancel) }
        }
    }

    private func startEventStream() {
        answered = true
        streaming = true
        var headers = HTTPFields()
        headers.append(name: "Content-Type", value: "text/event-stream", code: .contentType)
        headers.append(name: "Cache-Control", value: "no-store", code: .cacheControl)
        headers.append(name: "Connection", value: "close", code: .connection)
        connection.write(ResponseWriter.head(status: 200, reason: "", headers: headers))
        connection.write(": sluice exchanges, one event per completed exchange\n\n")
        connection.setTimeouts(readMilliseconds: 0, writeMilliseconds: 30_000)
        server.feed.subscribe(self)
    }

    private func respond(status: Int, json: JSONValue, extra: [(String, String)] = []) {
        var headers = HTTPFields(extra)
        headers.append(name: "Content-Type", value: "application/json", code: .contentType)
        respond(status: status, headers: headers, body: Array((json.json + "\n").utf8))
    }

    /// A refusal as a problem (RFC 9457), as the proxy's are; `error` keeps the message for
    /// scripts that read it. A 405 says what the path takes (`Allow`).
    private func respond(error status: Int, _ message: String, extra: [(String, String)] = []) {
        var headers = HTTPFields(extra)
        if status == 405, case .origin(let target)? = request?.target {
            headers.append(name: "Allow", value: AdminRoutes.allowedMethods(AdminConnection.split(target).0))
        }
        headers.append(name: "Content-Type", value: "application/problem+json", code: .contentType)
        let problem = JSONValue.object([
            ("type", .string("about:blank")), ("title", .string(ReasonPhrase.standard(status))),
            ("status", .number(status)), ("detail", .string(message)), ("error", .string(message)),
        ])
        respond(status: status, headers: headers, body: Array((problem.json + "\n").utf8))
    }

    private func respond(status: Int, contentType: String, body: [UInt8]) {
        respond(status: status, headers: HTTPFields([("Content-Type", contentType)]), body: body)
    }

    private func respond(problem: Problem) {
        answered = true
        connection.write(
            ResponseWriter.problem(problem, keepAlive: false, headOnly: false, date: server.proxy.date.now))
        finish()
    }

    private func respond(status: Int, headers: HTTPFields, body: [UInt8]) {
        var headers = headers
        headers.append(name: "Content-Length", value: String(body.count), code: .contentLength)
        writeHead(status: status, headers: headers)
        if request?.method != "HEAD" { connection.write(body) }
        finish()
    }

    private func writeHead(status: Int, headers: HTTPFields) {
        answered = true
        var headers = headers
        headers.append(name: "Cache-Control", value: "no-store", code: .cacheControl)
        headers.append(name: "Date", value: server.proxy.date.now, code: .date)
        headers.append(name: "X-Content-Type-Options", value: "nosniff")
        headers.append(name: "X-Frame-Options", value: "DENY")
        headers.append(name: "Referrer-Policy", value: "no-referrer")
        // Everything but the page's own files is data: never a document that runs anything,
        // even when a stored body is opened directly (a stored `text/html` with a script).
        if !headers.contains("content-security-policy") {
            headers.append(name: "Content-Security-Policy", value: "sandbox; default-src 'none'")
        }
        headers.append(name: "Connection", value: "close", code: .connection)
        connection.write(ResponseWriter.head(status: status, reason: "", headers: headers))
    }

    private func finish() {
        connection.closeAfterFlush()
        server.connectionDidClose(self)
    }

    // MARK: - Helpers

    /// `127.0.0.1:8081`, `localhost`, `[::1]:8081`, …
    static func isLoopbackAuthority(_ value: String) -> Bool {
        var host = value.lowercased()
        if host.hasPrefix("[") {
            guard let end = host.firstIndex(of: "]") else { return false }
            host = String(host[host.index(after: host.startIndex)..<end])
        } else if let colon = host.lastIndex(of: ":") {
            host = String(host[..<colon])
        }
        if host == "localhost" { return true }
        guard let ip = SocketAddress.parseIP(host) else { return false }
        return SocketAddress(ip: ip, port: 0).isLoopback
    }

    /// The path and the decoded query parameters of an origin-form target.
    static func split(_ target: String) -> (String, [String: String]) {
        guard let mark = target.firstIndex(of: "?") else { return (target, [:]) }
        var query: [String: String] = [:]
        for pair in target[target.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard let name = parts.first.map({ percentDecoded(String($0)) }) else { continue }
            query[name] = parts.count > 1 ? percentDecoded(String(parts[1])) : ""
        }
        return (String(target[..<mark]), query)
    }

    /// `%XX` and `+` decoded (malformed escapes are kept as they are).
    static func percentDecoded(_ text: String) -> String { PercentEncoding.decode(text, plusAsSpace: true) }
}
