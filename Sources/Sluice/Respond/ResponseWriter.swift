/// HTTP/1.1 serialisation of response heads, chunked framing and problem responses.
enum ResponseWriter {
    /// How a response body is delimited on the client connection (RFC 9112 §6.3).
    enum Framing: Equatable {
        /// No body (HEAD, 1xx, 204, 304).
        case none
        /// `Content-Length` from the origin.
        case length
        /// Chunked transfer coding.
        case chunked
        /// Delimited by closing the connection (HTTP/1.0 clients without a length).
        case close
    }

    /// The head bytes for `response` to a client.
    static func head(status: Int, reason: String, headers: HTTPFields) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        func put(_ text: String) {
            var text = text
            text.withUTF8 { bytes.append(contentsOf: $0) }
        }
        put("HTTP/1.1 ")
        // Status codes are three digits (RFC 9110 §15).
        let code = min(max(status, 100), 999)
        bytes.append(UInt8(0x30 + code / 100))
        bytes.append(UInt8(0x30 + code / 10 % 10))
        bytes.append(UInt8(0x30 + code % 10))
        bytes.append(0x20)
        put(reason.isEmpty ? ReasonPhrase.standard(status) : reason)
        bytes.append(0x0D)
        bytes.append(0x0A)
        for field in headers {
            put(field.name)
            bytes.append(0x3A)
            bytes.append(0x20)
            put(field.value)
            bytes.append(0x0D)
            bytes.append(0x0A)
        }
        bytes.append(0x0D)
        bytes.append(0x0A)
        return bytes
    }

    /// The chunk-size line for `count` bytes.
    static func chunkHeader(_ count: Int) -> [UInt8] { Array((String(count, radix: 16) + "\r\n").utf8) }

    /// CRLF after chunk data.
    static let crlf: [UInt8] = [0x0D, 0x0A]

    /// The last chunk and an empty trailer section.
    static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)

    /// The 100 Continue interim response.
    static let continueResponse: [UInt8] = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// A complete problem response; `headOnly` omits the body (HEAD requests).
    static func problem(_ problem: Problem, keepAlive: Bool, headOnly: Bool, date: String) -> [UInt8] {
        let body = problem.body
        var headers = HTTPFields()
        headers.append(name: "Content-Type", value: "application/problem+json")
        headers.append(name: "Content-Length", value: String(body.utf8.count))
        headers.append(name: "Cache-Control", value: "no-store")
        headers.append(name: "Date", value: date)
        headers.append(name: "Via", value: "1.1 sluice")
        if !keepAlive { headers.append(name: "Connection", value: "close") }
        return head(status: problem.status, reason: "", headers: headers) + (headOnly ? [] : Array(body.utf8))
    }
}

/// Standard reason phrases (RFC 9110 §15).
public enum ReasonPhrase {
    /// The phrase for `status`, or `Status N` for codes without one.
    public static func standard(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 203: "Non-Authoritative Information"
        case 204: "No Content"
        case 205: "Reset Content"
        case 206: "Partial Content"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
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
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}
