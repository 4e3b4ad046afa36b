#if canImport(Glibc)
    import Glibc
#endif

/// The header sections of one upstream transfer, line by line as libcurl hands them over
/// (`CURLOPT_HEADERFUNCTION`): interim `1xx` heads, then the final one. Pure: no I/O, no clock;
/// ``UpstreamTask`` decides what each step means for the exchange.
struct ResponseHeadParser {
    /// What a line completed.
    enum Step: Equatable {
        /// Nothing yet: the section goes on.
        case more
        /// An interim (`1xx`) head is complete; a final one follows.
        case interim(ResponseHead)
        /// The final head is complete and well framed.
        case final(ResponseHead)
        /// The section must not be relayed (too large, a line without a colon, bad framing or
        /// bytes); the detail is for the client's 502.
        case refused(String)
        /// The first line is not an HTTP status line.
        case notHTTP
    }

    /// The most bytes one header section may have (`limits.max_header_bytes`).
    let maxHeaderBytes: Int
    /// Where the parser is: waiting for a status line, or reading the fields of `head`.
    private enum Position { case betweenSections, inFields }
    private var position = Position.betweenSections
    /// The head being read, after its status line (not an optional: a field is appended where
    /// the head is kept, with no copy of it or check of an optional per line).
    private var head = ResponseHead(status: 0)
    /// Bytes of the section so far, line ends included.
    private var sectionBytes = 0

    /// No section is being read (before the first status line, or after a complete head).
    var isBetweenSections: Bool { position == .betweenSections }

    init(maxHeaderBytes: Int) {
        self.maxHeaderBytes = maxHeaderBytes
    }

    /// Takes one line, with or without its CRLF.
    mutating func consume(_ line: UnsafeRawBufferPointer) -> Step {
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        let text = UnsafeRawBufferPointer(rebasing: line[0..<end])
        sectionBytes += line.count
        if sectionBytes > maxHeaderBytes {
            // libcurl's own limit (100 KiB per header section) would only say "Out of memory".
            return .refused("The origin's response header section exceeds \(maxHeaderBytes) bytes.")
        }
        if text.isEmpty {
            sectionBytes = 0
            guard position == .inFields else { return .more }
            position = .betweenSections
            // Moved out, not copied: the parser keeps an empty head.
            var done = ResponseHead(status: 0)
            swap(&done, &head)
            guard done.status >= 200 else { return .interim(done) }
            if let violation = ResponseFraming.violation(&done) { return .refused(violation) }
            return .final(done)
        }
        guard position == .inFields else {
            guard let parsed = StatusLine.parse(text) else { return .notHTTP }
            if let violation = StatusLine.violation(parsed) { return .refused(violation) }
            head = parsed
            position = .inFields
            return .more
        }
        if let first = text.first, first == 0x20 || first == 0x09, head.headers.count > 0 {
            // obs-fold from an origin: replaced with a space (RFC 9112 §5.2), on the line it
            // continues (earlier lines of the same name stay as they were).
            if let violation = ResponseFraming.valueViolation(UnsafeRawBufferPointer(rebasing: text[1...])) {
                return .refused(violation)
            }
            var start = 0
            var stop = text.count
            while start < stop, text[start] == 0x20 || text[start] == 0x09 { start += 1 }
            while stop > start, text[stop - 1] == 0x20 || text[stop - 1] == 0x09 { stop -= 1 }
            head.headers.extendLastValue(withWire: UnsafeRawBufferPointer(rebasing: text[start..<stop]))
            return .more
        }
        guard let found = memchr(text.baseAddress!, 0x3A, text.count) else {
            return .refused("The origin sent a header line without a colon.")
        }
        let colon = text.baseAddress!.distance(to: UnsafeRawPointer(found))
        var start = colon + 1
        var stop = text.count
        while start < stop, text[start] == 0x20 || text[start] == 0x09 { start += 1 }
        while stop > start, text[stop - 1] == 0x20 || text[stop - 1] == 0x09 { stop -= 1 }
        var nameEnd = colon
        while nameEnd > 0, text[nameEnd - 1] == 0x20 || text[nameEnd - 1] == 0x09 { nameEnd -= 1 }
        let nameBytes = UnsafeRawBufferPointer(rebasing: text[..<nameEnd])
        let valueBytes = UnsafeRawBufferPointer(rebasing: text[start..<stop])
        // A listed name is made of letters and dashes: only the others are checked byte by byte.
        let code = FieldCode(bytes: nameBytes)
        // The usual value (ASCII, no CR, LF or NUL) is text as it is; only the others are looked
        // at closer.
        let plain = ByteScan.isPlainASCII(valueBytes)
        if let violation = (code == .other ? ResponseFraming.nameViolation(nameBytes) : nil)
            ?? (plain ? nil : ResponseFraming.valueViolation(valueBytes))
        {
            return .refused(violation)
        }
        let name = FieldNameTable.name(nameBytes, code: code)
        if plain {
            head.headers.append(name: name, value: String(decoding: valueBytes, as: UTF8.self), code: code)
        } else {
            head.headers.append(name: name, wireValue: valueBytes, code: code)
        }
        return .more
    }
}

/// Status lines of upstream responses.
enum StatusLine {
    /// Why a status line that parsed must not be relayed: a code past 599 (RFC 9110 §15: not a
    /// status code; a client must treat it as a 5xx), or a version that is no HTTP/1.x on an
    /// HTTP/1.x connection (libcurl writes `HTTP/2` and `HTTP/3` for its own, which pass).
    static func violation(_ head: ResponseHead) -> String? {
        if head.status > 599 { return "The origin sent status \(head.status), outside 100 to 599." }
        if head.version == "1.1" || head.version == "2" || head.version == "3" { return nil }
        let version = Array(head.version.utf8)  // (not 1.1: rare)
        if version.count == 3, version[0] == UInt8(ascii: "1"), version[1] == UInt8(ascii: "."),
            version[2] &- 0x30 < 10
        {
            return nil
        }
        return "The origin's status line says HTTP/\(head.version.prefix(16)), no version of HTTP/1.x."
    }

    /// `HTTP/1.1 200 OK`, `HTTP/2 200`; `nil` if it is not a status line.
    static func parse(_ text: UnsafeRawBufferPointer) -> ResponseHead? {
        // Compared byte by byte: the generic `starts(with:)` and `elementsEqual` cost hundreds of
        // instructions on every response.
        let (h, t, p, slash) = (UInt8(ascii: "H"), UInt8(ascii: "T"), UInt8(ascii: "P"), UInt8(ascii: "/"))
        guard text.count > 5, text[0] == h, text[1] == t, text[2] == t, text[3] == p, text[4] == slash,
            let found = memchr(text.baseAddress! + 5, Int32(UInt8(ascii: " ")), text.count - 5)
        else { return nil }
        let space = text.baseAddress!.distance(to: UnsafeRawPointer(found))
        let versionBytes = UnsafeRawBufferPointer(rebasing: text[5..<space])
        let isOneOne =
            versionBytes.count == 3 && versionBytes[0] == UInt8(ascii: "1") && versionBytes[1] == UInt8(ascii: ".")
            && versionBytes[2] == UInt8(ascii: "1")
        let version = isOneOne ? "1.1" : String(decoding: versionBytes, as: UTF8.self)
        // Three digits, then the end or a space and the reason.
        guard text.count >= space + 4 else { return nil }
        var code = 0
        for index in (space + 1)...(space + 3) {
            let digit = text[index] &- UInt8(ascii: "0")
            guard digit <= 9 else { return nil }
            code = code * 10 + Int(digit)
        }
        // 100 to 599 are status codes (RFC 9110 §15); `000` or `099` is no status line, not a 1xx.
        guard code >= 100 else { return nil }
        var reason = ""
        if text.count > space + 4 {
            guard text[space + 4] == UInt8(ascii: " ") else { return nil }
            // Control bytes never reach a client's status line.
            // (Decoded from a buffer, not a slice: the generic path copies the bytes to an array.)
            let phrase = UnsafeRawBufferPointer(rebasing: text[(space + 5)...])
            func allowed(_ byte: UInt8) -> Bool { byte >= 0x20 && byte != 0x7F || byte == 0x09 }
            reason =
                phrase.allSatisfy(allowed)
                ? String(decoding: phrase, as: UTF8.self) : String(decoding: phrase.filter(allowed), as: UTF8.self)
        }
        return ResponseHead(status: code, reason: reason, version: version, headers: HTTPFields(capacity: 16))
    }
}
