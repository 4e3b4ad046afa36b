/// Sluice's own answers to gRPC calls (`content-type: application/grpc…`, HTTP/2): a gRPC client
/// reads a status from `grpc-status`, not from HTTP's, and shows nothing of a problem+json body.
/// So a problem Sluice answers a call with goes as gRPC's Trailers-Only answer (one HEADERS frame:
/// HTTP 200, `grpc-status`, `grpc-message` with the problem's slug and detail, no body), its
/// code mapped from the HTTP status as gRPC's own HTTP-to-gRPC mapping does.
/// - SeeAlso: gRPC's `doc/PROTOCOL-HTTP2.md` (Trailers-Only, percent-encoded `grpc-message`) and
///   `doc/http-grpc-status-mapping.md`.
enum GRPCAnswer {
    /// Whether a request is a gRPC call (not gRPC-Web, whose status travels in its body).
    static func isCall(_ request: ProxyRequest) -> Bool { isCall(contentType: request.headers[.contentType]) }

    /// Whether a `Content-Type` names a gRPC call: `application/grpc`, `application/grpc+proto`,
    /// …, in any case, not `application/grpc-web…` (compared in place: no lower-case copy).
    static func isCall(contentType: String?) -> Bool {
        guard let type = contentType else { return false }
        func starts(with prefix: StaticString) -> Bool {
            var bytes = type.utf8.makeIterator()
            let wanted = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
            for byte in wanted {
                guard let next = bytes.next() else { return false }
                let lower = next >= 0x41 && next <= 0x5A ? next | 0x20 : next
                if lower != byte { return false }
            }
            return true
        }
        return starts(with: "application/grpc") && !starts(with: "application/grpc-web")
    }

    /// The gRPC status code for a problem's HTTP status.
    static func code(forHTTPStatus status: Int) -> Int {
        switch status {
        case 400: 13  // INTERNAL
        case 401, 407: 16  // UNAUTHENTICATED
        case 403: 7  // PERMISSION_DENIED
        case 404: 12  // UNIMPLEMENTED
        case 408: 4  // DEADLINE_EXCEEDED
        case 413, 431: 8  // RESOURCE_EXHAUSTED
        case 429, 502, 503, 504: 14  // UNAVAILABLE
        default: 2  // UNKNOWN
        }
    }

    /// `text` as `grpc-message` carries it: bytes outside printable ASCII, and `%`, percent-encoded.
    static func percentEncoded(_ text: String) -> String {
        PercentEncoding.encoded(text) { $0 >= 0x20 && $0 <= 0x7E && $0 != 0x25 }
    }

    /// The Trailers-Only head answering a call with `problem`.
    static func head(_ problem: Problem, date: String) -> ResponseHead {
        var headers = HTTPFields()
        headers.append(name: "content-type", value: "application/grpc", code: .contentType)
        headers.append(name: "grpc-status", value: String(code(forHTTPStatus: problem.status)))
        headers.append(name: "grpc-message", value: percentEncoded("\(problem.slug): \(problem.detail)"))
        headers.append(name: "date", value: date, code: .date)
        return ResponseHead(status: 200, reason: "OK", headers: headers)
    }
}
