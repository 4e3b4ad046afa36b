import Contract
import TLS

/// One exchange as a recording keeps it: the request as the client sent it and the response as
/// the client got it (Sluice's own fields taken out), bodies up to the recording's limit, timings.
/// The same value is written by `sluice serve --record`, read by `--replay`, made from a HAR
/// entry by `sluice record import` and turned back into one by `export --har`.
public struct RecordedExchange: Sendable, Equatable {
    /// Its row in the recording (the recorded order); 0 before it is written.
    public var id: Int64 = 0
    /// When the request started, in seconds since the epoch.
    public var started: Double
    /// Seconds from the request to the end of the response.
    public var duration: Double
    /// Seconds from the request to the response head, when known.
    public var wait: Double?
    public var method: String
    /// The absolute URL the client asked for.
    public var url: String
    public var requestHeaders: [HTTPFields.Field]
    /// The request body, or its first ``requestBodySize``-limited part (see ``requestBodyComplete``).
    public var requestBody: [UInt8]
    /// The request body's size in all.
    public var requestBodySize: Int64
    /// SHA-256 of the whole request body, lowercase hex (replay matches on it).
    public var requestBodyDigest: String
    public var status: Int
    public var reason: String
    public var responseHeaders: [HTTPFields.Field]
    /// The response body as the client got it, or its first part (see ``responseComplete``).
    public var responseBody: [UInt8]
    /// The response body's size as sent.
    public var responseBodySize: Int64
    /// Where it came from: `proxy` (recorded by `serve --record`) or `har` (imported).
    public var source: String
    /// The rule that matched, when one did.
    public var rule: String?
    /// What breakpoints did to it, as JSON (`{"note": …, "sent": {…}, "received": {…}}`): `sent`
    /// is the request as it went upstream after a person edited it, `received` the response as
    /// it came before a person edited or replaced it; `nil` when no breakpoint acted on it (a
    /// breakpoint that fit but could not pause, its body too large, says so in `note`).
    public var breakpoint: String?
    /// The response's trailer fields (gRPC's `grpc-status`), as the client got them.
    public var responseTrailers: [HTTPFields.Field] = []

    public init(
        started: Double, duration: Double, wait: Double?, method: String, url: String,
        requestHeaders: [HTTPFields.Field], requestBody: [UInt8], requestBodySize: Int64, requestBodyDigest: String,
        status: Int, reason: String, responseHeaders: [HTTPFields.Field], responseBody: [UInt8],
        responseBodySize: Int64, source: String, rule: String? = nil
    ) {
        self.started = started
        self.duration = duration
        self.wait = wait
        self.method = method
        self.url = url
        self.requestHeaders = requestHeaders
        self.requestBody = requestBody
        self.requestBodySize = requestBodySize
        self.requestBodyDigest = requestBodyDigest
        self.status = status
        self.reason = reason
        self.responseHeaders = responseHeaders
        self.responseBody = responseBody
        self.responseBodySize = responseBodySize
        self.source = source
        self.rule = rule
    }

    /// Body bytes kept, when only the head was read (``Recording/exchanges(bodies:)``).
    public var keptRequestBytes: Int64?
    public var keptResponseBytes: Int64?

    /// Whether the whole response body was kept (replay serves only those).
    public var responseComplete: Bool { (keptResponseBytes ?? Int64(responseBody.count)) == responseBodySize }
    /// Whether the whole request body was kept.
    public var requestBodyComplete: Bool { (keptRequestBytes ?? Int64(requestBody.count)) == requestBodySize }

    /// The digest of an empty body.
    public static let emptyBodyDigest = Digest.hex(Digest.sha256(UnsafeRawBufferPointer(start: nil, count: 0)))

    /// Fields a recording never keeps from a response head: framing and connection fields (the
    /// body is kept decoded of chunking, replay frames it again), and what Sluice itself added
    /// (`Cache-Status`, `Sluice-*`).
    static func keepsResponseField(_ name: String) -> Bool {
        let field = HTTPFields.Field(name: name, value: "")
        if HopByHop.isHopByHop(field) || field.hasName("cache-status") { return false }
        let prefix = name.utf8.prefix(7)
        return !(prefix.count == 7 && zip(prefix, "sluice-".utf8).allSatisfy { $0 | 0x20 == $1 })
    }

    /// Credentials are kept as this text unless `record.keep_credentials` is on.
    public static let redacted = "[redacted]"

    /// Request and response fields that carry credentials.
    static func isCredential(_ name: String) -> Bool {
        let field = HTTPFields.Field(name: name, value: "")
        switch name.utf8.count {
        case 6: return field.hasName("cookie")
        case 10: return field.hasName("set-cookie")
        case 11: return field.hasName("set-cookie2")
        case 13: return field.hasName("authorization")
        case 19: return field.hasName("proxy-authorization")
        default: return false
        }
    }

    /// This exchange with credential values replaced by ``redacted``.
    public func redacted() -> RecordedExchange {
        var copy = self
        copy.requestHeaders = RecordedExchange.redacting(requestHeaders)
        copy.responseHeaders = RecordedExchange.redacting(responseHeaders)
        return copy
    }

    /// The fields with credential values replaced by ``redacted``.
    static func redacting(_ fields: [HTTPFields.Field]) -> [HTTPFields.Field] {
        fields.map { isCredential($0.name) ? HTTPFields.Field(name: $0.name, value: redacted) : $0 }
    }

    /// Header fields as JSON text: `[["Name","value"],…]` (the recording's columns).
    static func fieldsJSON(_ fields: [HTTPFields.Field]) -> String {
        var writer = JSONFieldWriter()
        for field in fields { writer.add(Array(field.name.utf8)[...], Array(field.value.utf8)[...]) }
        return String(decoding: writer.finish(), as: UTF8.self)
    }

    /// Header fields from their JSON text; `nil` when it is not a list of name/value pairs.
    static func fields(json: String) -> [HTTPFields.Field]? {
        guard let value = try? Value.parse(Array(json.utf8)), let items = value.items else { return nil }
        var fields: [HTTPFields.Field] = []
        for item in items {
            guard let pair = item.items, pair.count == 2, let name = pair[0].string, let text = pair[1].string else {
                return nil
            }
            fields.append(HTTPFields.Field(name: name, value: text))
        }
        return fields
    }
}
