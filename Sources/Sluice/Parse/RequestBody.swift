/// Reads a request body from the client connection as libcurl asks for it, removing the
/// chunked framing and enforcing the size limit; bytes stay in the socket buffer until asked for.
struct RequestBody {
    enum Read: Equatable {
        case bytes(Int)
        case end
        case wait
        case failure(SluiceError)
    }

    private var remaining: Int64
    private var decoder: ChunkedDecoder?
    /// The body ends with its stream (``ProxyRequest/BodyFraming/streamEnd``): `remaining` is
    /// then what the body limit leaves.
    private var untilStreamEnd = false
    private var maxBodyBytes = 0
    private(set) var isComplete: Bool
    /// Where the upload stands between reads.
    private var pace = Pace.reading

    /// The upload's pace: reading, or paused until the client sends more.
    private enum Pace {
        case reading
        case waitingForClient
    }

    /// Where a client's `Expect: 100-continue` stands (RFC 9110 §10.1.1).
    enum Expectation: Equatable {
        /// No `100 Continue` went to the client yet.
        case unanswered
        /// The expectation went to the origin, whose 100 (or final answer) is awaited.
        case forwarded
        /// The client had its `100 Continue` (Sluice's own, or the origin's passed on): once.
        case answered
    }

    private(set) var expectation = Expectation.unanswered

    /// The expectation goes to the origin: its 100 will answer it.
    mutating func forwardExpectation() {
        if expectation == .unanswered { expectation = .forwarded }
    }

    /// Marks `100 Continue` as sent; `true` the first time (send it now).
    mutating func announceContinue() -> Bool {
        defer { expectation = .answered }
        return expectation != .answered
    }

    /// The upload was waiting for the client: `true` once, then it reads again.
    mutating func takeWaiting() -> Bool {
        guard case .waitingForClient = pace else { return false }
        pace = .reading
        return true
    }

    /// Body bytes handed upstream so far (upload progress).
    private(set) var received: Int64 = 0
    /// The length announced (`Content-Length`), `nil` for chunked or no body.
    let expected: Int64?

    init(framing: ProxyRequest.BodyFraming, limits: RequestParser.Limits) {
        if case .length(let count) = framing { expected = count } else { expected = nil }
        switch framing {
        case .none:
            remaining = 0
            isComplete = true
        case .length(let count):
            remaining = count
            isComplete = count == 0
        case .chunked:
            remaining = 0
            decoder = ChunkedDecoder(maxBodyBytes: limits.maxBodyBytes)
            isComplete = false
        case .streamEnd:
            // Until the stream ends, within the body limit.
            remaining = limits.maxBodyBytes
            maxBodyBytes = Int(limits.maxBodyBytes)
            untilStreamEnd = true
            isComplete = false
        }
    }

    mutating func read(from connection: any ClientStream, into buffer: UnsafeMutableRawBufferPointer) -> Read {
        let read = readOnce(from: connection, into: buffer)
        if read == .wait { pace = .waitingForClient }
        if case .bytes(let count) = read { received += Int64(count) }
        return read
    }

    private mutating func readOnce(from connection: any ClientStream, into buffer: UnsafeMutableRawBufferPointer)
        -> Read
    {
        if isComplete { return .end }
        if decoder != nil { return readChunked(from: connection, into: buffer) }
        var produced = 0
        while produced < buffer.count, remaining > 0, connection.inputCount > 0 {
            let copied = connection.withFirstInputSegment { segment -> Int in
                let amount = Int(min(Int64(min(segment.count, buffer.count - produced)), remaining))
                (buffer.baseAddress! + produced).copyMemory(from: segment.baseAddress!, byteCount: amount)
                return amount
            }
            connection.drainInput(copied)
            produced += copied
            remaining -= Int64(copied)
        }
        if untilStreamEnd {
            if remaining == 0, connection.inputCount > 0 {
                return .failure(.badRequest(reason: .bodyTooLarge(limit: maxBodyBytes)))
            }
            if connection.inputCount == 0, connection.inputEnded { isComplete = true }
        } else if remaining == 0 {
            isComplete = true
        } else if produced == 0, connection.inputCount == 0, connection.inputEnded {
            // The stream ended short of the length it announced (an HTTP/2 END_STREAM, RFC 9113
            // §8.1.1): waiting would wait for nothing.
            return .failure(.badRequest(reason: .malformed("the request body ended before its Content-Length")))
        }
        if produced > 0 { return .bytes(produced) }
        return isComplete ? .end : .wait
    }

    private mutating func readChunked(from connection: any ClientStream, into buffer: UnsafeMutableRawBufferPointer)
        -> Read
    {
        var produced = 0
        reading: while produced < buffer.count, connection.inputCount > 0, !(decoder!.isFinished) {
            let result = connection.withFirstInputSegment { segment -> Result<ChunkedDecoder.Step, SluiceError> in
                do throws(SluiceError) {
                    let output = UnsafeMutableRawBufferPointer(rebasing: buffer[produced...])
                    return .success(try decoder!.decode(segment, into: output))
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .success(let step):
                connection.drainInput(step.consumed)
                produced += step.produced
                if step.consumed == 0 && step.produced == 0 { break reading }
            case .failure(let error):
                return .failure(error)
            }
        }
        if decoder!.isFinished { isComplete = true }
        if produced > 0 { return .bytes(produced) }
        return isComplete ? .end : .wait
    }
}
