/// The pure parts of a protocol upgrade through the proxy (RFC 9110 §7.8; WebSocket, RFC 6455
/// §4): which requests ask for one, the head sent to the origin, whether the origin's `101`
/// switched to a protocol the client asked for, and what a WebSocket agreed on compression.
enum UpgradeHandshake {
    /// Whether `request` asks to switch protocols: `Upgrade` with a `Connection: upgrade` token
    /// on an HTTP/1.1 request without a body (a proxy must ignore `Upgrade` on HTTP/1.0), to a
    /// protocol other than `h2c` (RFC 9113 §3.1 retired that upgrade, whose `HTTP2-Settings`
    /// belongs to the hop: a request offering only it goes on as an ordinary one, without it).
    static func isUpgrade(_ request: ProxyRequest) -> Bool {
        request.minorVersion == 1 && request.bodyFraming == .none && !offered(request.headers).isEmpty
            && request.headers.tokens(.connection).contains("upgrade")
    }

    /// The protocols the client offers (`websocket`…), lowercased, in order; never `h2c`.
    static func offered(_ headers: HTTPFields) -> [String] {
        headers.tokens(.upgrade).map { $0.split(separator: "/").first.map(String.init) ?? $0 }.filter { $0 != "h2c" }
    }

    /// The `Upgrade` members sent on, as the client wrote them, less `h2c`.
    static func offeredMembers(_ headers: HTTPFields) -> [String] {
        headers.values(.upgrade).flatMap { $0.split(separator: ",") }.map { $0.trimmingOWS() }
            .filter { !$0.isEmpty && $0.lowercased().split(separator: "/").first != "h2c" }
    }

    /// The request head for the origin: origin-form, its own `Host`, the client's fields minus
    /// hop-by-hop ones, `Via`, and the upgrade itself (`Upgrade` as the client sent it,
    /// `Connection: Upgrade`).
    static func upstreamHead(_ request: ProxyRequest, url: TargetURL, host: String? = nil) -> [UInt8] {
        var headers = request.headers
        HopByHop.strip(&headers)
        headers.remove(.host)
        headers.remove(keys: ["sluice-strip-nulls"])
        Forwarding.appendVia(&headers, version: "1.1")
        var bytes = Array("\(request.method) \(url.pathAndQuery.isEmpty ? "/" : url.pathAndQuery) HTTP/1.1\r\n".utf8)
        bytes += "Host: \(host ?? url.authority)\r\n".utf8
        for field in headers {
            bytes += "\(field.name): ".utf8
            bytes += HTTPFields.Field.wireBytes(field.value, opaque: field.opaque)
            bytes += "\r\n".utf8
        }
        bytes +=
            "Upgrade: \(offeredMembers(request.headers).joined(separator: ", "))\r\nConnection: Upgrade\r\n\r\n".utf8
        return bytes
    }

    /// Why a `101` must not be relayed, or `nil`: it must name one protocol the client offered
    /// (RFC 9110 §7.8: a server switches only to a protocol the request listed).
    static func refusal(of response: ResponseHead, offered: [String]) -> String? {
        let chosen = UpgradeHandshake.offered(response.headers)
        guard let first = chosen.first else {
            return "The origin switched protocols without naming one (no Upgrade field)."
        }
        guard chosen.allSatisfy(offered.contains) else {
            return
                "The origin switched to \(first), which the client did not offer (\(offered.joined(separator: ", ")))."
        }
        return nil
    }

    /// The `101` head for the client: the origin's fields (`Upgrade`, `Connection`,
    /// `Sec-WebSocket-*` included) and `Via`.
    static func switchingHead(_ response: ResponseHead) -> [UInt8] {
        var headers = response.headers
        HopByHop.strip(&headers)  // the switch's own two are written again below
        headers.remove(.contentLength)  // a 1xx has no content and says none (RFC 9110 §8.6)
        Forwarding.appendVia(&headers, version: response.version)
        headers.append(name: "Connection", value: "Upgrade", code: .connection)
        headers.append(
            name: "Upgrade", value: response.headers.values(.upgrade).joined(separator: ", "), code: .upgrade)
        return ResponseWriter.head(status: 101, reason: response.reason, headers: headers)
    }

    /// What `Sec-WebSocket-Extensions` in the `101` agreed about `permessage-deflate` (RFC 7692):
    /// whether it is on, and whether each side resets its window after every message.
    struct Compression: Equatable {
        var enabled = false
        var clientNoContextTakeover = false
        var serverNoContextTakeover = false
    }

    static func compression(_ response: ResponseHead) -> Compression {
        var agreed = Compression()
        for value in response.headers.values("sec-websocket-extensions") {
            for offer in value.split(separator: ",") {
                let parameters = offer.split(separator: ";").map { $0.trimmingOWS().lowercased() }
                guard parameters.first == "permessage-deflate" else { continue }
                agreed.enabled = true
                agreed.clientNoContextTakeover = parameters.contains("client_no_context_takeover")
                agreed.serverNoContextTakeover = parameters.contains("server_no_context_takeover")
                return agreed
            }
        }
        return agreed
    }
}
