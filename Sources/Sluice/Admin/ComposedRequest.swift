import EventIO

/// A request made from the page or the admin API (`POST /compose`: compose, edit and resend,
/// resend ×N): it goes through Sluice's own path as an exchange of its own (rules, cache,
/// contracts, recording, the page, the access log, whose client is `composed`), its client an
/// in-memory one that keeps the answer (the first ``keptBody`` bytes of the body).
final class ComposedRequest {
    /// What the composer sends.
    struct Draft: Equatable {
        var method: String
        var url: String
        var headers: [(String, String)]
        var body: [UInt8]

        static func == (a: Draft, b: Draft) -> Bool {
            a.method == b.method && a.url == b.url && a.body == b.body
                && a.headers.elementsEqual(b.headers) { $0 == $1 }
        }

        /// The request as a client would write it to the proxy (absolute form; the body's length
        /// Sluice's own), or why it cannot be.
        func requestText() -> Result<[UInt8], SluiceError> {
            func bad(_ why: String) -> Result<[UInt8], SluiceError> { .failure(.badRequest(reason: .malformed(why))) }
            guard !method.isEmpty, method.utf8.allSatisfy({ RequestParser.isTokenByte($0) }) else {
                return bad("the method is not a token: \(method)")
            }
            guard url.hasPrefix("http://") || url.hasPrefix("https://"), !url.utf8.contains(where: { $0 <= 0x20 })
            else {
                return bad("the URL must be absolute http:// or https:// without spaces: \(url)")
            }
            var text = "\(method) \(url) HTTP/1.1\r\n"
            var hasHost = false
            for (name, value) in headers {
                guard !name.isEmpty, name.utf8.allSatisfy({ RequestParser.isTokenByte($0) }) else {
                    return bad("a field name is not a token: \(name)")
                }
                guard !value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                    return bad("the value of \(name) holds CR, LF or NUL")
                }
                let lower = name.lowercased()
                if ["content-length", "transfer-encoding", "connection", "proxy-connection"].contains(lower) {
                    continue
                }
                if lower == "host" { hasHost = true }
                text += "\(name): \(value)\r\n"
            }
            if !hasHost, let authority = url.split(separator: "/", omittingEmptySubsequences: true).dropFirst().first {
                text += "Host: \(authority)\r\n"
            }
            if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) {
                text += "Content-Length: \(body.count)\r\n"
            }
            text += "\r\n"
            return .success(Array(text.utf8) + body)
        }
    }

    /// What came back.
    struct Answer {
        var id: Int
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
        var bodySize: Int64
        var durationMilliseconds: Double
    }

    /// The client's address in logs and on the page.
    static let peer = "composed"
    /// Body bytes kept of each answer.
    static let keptBody = 256 * 1024

    private var input: [UInt8]
    private var inputStart = 0
    private var output: [UInt8] = []
    private var outputTotal: Int64 = 0
    private let env: ExchangeEnvironment
    private let done: (Result<Answer, SluiceError>) -> Void
    private var exchange: Exchange?
    private let started = EventLoop.monotonicNanoseconds()

    private init(input: [UInt8], env: ExchangeEnvironment, done: @escaping (Result<Answer, SluiceError>) -> Void) {
        self.input = input
        self.env = env
        self.done = done
    }

    /// `draft` as a request ready to go through the proxy's path (``start()``; `done` then runs
    /// once with the answer, perhaps before `start` returns), or why it cannot.
    static func make(
        _ draft: Draft, env: ExchangeEnvironment, done: @escaping (Result<Answer, SluiceError>) -> Void
    ) -> Result<ComposedRequest, SluiceError> {
        let bytes: [UInt8]
        switch draft.requestText() {
        case .success(let text): bytes = text
        case .failure(let error): return .failure(error)
        }
        var parser = RequestParser(limits: env.parserLimits)
        let outcome = bytes.withUnsafeBytes { parser.parse($0) }
        switch outcome {
        case .needMore: return .failure(.badRequest(reason: .malformed("the request head is incomplete")))
        case .failure(let error): return .failure(error)
        case .head(var request, let consumed):
            // `TE: trailers` (a gRPC call's) is the hop's own on HTTP/1.1, but a draft says what
            // the request is: it goes upstream as an HTTP/2 stream's would.
            request.takesTrailers = request.headers.tokens(.te).contains("trailers")
            let composed = ComposedRequest(input: Array(bytes[consumed...]), env: env, done: done)
            composed.exchange = Exchange(client: composed, env: env, request: request)
            return .success(composed)
        }
    }

    /// Sends it.
    func start() {
        guard let exchange else { return }
        env.stats.requests += 1
        exchange.start()
    }

    /// The caller left: the exchange ends as one whose client left does (a paused item goes
    /// with it).
    func cancel() { exchange?.clientFailed(nil) }

    /// The answer, read back from what the exchange wrote (its own head, then the body as framed).
    private func answer(id: Int) -> Result<Answer, SluiceError> {
        let end = output.indices.dropLast(3).first {
            output[$0] == 13 && output[$0 + 1] == 10 && output[$0 + 2] == 13 && output[$0 + 3] == 10
        }
        guard let end else {
            return .failure(.upstreamFailed(reason: .badResponse(detail: "the exchange ended without an answer")))
        }
        let lines = String(decoding: output[..<end], as: UTF8.self).split(
            separator: "\r\n", omittingEmptySubsequences: false)
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingOWS()))
        }
        var body = Array(output[(end + 4)...])
        var size = outputTotal - Int64(end + 4)
        if headers.contains(where: { $0.0.lowercased() == "transfer-encoding" }) {
            var decoder = ChunkedDecoder(allowsBlankAfterSize: true)  // an origin's body
            var decoded = [UInt8](repeating: 0, count: body.count)
            let step = body.withUnsafeBytes { raw in
                decoded.withUnsafeMutableBytes { try? decoder.decode(raw, into: $0) }
            }
            body = Array(decoded.prefix(step?.produced ?? 0))
            size = decoder.decodedBytes
        }
        return .success(
            Answer(
                id: id, status: status, headers: headers, body: Array(body.prefix(ComposedRequest.keptBody)),
                bodySize: size, durationMilliseconds: Double(EventLoop.monotonicNanoseconds() - started) / 1e6))
    }
}

extension ComposedRequest: ExchangeHost {
    var stream: any ClientStream { self }
    var peerText: String { ComposedRequest.peer }
    var isLocal: Bool { true }
    var inputClosed: Bool { false }
    func requestBodyDidEnd() {}
    func sendHeldHeadAtEndOfTurn() {
        env.loop.callSoon { [weak self] in self?.exchange?.sendHeldHead() }
    }

    func exchangeDidFinish(_ exchange: Exchange, closeConnection: Bool, abort: Bool) {
        let id = exchange.id
        self.exchange = nil
        done(answer(id: id))
    }
}

extension ComposedRequest: ClientStream {
    var inputCount: Int { input.count - inputStart }

    func withFirstInputSegment<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        input.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[inputStart...])) }
    }

    func withInput<R>(upTo count: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        input.withUnsafeBytes {
            body(UnsafeRawBufferPointer(rebasing: $0[inputStart..<min(input.count, inputStart + count)]))
        }
    }

    func drainInput(_ count: Int) { inputStart = min(input.count, inputStart + count) }

    /// Kept up to the head and ``keptBody`` bytes after it; counted beyond. Never full: the
    /// exchange is never paused for this client.
    func write(_ bytes: UnsafeRawBufferPointer, more: Bool) {
        outputTotal += Int64(bytes.count)
        let room = max(0, 64 * 1024 + ComposedRequest.keptBody + 64 - output.count)
        output.append(contentsOf: bytes.prefix(room))
    }

    func write(_ bytes: [UInt8]) { bytes.withUnsafeBytes { write($0, more: false) } }
    func write(_ text: String) { write(Array(text.utf8)) }
    var outputCount: Int { 0 }
    var writeBroken: Bool { false }

    func write(_ head: UnsafeRawBufferPointer, file: SharedFile, range: Range<Int>) {
        write(head, more: true)
        write(UnsafeRawBufferPointer(rebasing: file.bytes[range]), more: false)
    }
}
