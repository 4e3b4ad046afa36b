import EventIO
import HTTP2

/// One HTTP/2 stream of an intercepted connection, as an ordinary exchange sees a client: its
/// input is the request body (its DATA, as it came), and it takes the response as parts
/// (``ResponseParts``: the head, body pieces and the end become HEADERS, DATA and END_STREAM;
/// no HTTP/1.1 bytes in between). Backpressure both ways: the request body's window opens as the
/// exchange reads it, and the exchange pauses while the stream's unsent response bytes are above
/// ``ResponseOutput/highWater``.
final class HTTP2Stream: ClientStream, ExchangeHost, ResponseParts {
    let id: Int32
    unowned let connection: HTTP2Connection
    var exchange: Exchange?
    /// The request as it arrives.
    var fields = HTTPFields()
    var pseudo: [String: String] = [:]
    /// A `host` field beside `:authority` (kept only to be compared with it).
    var hostBesideAuthority: String?
    /// Bytes of the request head (names and values), against `limits.max_header_bytes`.
    var headBytes = 0

    /// Request body bytes not yet read by the exchange.
    private var input: [UInt8] = []
    private var inputStart = 0
    private(set) var requestEnded = false
    /// Its head is complete and its exchange starts after the current read.
    var awaitingStart = false
    /// Its first header block ended: a later one is the request's trailer section (RFC 9113
    /// §8.1), never merged into the head, also when it comes in the same read.
    var headEnded = false

    /// A final head with a body to follow, held until the body's first bytes, its end, or the end
    /// of this loop turn: a body that turns out empty goes as one HEADERS frame with END_STREAM
    /// (gRPC's trailers-only answers are read that way).
    private var pendingHead: ResponseHead?
    /// Response body bytes not yet taken by the session.
    private var output: [UInt8] = []
    private var outputStart = 0
    private var bodyEnded = false
    /// The origin's trailers, sent after the body (gRPC's `grpc-status`).
    private var trailers: [(String, String)] = []
    private(set) var headSubmitted = false
    /// The stream closed (ended, or reset by either side).
    private(set) var closed = false
    /// A rule's injected reset (`faults.reset`): the stream is reset once the body bytes already
    /// given to it went out (the fault promises the head and `after_bytes` of the body first).
    private(set) var resetWhenDrained = false
    /// The frame that ends the response (END_STREAM) went to the client.
    var responseEndSent = false
    /// What becomes of request body bytes that come after the exchange ended.
    enum Leftover {
        /// The exchange reads them.
        case wanted
        /// Dropped (their window opened); `bytes` so far.
        case dropping(bytes: Int)
        /// Too many came: RST_STREAM(NO_ERROR) follows the response's end.
        case resetting
    }
    var leftover = Leftover.wanted
    /// When the request body last came on (or the stream opened), and since when response bytes
    /// wait unsent without the client taking any (`nil`: none wait): `timeouts.client_body`
    /// bounds both stalls (``HTTP2Connection/checkStalls(now:)``).
    private(set) var inputProgressAt = EventLoop.monotonicNanoseconds()
    /// When its first frame came.
    let openedAt = EventLoop.monotonicNanoseconds()
    private(set) var outputWaitingSince: UInt64?

    init(id: Int32, connection: HTTP2Connection) {
        self.id = id
        self.connection = connection
    }

    /// What stalls, at `now`, past `limit` nanoseconds: the request body (one whose length was
    /// announced, or that nothing answered yet: a gRPC call's client may stay quiet as long as it
    /// likes), or a response the client does not read.
    /// `connectionMovedAt`: when the session last took response bytes of any stream: a stream
    /// waiting its turn behind others (priorities) while the connection moves is not stalled.
    func stall(now: UInt64, limit: UInt64, connectionMovedAt: UInt64) -> Stall? {
        guard exchange != nil, !closed else { return nil }
        if let since = outputWaitingSince, outputCount > 0, now &- since > limit, now &- connectionMovedAt > limit {
            return .response
        }
        // (Bytes the exchange has not read yet: Sluice holds the window shut, not the client.)
        guard !requestEnded, inputCount == 0, case .wanted = leftover, now &- inputProgressAt > limit else {
            return nil
        }
        let announced = fields[.contentLength] != nil
        let grpc = fields[.contentType]?.lowercased().hasPrefix("application/grpc") == true
        return announced || (!headSubmitted && pendingHead == nil && !grpc) ? .request : nil
    }

    enum Stall { case request, response }

    // MARK: - The request

    func received(_ data: UnsafeRawBufferPointer) {
        guard !data.isEmpty else { return }
        // Its exchange is over: the rest of the body is not wanted, and not kept (its window
        // opens all the same: the connection's is shared by every stream).
        guard case .wanted = leftover else { return connection.discarded(self, bytes: data.count) }
        inputProgressAt = EventLoop.monotonicNanoseconds()
        input += data
        exchange?.clientDataAvailable()
    }

    func requestDidEnd() {
        guard !requestEnded else { return }
        requestEnded = true
        exchange?.clientDataAvailable()
    }

    /// The exchange is over before the request body: what is held and what comes is dropped,
    /// its window opened.
    func discardInput() {
        leftover = .dropping(bytes: 0)
        drainInput(inputCount)
    }

    var inputCount: Int { input.count - inputStart }
    var inputEnded: Bool { requestEnded }

    func withFirstInputSegment<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        input.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[inputStart...])) }
    }

    func withInput<R>(upTo count: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        input.withUnsafeBytes {
            body(UnsafeRawBufferPointer(rebasing: $0[inputStart..<min(input.count, inputStart + count)]))
        }
    }

    func drainInput(_ count: Int) {
        let count = min(count, input.count - inputStart)
        inputStart += count
        if inputStart == input.count {
            input.removeAll(keepingCapacity: true)
            inputStart = 0
        } else if inputStart >= 64 * 1024, inputStart >= input.count / 2 {
            // What was read goes (an upload whose buffer never quite empties kept all of it).
            input.removeFirst(inputStart)
            inputStart = 0
        }
        // The window opens by what the exchange read (and the client may send again: the
        // stall count starts over).
        if count > 0 { inputProgressAt = EventLoop.monotonicNanoseconds() }
        connection.consumed(self, bytes: count)
    }

    // MARK: - The response

    var parts: (any ResponseParts)? { self }
    var outputCount: Int { output.count - outputStart }
    var writeBroken: Bool { closed }

    /// Nothing writes HTTP/1.1 bytes to a stream that takes parts (``ResponseOutput`` asks ``parts``).
    func write(_ bytes: UnsafeRawBufferPointer, more: Bool) {}

    func respond(_ head: ResponseHead, hasBody: Bool) {
        guard !closed, !headSubmitted, pendingHead == nil else { return }
        // gRPC's Trailers-Only answer (its status in the head) is one HEADERS frame with
        // END_STREAM; a DATA frame after it would be a protocol error to gRPC clients.
        guard hasBody, head.headers["grpc-status"] == nil else { return submit(head, hasBody: false) }
        pendingHead = head
        connection.loop.callSoon { [weak self] in self?.submitPendingHead() }
    }

    func respondInterim(_ head: ResponseHead) {
        guard !closed, !headSubmitted, pendingHead == nil else { return }
        connection.respondInterim(self, head: head)
    }

    func respondBody(_ bytes: UnsafeRawBufferPointer) {
        guard !closed, !bytes.isEmpty, !bodyEnded else { return }
        submitPendingHead()
        if outputCount == 0 { outputWaitingSince = EventLoop.monotonicNanoseconds() }
        output += bytes
        connection.dataReady(self)
    }

    func respondEnd() {
        guard !closed, !bodyEnded else { return }
        bodyEnded = true
        if let head = pendingHead.take() { submit(head, hasBody: !trailers.isEmpty) }
        connection.dataReady(self)
    }

    private func submit(_ head: ResponseHead, hasBody: Bool) {
        headSubmitted = true
        if !hasBody { bodyEnded = true }
        connection.respond(self, head: head, hasBody: hasBody)
    }

    private func submitPendingHead() {
        guard let head = pendingHead.take(), !closed else { return }
        submit(head, hasBody: true)
        connection.dataReady(self)
    }

    /// The session asks for body bytes.
    func fill(_ buffer: UnsafeMutableRawBufferPointer) -> HTTP2ServerSession.Fill {
        let available = output.count - outputStart
        if available == 0 { return bodyEnded ? .end(trailers: trailers) : .wait }
        let count = min(available, buffer.count)
        output.withUnsafeBytes {
            buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[outputStart..<(outputStart + count)]))
        }
        outputStart += count
        if outputStart == output.count {
            output.removeAll(keepingCapacity: true)
            outputStart = 0
        } else if outputStart >= 64 * 1024, outputStart >= output.count / 2 {
            // What went out goes: a stream whose buffer never quite empties (many streams
            // sharing a slow client) kept every byte it had sent until its end (1.3 GB for 20
            // streams of 64 MiB). The rest moves to the front, at most as much as was sent.
            output.removeFirst(outputStart)
            outputStart = 0
        }
        outputWaitingSince = count > 0 ? EventLoop.monotonicNanoseconds() : outputWaitingSince
        return .bytes(count)
    }

    /// The whole response was handed to the session (head, body, end).
    var responseDelivered: Bool { headSubmitted && bodyEnded && outputCount == 0 }

    func streamClosed() {
        closed = true
        input = []
        output = []
        outputStart = 0
    }

    // MARK: - ExchangeHost

    var stream: any ClientStream { self }
    var peerText: String { connection.client.peerText }
    var isLocal: Bool { connection.client.isLocal }
    var inputClosed: Bool { closed }

    func requestBodyDidEnd() {}

    func responseTrailers(_ fields: HTTPFields) {
        trailers = fields.map { ($0.name, $0.value) }
    }

    func sendHeldHeadAtEndOfTurn() {
        connection.loop.callSoon { [weak self] in self?.exchange?.sendHeldHead() }
    }

    func exchangeDidFinish(_ exchange: Exchange, closeConnection: Bool, abort: Bool) {
        guard self.exchange === exchange else { return }
        // Cut (or ended without its end, after the head): the stream is reset rather than
        // ended, so that the client sees a truncation, not a whole answer. A stream the client
        // closed gets nothing (never an RST_STREAM for an RST_STREAM).
        if !closed, abort || !bodyEnded {
            if abort, outputCount > 0, exchange.notes.error?.isInjectedReset == true {
                resetWhenDrained = true
                connection.dataReady(self)
            } else {
                connection.reset(self)
            }
        }
        connection.exchangeDidFinish(self)
    }
}
