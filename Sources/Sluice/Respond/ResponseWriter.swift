/// HTTP/1.1 serialisation of response heads, chunked framing and problem responses.
enum ResponseWriter {
    /// How a response body is delimited on the client connection (RFC 9112 §6.3).
    enum Framing: Equatable {
        /// No body (HEAD, 1xx, 204, 205, 304).
        case none
        /// `Content-Length` from the origin.
        case length
        /// Chunked transfer coding.
        case chunked
        /// Delimited by closing the connection (HTTP/1.0 clients without a length).
        case close
    }

    /// The head bytes of a client head.
    static func head(_ head: ResponseHead) -> [UInt8] {
        self.head(status: head.status, reason: head.reason, headers: head.headers)
    }

    /// The head bytes for `response` to a client.
    static func head(status: Int, reason: String, headers: HTTPFields) -> [UInt8] {
        head(status: status, reason: reason, origin: headers, edit: .unchanged)
    }

    /// The head bytes for a client: the origin's `status`, `reason` and lines as `edit` changes
    /// them, written straight from the origin's list (the same bytes as ``head(status:reason:headers:)``
    /// of `edit.apply(to: origin)`, without making that list), then `Cache-Status` and
    /// `Sluice-Validation` when given (the field values written in place, no `String`).
    static func head(
        status: Int, reason: String, origin: HTTPFields, edit: Forwarding.ClientEdit,
        cacheStatus: CacheStatus? = nil, validation: String? = nil
    ) -> [UInt8] {
        let phrase = reason.isEmpty ? ReasonPhrase.standard(status) : reason
        var total = "HTTP/1.1 000 \r\n\r\n".utf8.count + phrase.utf8.count
        // At most: the Cache-Status value's length is known once written.
        if let cacheStatus { total += "Cache-Status: \r\n".utf8.count + cacheStatus.byteBound }
        if let validation { total += "Sluice-Validation: \r\n".utf8.count + validation.utf8.count }
        // Indices, not `for field in`: binding a Field copies (retains) its strings.
        let fields = origin.fields
        let added = edit.added
        var seen = Forwarding.ClientEdit.Seen()
        for index in fields.indices {
            switch edit.line(fields, index, &seen) {
            case .drop: continue
            case .keep: total += fields[index].name.utf8.count + fields[index].value.utf8.count + 4
            case .value(let value): total += fields[index].name.utf8.count + value.utf8.count + 4
            }
        }
        for index in added.indices { total += added[index].name.utf8.count + added[index].value.utf8.count + 4 }
        var bytes: [UInt8] = []
        bytes.append(atMost: total) { out in
            out.put("HTTP/1.1 ")
            // Status codes are three digits (RFC 9110 §15).
            let code = min(max(status, 100), 999)
            out.put(UInt8(0x30 + code / 100))
            out.put(UInt8(0x30 + code / 10 % 10))
            out.put(UInt8(0x30 + code % 10))
            out.put(0x20)
            out.put(phrase)
            out.put(0x0D)
            out.put(0x0A)
            var seen = Forwarding.ClientEdit.Seen()
            for index in fields.indices {
                switch edit.line(fields, index, &seen) {
                case .drop: continue
                case .keep:
                    out.put(fields[index].name)
                    out.put(0x3A)
                    out.put(0x20)
                    out.put(fields[index].value, opaque: fields[index].opaque)
                case .value(let value):
                    out.put(fields[index].name)
                    out.put(0x3A)
                    out.put(0x20)
                    out.put(value)
                }
                out.put(0x0D)
                out.put(0x0A)
            }
            for index in added.indices {
                out.put(added[index].name)
                out.put(0x3A)
                out.put(0x20)
                out.put(added[index].value, opaque: added[index].opaque)
                out.put(0x0D)
                out.put(0x0A)
            }
            if let cacheStatus {
                out.put("Cache-Status: ")
                cacheStatus.write(into: &out)
                out.put("\r\n")
            }
            if let validation {
                out.put("Sluice-Validation: ")
                out.put(validation)
                out.put("\r\n")
            }
            out.put(0x0D)
            out.put(0x0A)
        }
        return bytes
    }

    /// The chunk-size line for `count` bytes.
    static func chunkHeader(_ count: Int) -> [UInt8] { Array((String(count, radix: 16) + "\r\n").utf8) }

    /// CRLF after chunk data.
    static let crlf: [UInt8] = [0x0D, 0x0A]

    /// The last chunk and an empty trailer section.
    static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)

    /// The last chunk and a trailer section with `trailers` (framing fields left out: RFC 9110
    /// §6.5.1 keeps them out of trailers).
    static func lastChunk(trailers: HTTPFields) -> [UInt8] {
        var bytes = Array("0\r\n".utf8)
        for field in trailers
        where !field.is(.contentLength) && !field.is(.transferEncoding) && !field.is(.trailer) && !field.is(.host) {
            bytes += Array(field.name.utf8) + [0x3A, 0x20]
            bytes += HTTPFields.Field.wireBytes(field.value, opaque: field.opaque) + crlf
        }
        return bytes + crlf
    }

    /// The 100 Continue interim response.
    static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// A complete problem response; `headOnly` omits the body (HEAD requests).
    static func problem(
        _ problem: Problem, keepAlive: Bool, headOnly: Bool, date: String, cacheStatus: CacheStatus? = nil
    ) -> [UInt8] {
        let head = problemHead(problem, keepAlive: keepAlive, date: date, cacheStatus: cacheStatus)
        return self.head(status: head.status, reason: head.reason, headers: head.headers)
            + (headOnly ? [] : Array(problem.body.utf8))
    }

    /// The head of a problem answer (its body is `problem.body`).
    /// `marks`: the exchange's verdicts so far (`Sluice-Validation` members), e.g. a request's
    /// broken contract under `requests: report` when the response's then fails `enforce`.
    static func problemHead(
        _ problem: Problem, keepAlive: Bool, date: String, cacheStatus: CacheStatus? = nil, marks: [String] = []
    ) -> ResponseHead {
        let body = problem.body
        var headers = HTTPFields()
        headers.append(name: "Content-Type", value: "application/problem+json", code: .contentType)
        headers.append(name: "Content-Length", value: String(body.utf8.count), code: .contentLength)
        headers.append(name: "Cache-Control", value: "no-store", code: .cacheControl)
        headers.append(name: "Date", value: date, code: .date)
        headers.append(name: "Via", value: "1.1 sluice", code: .via)
        if let cacheStatus { headers.append(name: "Cache-Status", value: cacheStatus.description, code: .cacheStatus) }
        if !marks.isEmpty { headers.append(name: "Sluice-Validation", value: marks.joined(separator: ", ")) }
        if let seconds = problem.retryAfter { headers.append(name: "Retry-After", value: String(seconds)) }
        if let allow = problem.allow { headers.append(name: "Allow", value: allow) }
        if let challenge = problem.wwwAuthenticate { headers.append(name: "WWW-Authenticate", value: challenge) }
        if let challenge = problem.proxyAuthenticate {
            headers.append(name: "Proxy-Authenticate", value: challenge, code: .proxyAuthenticate)
        }
        if !keepAlive { headers.append(name: "Connection", value: "close", code: .connection) }
        return ResponseHead(status: problem.status, reason: problem.reasonPhrase ?? "", headers: headers)
    }
}

/// Standard reason phrases (RFC 9110 §15).
public enum ReasonPhrase {
    /// The phrase for `status`, or `Status N` for codes without one.
    public static func standard(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 102: "Processing"
        case 103: "Early Hints"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 203: "Non-Authoritative Information"
        case 204: "No Content"
        case 205: "Reset Content"
        case 206: "Partial Content"
        case 207: "Multi-Status"
        case 208: "Already Reported"
        case 226: "IM Used"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 402: "Payment Required"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 418: "I'm a teapot"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 423: "Locked"
        case 424: "Failed Dependency"
        case 425: "Too Early"
        case 426: "Upgrade Required"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 451: "Unavailable For Legal Reasons"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        case 506: "Variant Also Negotiates"
        case 507: "Insufficient Storage"
        case 508: "Loop Detected"
        case 510: "Not Extended"
        case 511: "Network Authentication Required"
        default: "Status \(status)"
        }
    }
}
