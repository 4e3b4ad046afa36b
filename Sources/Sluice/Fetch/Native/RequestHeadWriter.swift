/// The request head the native transport sends (RFC 9112 §3): origin-form target (`*` for an
/// `OPTIONS` of a bare origin), `Host` from the URL (unless a rule kept the client's), the forwarded fields as they are (hop-by-hop
/// fields, `Host`, `Content-Length` and `Expect` were removed when the request was made), then the
/// body's framing: its length, or chunked, and `Expect: 100-continue` when the body waits for the
/// origin. Pure.
enum RequestHeadWriter {
    static let crlf: [UInt8] = [0x0D, 0x0A]
    private static let hex = Array("0123456789ABCDEF".utf8)

    /// The whole head, its empty line included, written once into room sized beforehand.
    static func head(_ request: UpstreamRequest) -> [UInt8] {
        let fields = request.headers.fields
        let path = request.url.pathAndQuery
        // A path byte may become three (percent-encoded); the port and the length are at most
        // 5 and 20 digits, the fixed text under 96 bytes (with an `Expect`).
        var size = request.method.utf8.count + 3 * path.utf8.count + request.url.host.utf8.count + 128
        // Indices, not `for field in`: binding a Field copies (retains) its strings.
        for index in fields.indices { size += fields[index].name.utf8.count + fields[index].value.utf8.count + 4 }
        var out: [UInt8] = []
        out.append(atMost: size) { out in
            out.put(request.method)
            out.put(0x20)
            if request.url.hasEmptyPath, request.method == "OPTIONS" {
                out.put(UInt8(ascii: "*"))
            } else {
                // A target made elsewhere (a followed redirect's Location) may hold bytes a
                // request line must not: they go percent-encoded, never raw. The usual path has
                // none: copied whole.
                let copied =
                    path.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
                        guard ByteScan.isVisibleASCII(UnsafeRawBufferPointer(bytes)) else { return false }
                        out.put(bytes)
                        return true
                    } ?? false
                if !copied {
                    for byte in path.utf8 {
                        if byte > 0x20, byte < 0x7F {
                            out.put(byte)
                        } else {
                            out.put(UInt8(ascii: "%"))
                            out.put(hex[Int(byte >> 4)])
                            out.put(hex[Int(byte & 15)])
                        }
                    }
                }
            }
            out.put(" HTTP/1.1\r\n")
            // A rule that keeps the client's Host (map remote) left it among the fields.
            if !request.headers.contains(.host) {
                out.put("Host: ")
                out.put(request.url.host)
                if !request.url.hasDefaultPort {
                    out.put(UInt8(ascii: ":"))
                    out.putDecimal(Int64(request.url.port))
                }
                out.put("\r\n")
            }
            for index in fields.indices {
                out.put(fields[index].name)
                out.put(UInt8(ascii: ":"))
                out.put(0x20)
                out.put(fields[index].value, opaque: fields[index].opaque)
                out.put("\r\n")
            }
            switch request.body {
            case .none: break
            case .length(let count):
                out.put("Content-Length: ")
                out.putDecimal(count)
                out.put("\r\n")
            case .streamed:
                out.put("Transfer-Encoding: chunked\r\n")
            }
            if request.expectsContinue, request.body != .none { out.put("Expect: 100-continue\r\n") }
            // A sender of TE names it in Connection too (RFC 9110 §10.1.4): an HTTP/2 client's
            // `te: trailers` is asked for in Sluice's name.
            if request.headers.contains(.te), !request.headers.contains(.connection) { out.put("Connection: TE\r\n") }
            out.put("\r\n")
        }
        return out
    }
}
