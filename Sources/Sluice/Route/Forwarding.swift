/// The header rules of a forwarding proxy (RFC 9110 §7.6): what goes upstream and what comes back.
enum Forwarding {
    /// Request fields that Sluice or libcurl writes itself, and Sluice's own request header.
    private static let requestFraming: UInt64 = [FieldCode.host, .contentLength, .expect, .sluiceStripNulls].reduce(0) {
        $0 | $1.bit
    }

    /// The upstream request for a client's absolute-form request.
    static func upstreamRequest(for request: ProxyRequest, url: TargetURL) -> UpstreamRequest {
        var headers = request.headers
        // One copy, with room for what is added below (not a copy for the strip and another to grow).
        headers.reserveCapacity(headers.count + 3)
        HopByHop.strip(&headers)
        headers.remove(codes: requestFraming)
        // An HTTP/2 client that takes trailers gets the origin's: Sluice asks for them in its own
        // name (gRPC origins want `TE: trailers`).
        if request.takesTrailers { headers.append(name: "TE", value: "trailers", code: .te) }
        if request.method == "TRACE" || request.method == "OPTIONS", let forwards = maxForwards(request) {
            headers.set("Max-Forwards", String(forwards - 1))
        }
        appendVia(&headers, version: request.minorVersion == 0 ? "1.0" : "1.1")
        let body: UpstreamRequest.Body
        switch request.bodyFraming {
        case .none: body = .none
        case .length(let count): body = .length(count)
        case .chunked, .streamEnd: body = .streamed
        }
        return UpstreamRequest(method: request.method, url: url, headers: headers, body: body)
    }

    /// `Max-Forwards` as a number, if present and valid.
    static func maxForwards(_ request: ProxyRequest) -> Int? {
        guard let text = request.headers[.maxForwards], !text.isEmpty, text.count < 10,
            text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        return Int(text)
    }

    /// Adds `<version> sluice` to `Via` (RFC 9110 §7.6.3).
    static func appendVia(_ headers: inout HTTPFields, version: String) {
        let own = version == "1.1" ? "1.1 sluice" : version + " sluice"
        guard headers.contains(.via) else { return headers.append(name: "Via", value: own, code: .via) }
        headers.set("Via", (headers.values(.via) + [own]).joined(separator: ", "))
    }

    /// The response fields for the client, and how the body will be framed.
    static func clientResponse(
        _ head: ResponseHead, request: ProxyRequest, date: String, keepAlive: Bool, stripped: Bool = false
    ) -> (HTTPFields, ResponseWriter.Framing) {
        var headers = head.headers
        // One copy, with room for Via, Cache-Status and the like (not a copy for the strip and
        // another to grow).
        headers.reserveCapacity(headers.count + 4)
        let originChunked = !stripped && headers.contains(.transferEncoding)
        if !stripped { HopByHop.strip(&headers) }
        let noBody =
            request.method == "HEAD" || head.status < 200 || head.status == 204 || head.status == 205
            || head.status == 304
        let framing: ResponseWriter.Framing
        if noBody {
            framing = .none
            // A 204 has no content, and no Content-Length either (RFC 9110 §8.6; 1xx: see the interim relay).
            if head.status == 204 { headers.remove(.contentLength) }
            // A 205 has no content either (§15.3.6), whatever the origin sent: its framing says so
            // with a zero length, so that keep-alive clients that do not know 205 read no body.
            if head.status == 205 {
                headers.remove(.transferEncoding)
                headers.set("Content-Length", "0")
            }
        } else if !originChunked, let length = headers[.contentLength], Int64(length) != nil {
            framing = .length
        } else {
            headers.remove(.contentLength)
            framing = request.minorVersion == 1 ? .chunked : .close
        }
        if framing == .chunked { headers.append(name: "Transfer-Encoding", value: "chunked", code: .transferEncoding) }
        appendVia(&headers, version: head.version)
        if !headers.contains(.date) { headers.append(name: "Date", value: date, code: .date) }
        if !keepAlive || framing == .close {
            headers.append(name: "Connection", value: "close", code: .connection)
        } else if request.minorVersion == 0 {
            headers.append(name: "Connection", value: "keep-alive", code: .connection)
        }
        return (headers, framing)
    }
}
