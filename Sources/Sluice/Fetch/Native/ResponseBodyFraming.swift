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
        for field in head.headers {
            switch field.code {
            case .transferEncoding: chunked = true
            case .contentLength: declared = Int64(field.value)
            case .connection:
                for token in field.value.utf8.split(separator: UInt8(ascii: ",")) {
                    if Self.isToken(token, "close") { close = true }
                    if Self.isToken(token, "keep-alive") { keepAlive = true }
                }
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

    /// Whether `token` (between commas, with optional whitespace) is `word`, ignoring ASCII case.
    private static func isToken(_ token: Substring.UTF8View.SubSequence, _ word: StaticString) -> Bool {
        var start = token.startIndex
        var end = token.endIndex
        while start < end, token[start] == 0x20 || token[start] == 0x09 { start = token.index(after: start) }
        while end > start, token[token.index(before: end)] == 0x20 || token[token.index(before: end)] == 0x09 {
            end = token.index(before: end)
        }
        let trimmed = token[start..<end]
        guard trimmed.count == word.utf8CodeUnitCount else { return false }
        return word.withUTF8Buffer { expected in
            zip(trimmed, expected).allSatisfy { $0 | 0x20 == $1 | 0x20 }
        }
    }
}
