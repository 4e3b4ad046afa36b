/// One row of a recording as it is written: the header fields already as their JSON text.
/// The proxy hands the writer thread a ``PendingRecord`` (the request's fields and the response
/// head's bytes as they were, nothing parsed on the loop); the writer makes the row from it.
struct RecordingRow: Sendable {
    var started: Double
    var duration: Double
    var wait: Double?
    var method: String
    var url: String
    var requestHeaders: [UInt8]
    var requestBody: [UInt8]
    var requestBodySize: Int64
    var requestBodyDigest: String
    var status: Int
    var reason: String
    var responseHeaders: [UInt8]
    var responseBody: [UInt8]
    var responseBodySize: Int64
    var source: String
    var rule: String?
    var breakpoint: String?
    /// `nil` without trailers.
    var responseTrailers: [UInt8]?

    init(_ exchange: RecordedExchange) {
        started = exchange.started
        duration = exchange.duration
        wait = exchange.wait
        method = exchange.method
        url = exchange.url
        requestHeaders = Array(RecordedExchange.fieldsJSON(exchange.requestHeaders).utf8)
        requestBody = exchange.requestBody
        requestBodySize = exchange.requestBodySize
        requestBodyDigest = exchange.requestBodyDigest
        status = exchange.status
        reason = exchange.reason
        responseHeaders = Array(RecordedExchange.fieldsJSON(exchange.responseHeaders).utf8)
        responseBody = exchange.responseBody
        responseBodySize = exchange.responseBodySize
        source = exchange.source
        rule = exchange.rule
        breakpoint = exchange.breakpoint
        if !exchange.responseTrailers.isEmpty {
            responseTrailers = Array(RecordedExchange.fieldsJSON(exchange.responseTrailers).utf8)
        }
    }

    /// The row of an exchange the proxy saw: hop-by-hop request fields left out, Sluice's own
    /// response fields left out (``RecordedExchange/keepsResponseField(_:)``), credentials
    /// redacted unless kept. Byte by byte: it runs for every recorded exchange.
    init(_ pending: PendingRecord, keepCredentials: Bool) {
        started = pending.started
        duration = pending.duration
        wait = pending.wait
        method = pending.method
        url = pending.url
        var sent = pending.requestFields
        HopByHop.strip(&sent)
        var json = JSONFieldWriter()
        for field in sent {
            var value = field.value
            if !keepCredentials, RecordedExchange.isCredential(field.name) { value = RecordedExchange.redacted }
            json.add(Array(field.name.utf8)[...], Array(value.utf8)[...])
        }
        requestHeaders = json.finish()
        requestBody = pending.requestBody
        requestBodySize = pending.requestBodySize
        requestBodyDigest = pending.requestBodyDigest
        status = pending.status
        var response = JSONFieldWriter()
        reason = ExchangeCapture.walk(pending.responseHead) { name, value in
            let text = String(decoding: name, as: UTF8.self)
            guard RecordedExchange.keepsResponseField(text) else { return }
            let field = HTTPFields.Field(name: text, value: "")
            if pending.servedFromCache, field.hasName("age") { return }
            if field.hasName("via") {
                // Sluice's own element (`1.1 sluice`) goes; the origin's and other proxies' stay.
                if value.elementsEqual("1.1 sluice".utf8) { return }
                let others = String(decoding: value, as: UTF8.self).split(separator: ",").map { $0.trimmingOWS() }
                    .filter { $0.split(separator: " ").dropFirst().first != "sluice" }
                if !others.isEmpty { response.add(name, Array(others.joined(separator: ", ").utf8)[...]) }
                return
            }
            if !keepCredentials, RecordedExchange.isCredential(text) {
                response.add(name, Array(RecordedExchange.redacted.utf8)[...])
            } else {
                response.add(name, value)
            }
        }
        responseHeaders = response.finish()
        responseBody = pending.responseBody
        responseBodySize = pending.responseBodySize
        source = "proxy"
        rule = pending.rule
        breakpoint = pending.breakpoint
        if let trailers = pending.responseTrailers, !trailers.fields.isEmpty {
            var json = JSONFieldWriter()
            for field in trailers {
                let value =
                    !keepCredentials && RecordedExchange.isCredential(field.name)
                    ? RecordedExchange.redacted : field.value
                json.add(Array(field.name.utf8)[...], Array(value.utf8)[...])
            }
            responseTrailers = json.finish()
        }
    }
}

/// What an exchange hands the recorder at its end: references to what it already holds.
struct PendingRecord: Sendable {
    var started: Double
    var duration: Double
    var wait: Double?
    var method: String
    var url: String
    var requestFields: HTTPFields
    var requestBody: [UInt8]
    var requestBodySize: Int64
    var requestBodyDigest: String
    var status: Int
    /// The response head as sent (status line and fields).
    var responseHead: [UInt8]
    var servedFromCache: Bool
    var responseBody: [UInt8]
    var responseBodySize: Int64
    var rule: String?
    /// What breakpoints did (JSON), when one paused it.
    var breakpoint: String?
    /// The trailer fields the client got (gRPC's status), when there were any.
    var responseTrailers: HTTPFields?
}

/// `[["Name","value"],…]` written from bytes.
struct JSONFieldWriter {
    private var out: [UInt8] = [UInt8(ascii: "[")]
    private static let hex = Array("0123456789abcdef".utf8)

    init() { out.reserveCapacity(512) }

    mutating func add(_ name: ArraySlice<UInt8>, _ value: ArraySlice<UInt8>) {
        if out.count > 1 { out.append(UInt8(ascii: ",")) }
        out.append(UInt8(ascii: "["))
        quote(name)
        out.append(UInt8(ascii: ","))
        quote(value)
        out.append(UInt8(ascii: "]"))
    }

    /// A JSON string of UTF-8 bytes (they pass as they are; controls, `"` and `\` escaped).
    private mutating func quote(_ bytes: ArraySlice<UInt8>) {
        out.append(UInt8(ascii: "\""))
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0..<0x20:
                out.append(UInt8(ascii: "\\"))
                out.append(UInt8(ascii: "u"))
                out.append(0x30)
                out.append(0x30)
                out.append(JSONFieldWriter.hex[Int(byte >> 4)])
                out.append(JSONFieldWriter.hex[Int(byte & 15)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    mutating func finish() -> [UInt8] {
        out.append(UInt8(ascii: "]"))
        return out
    }
}
