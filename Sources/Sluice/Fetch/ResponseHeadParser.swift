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
    /// The head being read, after its status line.
    private var building: ResponseHead?
    /// Bytes of the section so far, line ends included.
    private var sectionBytes = 0

    /// No section is being read (before the first status line, or after a complete head).
    var isBetweenSections: Bool { building == nil }

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
            guard var head = building else { return .more }
            building = nil
            guard head.status >= 200 else { return .interim(head) }
            if let violation = ResponseFraming.violation(&head) { return .refused(violation) }
            return .final(head)
        }
        guard building != nil else {
            guard let head = StatusLine.parse(text) else { return .notHTTP }
            building = head
            return .more
        }
        // The head is changed where it is kept (`building?.…`: in place, no copy of it per line).
        if let first = text.first, first == 0x20 || first == 0x09, let last = building?.headers.fields.last {
            // obs-fold from an origin: replaced with a space (RFC 9112 §5.2).
            if let violation = ResponseFraming.valueViolation(UnsafeRawBufferPointer(rebasing: text[1...])) {
                return .refused(violation)
            }
            building?.headers.remove(last.name)
            building?.headers.append(
                name: last.name, value: last.value + " " + String(decoding: text, as: UTF8.self).trimmingOWS())
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
        if let violation = (code == .other ? ResponseFraming.nameViolation(nameBytes) : nil)
            ?? ResponseFraming.valueViolation(valueBytes)
        {
            return .refused(violation)
        }
        let name = FieldNameTable.name(nameBytes, code: code)
        building?.headers.append(name: name, value: String(decoding: valueBytes, as: UTF8.self), code: code)
        return .more
    }
}

/// Status lines of upstream responses.
enum StatusLine {
    /// `HTTP/1.1 200 OK`, `HTTP/2 200`; `nil` if it is not a status line.
    static func parse(_ text: UnsafeRawBufferPointer) -> ResponseHead? {
        guard text.starts(with: "HTTP/".utf8), let space = text.firstIndex(of: 0x20) else { return nil }
        let version = String(decoding: text[5..<space], as: UTF8.self)
        let rest = text[(space + 1)...]
        guard rest.count >= 3 else { return nil }
        let codeBytes = rest.prefix(3)
        guard codeBytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let code = Int(String(decoding: codeBytes, as: UTF8.self))
        else { return nil }
        var reason = ""
        if rest.count > 3 {
            guard rest[rest.startIndex + 3] == 0x20 else { return nil }
            // Control bytes never reach a client's status line.
            let text = rest.dropFirst(4)
            func allowed(_ byte: UInt8) -> Bool { byte >= 0x20 && byte != 0x7F || byte == 0x09 }
            reason =
                text.allSatisfy(allowed)
                ? String(decoding: text, as: UTF8.self) : String(decoding: text.filter(allowed), as: UTF8.self)
        }
        return ResponseHead(
            status: code, reason: reason, version: version == "2" ? "2" : version, headers: HTTPFields(capacity: 16))
    }
}
