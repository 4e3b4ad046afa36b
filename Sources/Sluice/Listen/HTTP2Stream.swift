import EventIO
import HTTP2

/// One HTTP/2 stream of an intercepted connection, as an ordinary exchange sees a client: a
/// ``ClientStream`` whose input is the request body (its DATA, chunk-coded when no length was
/// given) and whose output, HTTP/1.1 as the exchange writes it, is read back
/// (``ResponseUnframer``) into the stream's HEADERS, DATA and END_STREAM. Backpressure both
/// ways: the request body's window opens as the exchange reads it, and the exchange pauses while
/// the stream's unsent response bytes are above ``ResponseOutput/highWater``.
final class HTTP2Stream: ClientStream, ExchangeHost {
    let id: Int32
    unowned let connection: HTTP2Connection
    var exchange: Exchange?
    /// The request as it arrives.
    var fields = HTTPFields()
    var pseudo: [String: String] = [:]
    /// Bytes of the request head (names and values), against `limits.max_header_bytes`.
    var headBytes = 0

    /// Request body bytes not yet read by the exchange.
    private var input: [UInt8] = []
    private var inputStart = 0
    /// Body bytes received and not yet given back to the window.
    private var unconsumed = 0
    /// The request body has no length: DATA is given to the exchange chunk-coded.
    private(set) var chunkedInput = false
    private(set) var requestEnded = false
    /// Its head is complete and its exchange starts after the current read.
    var awaitingStart = false

    /// The response, read back from what the exchange wrote.
    private var unframer: ResponseUnframer?
    /// Response body bytes not yet taken by the session.
    private var output: [UInt8] = []
    private var outputStart = 0
    private var bodyEnded = false
    /// The origin's trailers, sent after the body (gRPC's `grpc-status`).
    private var trailers: [(String, String)] = []
    private(set) var headSubmitted = false
    /// The stream closed (ended, or reset by either side).
    private(set) var closed = false

    init(id: Int32, connection: HTTP2Connection) {
        self.id = id
        self.connection = connection
    }

    // MARK: - The request

    func received(_ data: UnsafeRawBufferPointer) {
        guard !data.isEmpty else { return }
        if chunkedInput { input += Array(String(data.count, radix: 16).utf8) + [0x0D, 0x0A] }
        input += data
        if chunkedInput { input += [0x0D, 0x0A] }
        unconsumed += data.count
        exchange?.clientDataAvailable()
    }

    /// From now on the body is chunk-coded for the exchange (its length is not known): what
    /// arrived so far becomes the first chunk.
    func chunkInput() {
        guard !chunkedInput else { return }
        chunkedInput = true
        let body = Array(input[inputStart...])
        input = body.isEmpty ? [] : Array(String(body.count, radix: 16).utf8) + [0x0D, 0x0A] + body + [0x0D, 0x0A]
        inputStart = 0
        if requestEnded { input += Array("0\r\n\r\n".utf8) }
    }

    func requestDidEnd() {
        guard !requestEnded else { return }
        requestEnded = true
        if chunkedInput { input += Array("0\r\n\r\n".utf8) }
        exchange?.clientDataAvailable()
    }

    var inputCount: Int { input.count - inputStart }

    func withFirstInputSegment<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        input.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[inputStart...])) }
    }

    func withInput<R>(upTo count: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        input.withUnsafeBytes {
            body(UnsafeRawBufferPointer(rebasing: $0[inputStart..<min(input.count, inputStart + count)]))
        }
    }

    func drainInput(_ count: Int) {
        inputStart = min(input.count, inputStart + count)
        if inputStart == input.count {
            input.removeAll(keepingCapacity: true)
            inputStart = 0
        }
        // The window opens by what the exchange read (chunk framing counted as body: a few bytes more).
        let credit = min(count, unconsumed)
        unconsumed -= credit
        connection.consumed(self, bytes: credit)
    }

    // MARK: - The response

    func write(_ bytes: UnsafeRawBufferPointer, more: Bool) { response(bytes) }

    var outputCount: Int { output.count - outputStart }
    var writeBroken: Bool { closed }

    private func response(_ bytes: UnsafeRawBufferPointer) {
        guard !closed, !bytes.isEmpty else { return }
        if unframer == nil {
            unframer = ResponseUnframer(
                headRequest: pseudo[":method"] == "HEAD", maxHeaderBytes: max(64 * 1024, connection.maxHeaderBytes))
        }
        unframer?.feed(bytes) { event in
            switch event {
            case .head(let head, let hasBody):
                // gRPC's Trailers-Only answer (its status in the head) is one HEADERS frame with
                // END_STREAM; a DATA frame after it would be a protocol error to gRPC clients.
                guard hasBody, head.headers["grpc-status"] == nil else {
                    submit(head, hasBody: false)
                    return
                }
                // Held until the body's first bytes, its end, or the end of this loop turn: a
                // body that turns out empty goes as one HEADERS frame with END_STREAM (gRPC's
                // trailers-only answers are read that way).
                pendingHead = head
                connection.loop.callSoon { [weak self] in self?.submitPendingHead() }
            case .body(let bytes):
                submitPendingHead()
                output += bytes
            case .end:
                bodyEnded = true
                if let head = pendingHead.take() { submit(head, hasBody: !trailers.isEmpty) }
            }
        }
        if unframer?.failure != nil { return connection.reset(self) }
        connection.dataReady(self)
    }

    private var pendingHead: ResponseHead?

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
        }
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
        if abort || (!headSubmitted && !closed) {
            connection.reset(self)
        } else if unframer?.endsWithExchange == true || !bodyEnded {
            bodyEnded = true
            connection.dataReady(self)
        }
        connection.exchangeDidFinish(self)
    }
}
