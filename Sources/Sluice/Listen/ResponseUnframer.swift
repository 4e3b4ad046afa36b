/// An exchange's HTTP/1.1 response read back from the bytes it writes (status line, fields, a
/// body framed by `Content-Length`, chunked coding or the end), for a client that does not speak
/// HTTP/1.1: an HTTP/2 stream takes the head as a HEADERS frame and the body as DATA. Pure.
struct ResponseUnframer {
    /// What the written bytes held.
    enum Event: Equatable {
        /// The final head (interim `1xx` heads are skipped: HTTP/2 would send them as HEADERS of
        /// their own, which no client here needs).
        case head(ResponseHead, hasBody: Bool)
        case body([UInt8])
        /// The body is complete (a length or a last chunk reached).
        case end
    }

    private enum Phase {
        case head
        case length(Int64)
        case chunked
        case untilClose
        case done
    }

    private var phase = Phase.head
    private var line: [UInt8] = []
    private var parser: ResponseHeadParser
    private var decoder = ChunkedDecoder()
    /// The request was a HEAD: the response has no body, whatever its fields say.
    private let headRequest: Bool
    /// Why the bytes could not be read (the stream is then reset).
    private(set) var failure: String?

    init(headRequest: Bool, maxHeaderBytes: Int) {
        self.headRequest = headRequest
        parser = ResponseHeadParser(maxHeaderBytes: maxHeaderBytes)
    }

    /// Whether the body runs until the exchange ends (no length, not chunked).
    var endsWithExchange: Bool { if case .untilClose = phase { true } else { false } }

    var isDone: Bool { if case .done = phase { true } else { false } }

    mutating func feed(_ bytes: UnsafeRawBufferPointer, emit: (Event) -> Void) {
        var index = 0
        while index < bytes.count, failure == nil {
            switch phase {
            case .head:
                let byte = bytes[index]
                index += 1
                line.append(byte)
                guard byte == 0x0A else { continue }
                let step = line.withUnsafeBytes { parser.consume($0) }
                line.removeAll(keepingCapacity: true)
                switch step {
                case .more, .interim: continue
                case .final(let head): begin(head, emit: emit)
                case .refused(let why): failure = why
                case .notHTTP: failure = "not an HTTP response"
                }
            case .length(let remaining):
                let take = Int(min(Int64(bytes.count - index), remaining))
                emit(.body(Array(bytes[index..<(index + take)])))
                index += take
                if remaining - Int64(take) == 0 {
                    phase = .done
                    emit(.end)
                } else {
                    phase = .length(remaining - Int64(take))
                }
            case .chunked:
                var out = [UInt8](repeating: 0, count: bytes.count - index)
                do {
                    let step = try out.withUnsafeMutableBytes { buffer throws(SluiceError) in
                        try decoder.decode(UnsafeRawBufferPointer(rebasing: bytes[index...]), into: buffer)
                    }
                    if step.produced > 0 { emit(.body(Array(out[0..<step.produced]))) }
                    index += step.consumed
                    if step.finished {
                        phase = .done
                        emit(.end)
                    }
                } catch {
                    failure = "the chunked body could not be read"
                }
            case .untilClose:
                emit(.body(Array(bytes[index...])))
                index = bytes.count
            case .done:
                index = bytes.count  // nothing follows a complete response on a stream
            }
        }
    }

    private mutating func begin(_ head: ResponseHead, emit: (Event) -> Void) {
        let noBody = headRequest || head.status == 204 || head.status == 205 || head.status == 304
        if noBody {
            phase = .done
            emit(.head(head, hasBody: false))
            emit(.end)
        } else if head.headers.tokens("transfer-encoding").last == "chunked" {
            phase = .chunked
            emit(.head(head, hasBody: true))
        } else if let length = head.headers["content-length"].flatMap({ Int64($0) }) {
            emit(.head(head, hasBody: length > 0))
            phase = length > 0 ? .length(length) : .done
            if length == 0 { emit(.end) }
        } else {
            phase = .untilClose
            emit(.head(head, hasBody: true))
        }
    }
}
