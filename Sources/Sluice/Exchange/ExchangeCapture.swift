/// What a watched (or recorded) exchange keeps for the page and the recording: the client's
/// header fields, the response head as sent, the first ``bodyLimit`` bytes of the body as sent
/// (a recording's `max_body`, when larger), and the keys null stripping removed.
/// Loop-confined (it travels in an ``ExchangeRecord`` to the monitors on the same loop).
final class ExchangeCapture: @unchecked Sendable {
    /// Body bytes kept (the page shows the first MiB and links the rest when the cache has it).
    static let bodyLimit = 1 << 20
    /// Header bytes kept of the request and of the response head each.
    static let headerLimit = 32 * 1024

    let requestHeaders: [(String, String)]
    /// Most body bytes this capture keeps (``bodyLimit``, or 0 when too many are running).
    let bodyRoom: Int
    /// The response head as written to the client (status line and fields), at most ``headerLimit``.
    var responseHead: [UInt8] = []
    var body: [UInt8] = []
    /// Body bytes sent in all (more than `body.count` when cut).
    var bodyTotal: Int64 = 0
    /// Paths of the members (and elements) null stripping removed, the first hundred.
    var strippedPaths: [String] = []
    /// What the recording keeps of the exchange (`record:`), set at its end for the recorder,
    /// which monitors exchanges like the log does (here, not in the record: most have none).
    var recording: PendingRecord?
    /// The request body as the recording keeps it (`record:`), when the recorder takes the request.
    var requestTap: RecordingTap?
    /// The origin's response an enforced contract refused (its head's bytes, its body), kept
    /// for the recording in place of the problem the client got.
    var rejected: (status: Int, head: [UInt8], body: [UInt8])?
    /// The trailer fields the client got after the body (gRPC's status), when any came.
    var trailers: HTTPFields?
    /// The request as it went upstream when a person edited it at a breakpoint (method, URL,
    /// fields; its body's size, not its bytes): the page shows it beside the client's.
    var sentRequest: PausedMessage?
    var sentBodySize = 0

    /// - Parameter keepsRequest: copy the request's fields (a watcher shows them; a recording
    ///   takes them from the request itself).
    init(
        request: HTTPFields, bodyRoom: Int = ExchangeCapture.bodyLimit, bodyLimit: Int = ExchangeCapture.bodyLimit,
        keepsRequest: Bool = true
    ) {
        self.bodyRoom = min(bodyRoom, bodyLimit)
        guard keepsRequest else {
            requestHeaders = []
            return
        }
        var kept: [(String, String)] = []
        var bytes = 0
        for field in request {
            bytes += field.name.utf8.count + field.value.utf8.count + 4
            if bytes > ExchangeCapture.headerLimit { break }
            kept.append((field.name, ExchangeCapture.shownValue(field)))
        }
        requestHeaders = kept
    }

    /// A client field's value as the page, the event feed and breakpoints show it: the proxy's
    /// own credentials (`Proxy-Authorization`, addressed to Sluice and never forwarded) are
    /// never served, only said to be there.
    static func shownValue(_ field: HTTPFields.Field) -> String {
        field.code == .proxyAuthorization ? RecordedExchange.redacted : field.value
    }

    func head(_ bytes: [UInt8]) {
        guard responseHead.isEmpty else { return }  // the final head; interim ones are not kept
        responseHead = Array(bytes.prefix(ExchangeCapture.headerLimit))
    }

    /// A whole answer written at once (a problem, a local answer): it replaces a head that was
    /// prepared and dropped for it.
    func whole(head: [UInt8], body: [UInt8]) {
        responseHead = []
        self.body = []
        bodyTotal = 0
        strippedPaths = []
        self.head(head)
        body.withUnsafeBytes { append($0) }
    }

    func append(_ bytes: UnsafeRawBufferPointer) {
        bodyTotal += Int64(bytes.count)
        let room = bodyRoom - body.count
        if room > 0 { body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes.prefix(room))) }
    }

    /// The response head's fields, parsed back from the bytes sent (byte by byte: a recording
    /// asks this of every exchange).
    var responseFields: [(String, String)] {
        var fields: [(String, String)] = []
        _ = ExchangeCapture.walk(responseHead) { name, value in
            fields.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return fields
    }

    /// Walks a response head's bytes by index (no array of lines): `field` gets each field line's
    /// name and value (surrounding whitespace trimmed); returns the status line's reason phrase.
    static func walk(_ head: [UInt8], field: (ArraySlice<UInt8>, ArraySlice<UInt8>) -> Void) -> String {
        var reason = ""
        var lineStart = 0
        var first = true
        while lineStart < head.count {
            var lineEnd = lineStart
            while lineEnd < head.count, head[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            var end = lineEnd
            if end > lineStart, head[end - 1] == UInt8(ascii: "\r") { end -= 1 }
            defer { lineStart = lineEnd + 1 }
            if first {
                // `HTTP/1.1 404 Not Found`: what follows the second space.
                first = false
                let line = head[lineStart..<end]
                if let space = line.firstIndex(of: 0x20), let next = line[(space + 1)...].firstIndex(of: 0x20) {
                    reason = String(decoding: line[(next + 1)...], as: UTF8.self)
                }
                continue
            }
            guard end > lineStart, let colon = head[lineStart..<end].firstIndex(of: UInt8(ascii: ":")) else { continue }
            var start = colon + 1
            while start < end, head[start] == 0x20 || head[start] == 0x09 { start += 1 }
            var last = end
            while last > start, head[last - 1] == 0x20 || head[last - 1] == 0x09 { last -= 1 }
            field(head[lineStart..<colon], head[start..<last])
        }
        return reason
    }
}

/// Delivery stage: keeps what a watched (or recorded) exchange sent the client in its
/// ``ExchangeCapture``: the head as written, the body bytes the client took.
final class CaptureStage: DeliveryStage {
    let capture: ExchangeCapture

    init(_ capture: ExchangeCapture) { self.capture = capture }

    func head(_ head: WireHead, _ next: DeliveryNext<WireHead>) {
        capture.head(head.bytes)
        next.head(head)
    }

    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush, _ next: DeliveryNext<WireHead>) -> Bool {
        let taken = next.body(bytes, push)
        if taken { capture.append(bytes) }
        return taken
    }

    func end(_ next: DeliveryNext<WireHead>) { next.end() }

    func abandon() {}
}
