/// How an origin's response body is delimited on an HTTP/1.1 connection (RFC 9112 §6.3), decided
/// from the request's method and the final head (already checked by ``ResponseFraming``: one
/// coding, `chunked`, never beside a length), and whether the connection may carry another
/// exchange after it. Pure.
struct ResponseBodyFraming: Equatable {
    /// Where the body ends.
    enum Length: Equatable {
        /// No body, whatever the fields say (a HEAD answer, 204, 304).
        case none
        /// Exactly this many bytes (`Content-Length`).
        case exactly(Int64)
        /// The chunked coding's last chunk and trailer section.
        case chunked
        /// The connection's close (HTTP/1.0 style; the connection is never reused).
        case untilClose
    }

    let length: Length
    /// Whether the origin keeps the connection open after the body (HTTP/1.1 without
    /// `Connection: close`, HTTP/1.0 with `keep-alive`), and the body's end is known without a close.
    let keepAlive: Bool

    /// The framing of `head`, the answer to a `method` request (one pass over its fields).
    static func of(method: String, head: ResponseHead) -> ResponseBodyFraming {
        var chunked = false
        var declared: Int64?
        var close = false
        var keepAlive = false
        let fields = head.headers.fields
        // Indices, not `for field in`: binding a Field copies (retains) its strings.
        for index in fields.indices {
            switch fields[index].code {
            case .transferEncoding: chunked = true
            case .contentLength: declared = Int64(fields[index].value)
            case .connection:
                let options = Self.connectionOptions(fields[index].value)
                close = close || options.close
                keepAlive = keepAlive || options.keepAlive
            default: break
            }
        }
        let length: Length
        if method == "HEAD" || head.status == 204 || head.status == 304 || head.status < 200 {
            length = .none
        } else if chunked {
            length = .chunked
        } else if let declared {
            length = .exactly(declared)
        } else {
            length = .untilClose
        }
        let persistent = (head.version == "1.1" || head.version == "2" || keepAlive) && !close
        return ResponseBodyFraming(length: length, keepAlive: persistent && length != .untilClose)
    }

    /// Whether a `Connection` value lists `close` and `keep-alive` among its comma-separated
    /// tokens (optional whitespace around each, ASCII case ignored), byte by byte.
    static func connectionOptions(_ value: String) -> (close: Bool, keepAlive: Bool) {
        var value = value
        return value.withUTF8 { bytes in
            var close = false
            var keepAlive = false
            var start = 0
            while start <= bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != 0x2C { end += 1 }
                var first = start
                var last = end
                while first < last, bytes[first] == 0x20 || bytes[first] == 0x09 { first += 1 }
                while last > first, bytes[last - 1] == 0x20 || bytes[last - 1] == 0x09 { last -= 1 }
                let token = UnsafeBufferPointer(rebasing: bytes[first..<last])
                if isWord(token, "close") { close = true } else if isWord(token, "keep-alive") { keepAlive = true }
                start = end + 1
            }
            return (close, keepAlive)
        }
    }

    /// Whether `token` is `word` (lower case), ignoring ASCII case.
    private static func isWord(_ token: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        guard token.count == word.utf8CodeUnitCount else { return false }
        let expected = word.utf8Start
        for index in 0..<token.count where token[index] | 0x20 != expected[index] { return false }
        return true
    }
}
