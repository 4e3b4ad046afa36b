/// Answers the proxy gives itself, without an origin.
enum LocalAnswer {
    /// TRACE or OPTIONS with `Max-Forwards: 0` (RFC 9110 §7.6.2): the proxy is the recipient.
    /// TRACE echoes the request (credentials left out); OPTIONS lists the methods.
    static func maxForwardsZero(_ request: ProxyRequest, date: String, keepAlive: Bool) -> (
        head: ResponseHead, body: String
    ) {
        var headers = HTTPFields()
        var text = ""
        if request.method == "TRACE" {
            text = request.requestLine + "\r\n"
            for field in request.headers
            where !["authorization", "cookie", "proxy-authorization"].contains(where: field.hasName) {
                text += field.name + ": " + field.value + "\r\n"
            }
            text += "\r\n"
            headers.append(name: "Content-Type", value: "message/http", code: .contentType)
        } else {
            headers.append(name: "Allow", value: "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS, TRACE, CONNECT")
        }
        headers.append(name: "Content-Length", value: String(text.utf8.count), code: .contentLength)
        headers.append(name: "Date", value: date, code: .date)
        headers.append(name: "Via", value: "1.1 sluice", code: .via)
        if !keepAlive { headers.append(name: "Connection", value: "close", code: .connection) }
        return (ResponseHead(status: 200, reason: "OK", headers: headers), text)
    }
}
