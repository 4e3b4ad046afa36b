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
        appendVia(&headers, version: request.receivedProtocol)
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
        let own = ownVia(version)
        guard headers.contains(.via) else { return headers.append(name: "Via", value: own, code: .via) }
        headers.set("Via", (headers.values(.via) + [own]).joined(separator: ", "))
    }

    /// How many members of `Via` a Sluice added (received-by `sluice`).
    static func ownHops(_ headers: HTTPFields) -> Int {
        var count = 0
        for value in headers.values(.via) {
            for member in value.split(separator: ",") {
                let parts = member.split(whereSeparator: { $0 == " " || $0 == "\t" })
                if parts.count >= 2, parts[1] == "sluice" { count += 1 }
            }
        }
        return count
    }

    /// The `Via` depth of Sluices past which a request is taken for a forwarding loop.
    static let loopHops = 8

    /// An origin's interim (1xx) head as a client gets it: no content, so no length (RFC 9110
    /// §8.6), no hop-by-hop fields, Sluice's `Via`.
    static func clientInterim(_ head: ResponseHead) -> ResponseHead {
        var headers = head.headers
        HopByHop.strip(&headers)
        headers.remove(.contentLength)
        appendVia(&headers, version: head.version)
        return ResponseHead(status: head.status, reason: head.reason, headers: headers)
    }

    /// Sluice's own `Via` entry for a message of HTTP `version`.
    static func ownVia(_ version: String) -> String { version == "1.1" ? "1.1 sluice" : version + " sluice" }

    /// The response fields for the client, and how the body will be framed.
    static func clientResponse(
        _ head: ResponseHead, request: ProxyRequest, date: String, keepAlive: Bool, stripped: Bool = false
    ) -> (HTTPFields, ResponseWriter.Framing) {
        let edit = clientEdit(head, request: request, date: date, keepAlive: keepAlive, stripped: stripped)
        return (edit.apply(to: head.headers), edit.framing)
    }

    /// How the client's head differs from the origin's (RFC 9110 §7.6): hop-by-hop lines and those
    /// `Connection` names go (unless `stripped`: a stored head was stripped when stored), the
    /// framing is the proxy's own (RFC 9112 §6), `Via`, `Date` and `Connection` are Sluice's.
    static func clientEdit(
        _ head: ResponseHead, request: ProxyRequest, date: String, keepAlive: Bool, stripped: Bool = false
    ) -> ClientEdit {
        let headers = head.headers
        var edit = ClientEdit(
            framing: .length, droppedCodes: stripped ? 0 : HopByHop.bits,
            droppedNames: stripped ? [] : HopByHop.named(in: headers))
        let originChunked = !stripped && headers.contains(.transferEncoding)
        let noBody =
            request.method == "HEAD" || head.status < 200 || head.status == 204 || head.status == 205
            || head.status == 304
        if noBody {
            edit.framing = .none
            // A 204 has no content, and no Content-Length either (RFC 9110 §8.6; 1xx: see the interim relay).
            if head.status == 204 { edit.droppedCodes |= FieldCode.contentLength.bit }
            // A 205 has no content either (§15.3.6), whatever the origin sent: its framing says so
            // with a zero length, so that keep-alive clients that do not know 205 read no body.
            if head.status == 205 {
                edit.droppedCodes |= FieldCode.transferEncoding.bit
                edit.zeroLength = true
            }
        } else if !originChunked, let length = headers[.contentLength], Int64(length) != nil {
            edit.framing = .length
        } else {
            edit.droppedCodes |= FieldCode.contentLength.bit
            edit.framing = request.minorVersion == 1 ? .chunked : .close
        }
        // What of the origin's lines stays decides what is added.
        var keptLength = false
        var keptDate = false
        var viaValues: [String] = []
        let fields = headers.fields
        for index in fields.indices where edit.keeps(fields, index) {
            switch fields[index].code {
            case .contentLength: keptLength = true
            case .date: keptDate = true
            case .via: viaValues.append(fields[index].value)
            default: break
            }
        }
        if edit.zeroLength, !keptLength {
            edit.added.append(.init(name: "Content-Length", value: "0", code: .contentLength))
        }
        if edit.framing == .chunked {
            edit.added.append(.init(name: "Transfer-Encoding", value: "chunked", code: .transferEncoding))
        }
        // `<version> sluice` joins the origin's `Via` (RFC 9110 §7.6.3), one line in the first one's place.
        let own = ownVia(head.version)
        if viaValues.isEmpty {
            edit.added.append(.init(name: "Via", value: own, code: .via))
        } else {
            edit.via = (viaValues + [own]).joined(separator: ", ")
        }
        if !keptDate { edit.added.append(.init(name: "Date", value: date, code: .date)) }
        if !keepAlive || edit.framing == .close {
            edit.added.append(.init(name: "Connection", value: "close", code: .connection))
        } else if request.minorVersion == 0 {
            edit.added.append(.init(name: "Connection", value: "keep-alive", code: .connection))
        }
        return edit
    }

    /// The changes from an origin's head to the client's (``clientEdit(_:request:date:keepAlive:stripped:)``),
    /// applied as a new field list (``apply(to:)``) or while the HTTP/1.1 head is written
    /// (``ResponseWriter/head(status:reason:origin:edit:)``: no copy of the origin's list to edit).
    struct ClientEdit {
        var framing: ResponseWriter.Framing
        /// The codes (``FieldCode/bit``) of the origin's lines that go; never ``FieldCode/other``'s.
        var droppedCodes: UInt64
        /// Names (lower case) whose lines go: those `Connection` lists.
        var droppedNames: [String]
        /// A 205's `Content-Length: 0`, in the first such line's place (the others go).
        var zeroLength = false
        /// The one `Via` line's value in the first kept `Via` line's place (the others go); `nil`
        /// when the origin sent none (Sluice's own is then among ``added``).
        var via: String?
        /// Lines after the origin's, in order (room for the usual few: one allocation).
        var added: [HTTPFields.Field] = {
            var lines: [HTTPFields.Field] = []; lines.reserveCapacity(6); return lines
        }()

        /// Every line as it is, nothing added.
        static let unchanged = ClientEdit(framing: .length, droppedCodes: 0, droppedNames: [])

        /// Whether the origin's line `index` stays (perhaps with another value). Lines are read in
        /// place: binding a Field copies (retains) its two strings.
        @inline(__always)
        func keeps(_ fields: [HTTPFields.Field], _ index: Int) -> Bool {
            let code = fields[index].code
            if code != .other, droppedCodes & code.bit != 0 { return false }
            return droppedNames.isEmpty || !droppedNames.contains(where: fields[index].hasName)
        }

        /// What becomes of the origin's line `index`, lines before it having been seen (`seen`).
        enum Line {
            case drop
            case keep
            /// Kept with another value.
            case value(String)
        }

        /// Which of the lines that one edit makes once were written already.
        struct Seen {
            var length = false
            var via = false
        }

        @inline(__always)
        func line(_ fields: [HTTPFields.Field], _ index: Int, _ seen: inout Seen) -> Line {
            guard keeps(fields, index) else { return .drop }
            switch fields[index].code {
            case .contentLength where zeroLength:
                defer { seen.length = true }
                return seen.length ? .drop : .value("0")
            case .via:
                guard let via else { return .keep }
                defer { seen.via = true }
                return seen.via ? .drop : .value(via)
            default:
                return .keep
            }
        }

        /// The client's field list.
        func apply(to origin: HTTPFields) -> HTTPFields {
            var edited = HTTPFields(capacity: origin.count + added.count)
            let fields = origin.fields
            var seen = Seen()
            for index in fields.indices {
                switch line(fields, index, &seen) {
                case .drop: continue
                case .keep: edited.append(line: fields[index])
                case .value(let value): edited.append(name: fields[index].name, value: value, code: fields[index].code)
                }
            }
            for index in added.indices { edited.append(line: added[index]) }
            return edited
        }
    }
}
