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

    /// The framing of `head`, the answer to a `method` request.
    static func of(method: String, head: ResponseHead) -> ResponseBodyFraming {
        let length: Length
        if method == "HEAD" || head.status == 204 || head.status == 304 || head.status < 200 {
            length = .none
        } else if head.headers.contains("transfer-encoding") {
            length = .chunked
        } else if let text = head.headers["content-length"], let count = Int64(text) {
            length = .exactly(count)
        } else {
            length = .untilClose
        }
        let tokens = head.headers.tokens("connection")
        let persistent: Bool
        if head.version == "1.1" || head.version == "2" {
            persistent = !tokens.contains("close")
        } else {
            persistent = tokens.contains("keep-alive") && !tokens.contains("close")
        }
        return ResponseBodyFraming(length: length, keepAlive: persistent && length != .untilClose)
    }
}
