/// The request head the native transport sends (RFC 9112 §3): origin-form target (`*` for an
/// `OPTIONS` of a bare origin), `Host` from the URL (unless a rule kept the client's), the forwarded fields as they are (hop-by-hop
/// fields, `Host`, `Content-Length` and `Expect` were removed when the request was made), then the
/// body's framing: its length, or chunked. Pure.
enum RequestHeadWriter {
    static let crlf: [UInt8] = [0x0D, 0x0A]
    private static let hex = Array("0123456789ABCDEF".utf8)

    /// The whole head, its empty line included.
    static func head(_ request: UpstreamRequest) -> [UInt8] {
        var out: [UInt8] = []
        var size = request.method.utf8.count + request.url.pathAndQuery.utf8.count + request.url.host.utf8.count + 48
        let fields = request.headers.fields
        // Indices, not `for field in`: binding a Field copies (retains) its strings.
        for index in fields.indices { size += fields[index].name.utf8.count + fields[index].value.utf8.count + 4 }
        out.reserveCapacity(size)
        out.append(contentsOf: request.method.utf8)
        out.append(0x20)
        if request.url.hasEmptyPath, request.method == "OPTIONS" {
            out.append(UInt8(ascii: "*"))
        } else {
            // A target made elsewhere (a followed redirect's Location) may hold bytes a request
            // line must not: they go percent-encoded, never raw.
            for byte in request.url.pathAndQuery.utf8 {
                if byte > 0x20, byte < 0x7F {
                    out.append(byte)
                } else {
                    out.append(UInt8(ascii: "%"))
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 15)])
                }
            }
        }
        out.append(contentsOf: " HTTP/1.1\r\n".utf8)
        // A rule that keeps the client's Host (map remote) left it among the fields.
        if !request.headers.contains(.host) {
            out.append(contentsOf: "Host: ".utf8)
            out.append(contentsOf: request.url.host.utf8)
            if !request.url.hasDefaultPort {
                out.append(UInt8(ascii: ":"))
                out.append(contentsOf: String(request.url.port).utf8)
            }
            out.append(contentsOf: crlf)
        }
        for index in fields.indices {
            out.append(contentsOf: fields[index].name.utf8)
            out.append(UInt8(ascii: ":"))
            out.append(0x20)
            out.append(contentsOf: fields[index].value.utf8)
            out.append(contentsOf: crlf)
        }
        switch request.body {
        case .none: break
        case .length(let count):
            out.append(contentsOf: "Content-Length: ".utf8)
            out.append(contentsOf: String(count).utf8)
            out.append(contentsOf: crlf)
        case .streamed:
            out.append(contentsOf: "Transfer-Encoding: chunked\r\n".utf8)
        }
        out.append(contentsOf: crlf)
        return out
    }
}
