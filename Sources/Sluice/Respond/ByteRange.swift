/// Range requests answered from the cache (RFC 9110 §14, RFC 9111 §3.3, §3.4): one byte range of
/// a stored `200` becomes a `206` with `Content-Range`; a range that starts past the end is a
/// `416`; a stored `206` (a ``Piece``) answers the ranges it holds whole. Pure functions of the
/// request's fields, the stored head and its size.
enum ByteRange {
    /// How a stored response answers a request's `Range`.
    enum Answer: Equatable {
        /// The whole response (`200`): no usable `Range`, several ranges, or `If-Range` that does
        /// not match the stored response (§13.1.5).
        case whole
        /// These bytes, as a `206`.
        case partial(ClosedRange<Int64>)
        /// No byte of the range exists: `416` with `Content-Range: bytes */size`.
        case unsatisfiable
    }

    /// The answer to `request`'s `Range` (and `If-Range`) from a stored `200` of `size` bytes
    /// whose header fields are `stored`.
    static func answer(_ request: HTTPFields, stored: HTTPFields, size: Int64) -> Answer {
        let lines = request.values(.range)
        guard lines.count == 1, let ranges = parse(lines[0]) else { return .whole }
        if let ifRange = request.comparable(.ifRange), !ifRangeMatches(ifRange, stored: stored) { return .whole }
        // Several ranges are answered whole (a server may ignore Range, §14.2); one is resolved.
        guard ranges.count == 1 else { return .whole }
        return resolve(ranges[0], size: size)
    }

    /// One `Range` member as written: `first-last`, `first-` or `-suffix`.
    enum Spec: Equatable {
        case from(Int64, to: Int64?)
        case suffix(Int64)
    }

    /// `bytes=…` parsed into its members; `nil` when it is not a valid byte-ranges-specifier
    /// (then the field is ignored, §14.2). The unit is case-insensitive.
    static func parse(_ value: String) -> [Spec]? {
        let text = value.trimmingOWS()
        guard text.count > 6, text.prefix(6).lowercased() == "bytes=" else { return nil }
        var specs: [Spec] = []
        for member in text.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false) {
            let item = member.trimmingOWS()
            if item.isEmpty { continue }  // empty list members are allowed (RFC 9110 §5.6.1)
            guard let dash = item.firstIndex(of: "-") else { return nil }
            let first = item[..<dash]
            let last = item[item.index(after: dash)...]
            if first.isEmpty {
                guard let suffix = number(last) else { return nil }
                specs.append(.suffix(suffix))
            } else {
                guard let start = number(first) else { return nil }
                if last.isEmpty {
                    specs.append(.from(start, to: nil))
                } else {
                    guard let end = number(last), end >= start else { return nil }
                    specs.append(.from(start, to: end))
                }
            }
        }
        return specs.isEmpty ? nil : specs
    }

    /// One member against the representation's length (§14.1.2).
    static func resolve(_ spec: Spec, size: Int64) -> Answer {
        switch spec {
        case .from(let start, let end):
            guard start < size else { return .unsatisfiable }
            return .partial(start...min(end ?? (size - 1), size - 1))
        case .suffix(let length):
            guard length > 0, size > 0 else { return .unsatisfiable }
            return .partial(max(0, size - length)...(size - 1))
        }
    }

    /// §13.1.5: an entity tag matches by strong comparison (a weak tag never does); a date only
    /// when it equals a strong `Last-Modified` (at least a second before `Date`, §8.8.2.2).
    static func ifRangeMatches(_ value: String, stored: HTTPFields) -> Bool {
        let condition = value.trimmingOWS()
        if condition.hasPrefix("\"") || condition.hasPrefix("W/") {
            guard !condition.hasPrefix("W/"), let etag = stored.comparable(.etag)?.trimmingOWS(), !etag.hasPrefix("W/")
            else {
                return false
            }
            return HTTPFields.Field.sameBytes(etag, condition)
        }
        guard let date = HTTPDate.parseStrict(condition),
            let modified = stored[.lastModified].flatMap(HTTPDate.parse), modified == date,
            let responded = stored[.date].flatMap(HTTPDate.parse), modified <= responded - 1
        else { return false }
        return true
    }

    /// The `206` head for `bytes` of a stored `200` of `size` bytes.
    static func partialHead(_ head: ResponseHead, bytes: ClosedRange<Int64>, size: Int64) -> ResponseHead {
        var partial = head
        partial.status = 206
        partial.reason = "Partial Content"
        partial.headers.remove(.transferEncoding)
        partial.headers.set("Content-Range", "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(size)")
        partial.headers.set("Content-Length", String(bytes.count))
        return partial
    }

    /// The `416` head for a stored response of `size` bytes: the stored fields that describe the
    /// representation, `Content-Range: bytes */size`, no content.
    static func unsatisfiableHead(_ head: ResponseHead, size: Int64) -> ResponseHead {
        var headers = HTTPFields()
        for field in head.headers
        where ["date", "etag", "last-modified", "cache-control", "expires", "vary"].contains(where: field.hasName) {
            headers.append(line: field)
        }
        headers.append(name: "Content-Range", value: "bytes */\(size)", code: .contentRange)
        headers.append(name: "Content-Length", value: "0", code: .contentLength)
        return ResponseHead(
            status: 416, reason: "Range Not Satisfiable", version: head.version, headers: headers)
    }

    /// A stored `206`'s place in its representation: `Content-Range: bytes first-last/complete`
    /// (§14.4), with a known complete length and no more bytes than it has.
    struct Piece: Equatable {
        let first: Int64
        let last: Int64
        let complete: Int64

        /// The bytes it holds, in the representation's coordinates.
        var bytes: ClosedRange<Int64> { first...last }
        var count: Int64 { last - first + 1 }

        init(first: Int64, last: Int64, complete: Int64) {
            self.first = first
            self.last = last
            self.complete = complete
        }

        /// From a response's fields: one `Content-Range` of bytes with a complete length, and a
        /// `Content-Length` (when sent) that agrees with it; `nil` otherwise (a multipart answer,
        /// `*` for the length, a range past the end).
        init?(_ headers: HTTPFields) {
            let lines = headers.values(.contentRange)
            guard lines.count == 1 else { return nil }
            let text = lines[0].trimmingOWS()
            guard text.count > 6, text.prefix(6).lowercased() == "bytes ",
                let dash = text.firstIndex(of: "-"), let slash = text.firstIndex(of: "/"), dash < slash
            else { return nil }
            let start = text.index(text.startIndex, offsetBy: 6)
            guard let first = ByteRange.number(text[start..<dash]),
                let last = ByteRange.number(text[text.index(after: dash)..<slash]),
                let complete = ByteRange.number(text[text.index(after: slash)...]),
                first <= last, last < complete
            else { return nil }
            if let length = headers[.contentLength], Int64(length) != last - first + 1 { return nil }
            self.init(first: first, last: last, complete: complete)
        }

        /// The `Content-Range` value for these bytes.
        var contentRange: String { "bytes \(first)-\(last)/\(complete)" }
    }

    /// The answer to `request`'s `Range` from a stored piece: its bytes when it holds every byte
    /// asked for, `416` when none exists in the representation; `nil` when the piece cannot
    /// answer (no single usable range, an `If-Range` that does not match, bytes it lacks).
    static func answer(_ request: HTTPFields, piece: Piece, stored: HTTPFields) -> Answer? {
        let lines = request.values(.range)
        guard lines.count == 1, let ranges = parse(lines[0]), ranges.count == 1 else { return nil }
        if let ifRange = request.comparable(.ifRange), !ifRangeMatches(ifRange, stored: stored) { return nil }
        let answer = resolve(ranges[0], size: piece.complete)
        if case .partial(let bytes) = answer, !piece.bytes.contains(bytes.lowerBound) || bytes.upperBound > piece.last {
            return nil
        }
        return answer
    }

    /// Whether two stored responses are of one representation, so their bytes may be combined
    /// (RFC 9111 §3.4): both carry the same strong entity tag.
    static func sameRepresentation(_ one: HTTPFields, _ other: HTTPFields) -> Bool {
        guard let tag = one[.etag]?.trimmingOWS(), !tag.hasPrefix("W/"), tag.hasPrefix("\""),
            let otherTag = other[.etag]?.trimmingOWS()
        else { return false }
        return tag == otherTag
    }

    /// A non-negative decimal that fits in 63 bits.
    static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}
