#if canImport(Glibc)
    import Glibc
#endif

/// An incremental HTTP/1.1 request-head parser with hard limits (RFC 9112 §2–§6).
///
/// Feed it the buffered input (from the start of the request) until it returns a head or a
/// failure; it remembers how far it has scanned so a slow sender costs linear time.
/// Strict: bare CR, bare LF, obs-fold, whitespace before a colon, CL+TE, conflicting or repeated
/// Content-Length, and invalid field bytes are all rejected.
public struct RequestParser: Sendable {
    /// Size limits.
    public struct Limits: Sendable, Equatable {
        /// Longest request line (414 above it); 8 KiB by default.
        public var maxRequestLine = 8 * 1024
        /// Largest header section including the request line (431 above it); 64 KiB by default.
        public var maxHeaderBytes = 64 * 1024
        /// Most header field lines (431 above it); 256 by default.
        public var maxFieldCount = 256
        /// Largest request body (413 above it); 100 MiB by default.
        public var maxBodyBytes: Int64 = 100 * 1024 * 1024

        /// The defaults.
        public init() {}
    }

    /// What one call produced.
    public enum Outcome: Sendable, Equatable {
        /// Not a complete head yet.
        case needMore
        /// A complete head, which used `consumed` bytes of the input.
        case head(ProxyRequest, consumed: Int)
        /// The request is unusable; answer with this error and close.
        case failure(SluiceError)
    }

    /// The limits in force.
    public let limits: Limits
    private var scanned = 0
    private var lineStart = 0
    private var requestLineDone = false

    /// A parser for one request head.
    public init(limits: Limits = Limits()) { self.limits = limits }

    /// Starts over for the next request on the connection.
    public mutating func reset() {
        scanned = 0
        lineStart = 0
        requestLineDone = false
    }

    /// Looks at `input` (everything buffered since the request began).
    public mutating func parse(_ input: UnsafeRawBufferPointer) -> Outcome {
        let count = input.count
        // Skip empty lines before the request line (RFC 9112 §2.2).
        var start = 0
        while start + 1 < count, input[start] == 0x0D, input[start + 1] == 0x0A { start += 2 }
        if scanned < start {
            scanned = start
            lineStart = start
        }
        var index = scanned
        // Past this many bytes the head is too large.
        let bound = min(count, start + limits.maxHeaderBytes + 1)
        while index < count {
            // Bytes other than CR and LF (nearly all) are passed over eight at a time.
            index = ByteScan.firstLineBreakOrControl(input, from: index, to: max(index, bound))
            if index - start > limits.maxHeaderBytes {
                if !requestLineDone, index - start > limits.maxRequestLine {
                    return .failure(.badRequest(reason: .requestLineTooLong(limit: limits.maxRequestLine)))
                }
                return .failure(.badRequest(reason: .headersTooLarge(limit: limits.maxHeaderBytes)))
            }
            guard index < count else { break }
            let byte = input[index]
            if byte == 0x0A {
                guard index > start, input[index - 1] == 0x0D else { return .failure(malformed("bare LF")) }
                if !requestLineDone {
                    requestLineDone = true
                    if index - 1 - start > limits.maxRequestLine {
                        return .failure(.badRequest(reason: .requestLineTooLong(limit: limits.maxRequestLine)))
                    }
                }
                if index - 1 == lineStart {
                    // The empty line: the head is complete.
                    let head = UnsafeRawBufferPointer(rebasing: input[start..<(index + 1)])
                    reset()
                    return build(head, consumed: index + 1)
                }
                lineStart = index + 1
            } else if byte == 0x0D {
                if index + 1 < count, input[index + 1] != 0x0A { return .failure(malformed("bare CR")) }
                if index + 1 == count { break }  // maybe the first half of CRLF: look again with more input
            }
            index += 1
            if index - start > limits.maxHeaderBytes {
                if !requestLineDone, index - start > limits.maxRequestLine {
                    return .failure(.badRequest(reason: .requestLineTooLong(limit: limits.maxRequestLine)))
                }
                return .failure(.badRequest(reason: .headersTooLarge(limit: limits.maxHeaderBytes)))
            }
        }
        if !requestLineDone, count - start > limits.maxRequestLine {
            return .failure(.badRequest(reason: .requestLineTooLong(limit: limits.maxRequestLine)))
        }
        scanned = index
        return .needMore
    }

    private func malformed(_ what: String) -> SluiceError { .badRequest(reason: .malformed(what)) }

    /// The method and target of the request line at the start of `input` (after empty lines),
    /// when it is there whole within `limit` bytes and has a request line's shape (a token, a
    /// space, visible ASCII, a space): what a log line names for a head that was refused. `nil`
    /// otherwise, so that nothing else of refused bytes reaches a log.
    static func requestLine(in input: UnsafeRawBufferPointer, limit: Int) -> (method: String, target: String)? {
        var start = 0
        while start + 1 < input.count, input[start] == 0x0D, input[start + 1] == 0x0A { start += 2 }
        let end = min(input.count, start + limit)
        guard let lineEnd = input[start..<end].firstIndex(where: { $0 == 0x0D || $0 == 0x0A }),
            let firstSpace = input[start..<lineEnd].firstIndex(of: 0x20), firstSpace > start,
            let secondSpace = input[(firstSpace + 1)..<lineEnd].firstIndex(of: 0x20), secondSpace > firstSpace + 1
        else { return nil }
        let method = UnsafeRawBufferPointer(rebasing: input[start..<firstSpace])
        let target = UnsafeRawBufferPointer(rebasing: input[(firstSpace + 1)..<secondSpace])
        guard method.allSatisfy(isTokenByte), ByteScan.isVisibleASCII(target) else { return nil }
        return (String(decoding: method, as: UTF8.self), loggable(String(decoding: target, as: UTF8.self)))
    }

    /// `target` without what a log must not keep of a refused one: userinfo (`user:password@`,
    /// which the parser refuses) and a fragment (`#access_token=…`).
    static func loggable(_ target: String) -> String {
        var bytes = Array(target.utf8)
        if let hash = bytes.firstIndex(of: UInt8(ascii: "#")) { bytes.removeSubrange(hash...) }
        // The authority of an absolute form: after the first "://", up to a path or query.
        if let colon = bytes.indices.first(where: {
            bytes[$0] == UInt8(ascii: ":") && bytes[($0 + 1)...].starts(with: "//".utf8)
        }) {
            let start = colon + 3
            let end =
                bytes[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? bytes.endIndex
            if let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")) { bytes.removeSubrange(start...at) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Building the head

    private func build(_ head: UnsafeRawBufferPointer, consumed: Int) -> Outcome {
        // The head ends with CRLF CRLF and every line with CRLF (checked while scanning).
        guard let firstLF = head.index(of: 0x0A), firstLF > 0 else { return .failure(malformed("empty request")) }
        let requestLine = UnsafeRawBufferPointer(rebasing: head[..<(firstLF - 1)])

        // request-line = method SP request-target SP HTTP-version
        guard let firstSpace = requestLine.index(of: 0x20),
            let secondSpace = requestLine.index(of: 0x20, from: firstSpace + 1),
            !requestLine[(secondSpace + 1)...].contains(0x20), firstSpace > 0, secondSpace > firstSpace + 1
        else {
            return .failure(malformed("request line must be: method SP target SP version"))
        }
        let parts = (
            UnsafeRawBufferPointer(rebasing: requestLine[..<firstSpace]),
            UnsafeRawBufferPointer(rebasing: requestLine[(firstSpace + 1)..<secondSpace]),
            UnsafeRawBufferPointer(rebasing: requestLine[(secondSpace + 1)...])
        )
        guard parts.0.allSatisfy(RequestParser.isTokenByte) else { return .failure(malformed("invalid method")) }
        guard ByteScan.isVisibleASCII(parts.1) else {
            return .failure(malformed("invalid byte in request target"))
        }
        // The usual method and version are compared as bytes: no string made to compare.
        let method = RequestParser.isGET(parts.0) ? "GET" : String(decoding: parts.0, as: UTF8.self)
        let rawTarget = String(decoding: parts.1, as: UTF8.self)
        let minorVersion: Int
        switch RequestParser.minorVersion(parts.2) {
        case let minor?: minorVersion = minor
        case nil:
            let version = String(decoding: parts.2, as: UTF8.self)
            let isVersionShaped =
                version.hasPrefix("HTTP/") && version.count == 8
                && version.utf8.dropFirst(5).enumerated().allSatisfy { offset, byte in
                    offset == 1 ? byte == UInt8(ascii: ".") : (byte >= 0x30 && byte <= 0x39)
                }
            return .failure(
                isVersionShaped
                    ? .badRequest(reason: .unsupportedVersion(version)) : malformed("invalid HTTP version"))
        }

        var headers = HTTPFields()
        headers.reserveCapacity(16)
        var lineStart = firstLF + 1
        // Each field line up to its CRLF; the last line of the head is the empty one.
        while lineStart < head.count, let lf = head.index(of: 0x0A, from: lineStart), lf - 1 > lineStart {
            let line = UnsafeRawBufferPointer(rebasing: head[lineStart..<(lf - 1)])
            lineStart = lf + 1
            if headers.count >= limits.maxFieldCount {
                return .failure(.badRequest(reason: .tooManyFields(limit: limits.maxFieldCount)))
            }
            guard let first = line.first else { return .failure(malformed("empty field line")) }
            if first == 0x20 || first == 0x09 { return .failure(malformed("obs-fold (line folding) is not allowed")) }
            guard let colon = line.index(of: UInt8(ascii: ":")), colon > 0 else {
                return .failure(malformed("field line without a colon"))
            }
            let name = line[..<colon]
            // A listed name is made of letters and dashes: only the others are checked byte by byte.
            let code = FieldCode(bytes: UnsafeRawBufferPointer(rebasing: name))
            guard code != .other || name.allSatisfy(RequestParser.isTokenByte) else {
                return .failure(malformed("invalid field name (whitespace or a separator before the colon)"))
            }
            var value = line[(colon + 1)...]
            while let byte = value.first, byte == 0x20 || byte == 0x09 { value = value.dropFirst() }
            while let byte = value.last, byte == 0x20 || byte == 0x09 { value = value.dropLast() }
            let valueBytes = UnsafeRawBufferPointer(rebasing: value)
            let fieldName = FieldNameTable.name(UnsafeRawBufferPointer(rebasing: name), code: code)
            // ASCII is UTF-8 as it is; other obs-text is kept as received, UTF-8 or not (RFC 9110
            // §5.5: opaque data), and forwarded byte for byte.
            switch ByteScan.fieldValue(valueBytes) {
            case .ascii: headers.append(name: fieldName, value: String(decoding: valueBytes, as: UTF8.self), code: code)
            case .obsText: headers.append(name: fieldName, wireValue: valueBytes, code: code)
            case .forbidden: return .failure(malformed("invalid byte in a field value"))
            }
        }

        let target: RequestTarget
        switch RequestParser.parseTarget(rawTarget, method: method) {
        case .success(let parsed): target = parsed
        case .failure(let error): return .failure(error)
        }

        // Host: required once in HTTP/1.1 (RFC 9112 §3.2).
        // (Looked up in place: `values(.host)` would allocate an array on every request.)
        let host = headers.onlyValue(.host)
        if host == nil, headers.contains(.host) { return .failure(malformed("more than one Host field")) }
        if minorVersion == 1, host == nil { return .failure(malformed("missing Host field")) }
        // A Host that repeats an absolute target's authority byte for byte (what clients of a
        // proxy send) parsed with the target already.
        if let host, !host.isEmpty, !RequestParser.repeatsAuthority(host, of: target, rawTarget),
            TargetURL.splitAuthority(Substring(host), defaultPort: 80) == nil
        {
            return .failure(malformed("invalid Host field"))
        }

        switch RequestParser.framing(headers, minorVersion: minorVersion, limits: limits) {
        case .success(let framing):
            let request = ProxyRequest(
                method: method, target: target, rawTarget: rawTarget, minorVersion: minorVersion,
                headers: headers, bodyFraming: framing)
            return .head(request, consumed: consumed)
        case .failure(let error):
            return .failure(error)
        }
    }

    /// Classifies the request target (RFC 9112 §3.2).
    static func parseTarget(_ raw: String, method: String) -> Result<RequestTarget, SluiceError> {
        if method == "CONNECT" {
            guard let (host, port) = TargetURL.splitAuthority(Substring(raw), defaultPort: nil) else {
                return .failure(.badRequest(reason: .malformed("CONNECT needs host:port")))
            }
            return .success(.authority(host: host, port: port))
        }
        if raw == "*" {
            return method == "OPTIONS" ? .success(.asterisk) : .failure(.badRequest(reason: .notAProxyRequest))
        }
        // No request-target form has a fragment (RFC 9112 §3.2): it is the client's own business.
        let hasFragment =
            raw.utf8.withContiguousStorageIfAvailable { $0.contains(UInt8(ascii: "#")) }
            ?? raw.utf8.contains(UInt8(ascii: "#"))
        if hasFragment {
            return .failure(.badRequest(reason: .malformed("a request target has no fragment (#)")))
        }
        if raw.utf8.first == UInt8(ascii: "/") { return .success(.origin(raw)) }
        if let url = TargetURL(raw) { return .success(.absolute(url)) }
        guard let colon = raw.utf8.firstIndex(of: UInt8(ascii: ":")) else {
            return .failure(.badRequest(reason: .malformed("invalid request target")))
        }
        let scheme = String(raw[..<colon]).lowercased()
        guard scheme != "http" && scheme != "https" else {
            return .failure(.badRequest(reason: .malformed("invalid absolute URL (userinfo, host or port)")))
        }
        let looksLikeScheme =
            scheme.first?.isLetter == true && scheme.allSatisfy { $0.isLetter || $0.isNumber || "+-.".contains($0) }
        return .failure(
            looksLikeScheme
                ? .badRequest(reason: .unsupportedScheme(scheme))
                : .badRequest(reason: .malformed("invalid request target")))
    }

    private static func isGET(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count == 3 && bytes[0] == UInt8(ascii: "G") && bytes[1] == UInt8(ascii: "E")
            && bytes[2] == UInt8(ascii: "T")
    }

    /// 1 for `HTTP/1.1` and any later `HTTP/1.x` (RFC 9110 §2.5: a higher minor version is
    /// processed as the highest one implemented), 0 for `HTTP/1.0`, else `nil`.
    private static func minorVersion(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count == 8 else { return nil }
        // The eight bytes as one little-endian word: "HTTP/1.1" and "HTTP/1.0".
        let word = UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self))
        switch word {
        case 0x312E_312F_5054_5448: return 1
        case 0x302E_312F_5054_5448: return 0
        default:
            // "HTTP/1." and a digit from 2 to 9.
            guard word & 0x00FF_FFFF_FFFF_FFFF == 0x002E_312F_5054_5448 else { return nil }
            let minor = word >> 56
            return minor >= 0x32 && minor <= 0x39 ? 1 : nil
        }
    }

    /// Whether `host` is the authority of the absolute-form `rawTarget` (which parsed as
    /// `target`) byte for byte: `scheme://` then exactly `host`, then the end, `/`, `?` or `#`.
    /// Nothing with user information (`@`) or more than the authority (`/`, `?`, `#`) counts.
    static func repeatsAuthority(_ host: String, of target: RequestTarget, _ rawTarget: String) -> Bool {
        guard case .absolute = target else { return false }
        let repeats = rawTarget.utf8.withContiguousStorageIfAvailable { raw in
            host.utf8.withContiguousStorageIfAvailable { wanted -> Bool in
                guard let colon = raw.firstIndex(of: UInt8(ascii: ":")), colon + 2 < raw.count,
                    raw[colon + 1] == UInt8(ascii: "/"), raw[colon + 2] == UInt8(ascii: "/")
                else { return false }
                let start = colon + 3
                guard raw.count - start >= wanted.count, let source = raw.baseAddress, let host = wanted.baseAddress,
                    memcmp(source + start, host, wanted.count) == 0
                else { return false }
                // Past the authority, or user information: such a Host is parsed (and refused).
                for byte in wanted
                where byte == UInt8(ascii: "@") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?")
                    || byte == UInt8(ascii: "#")
                {
                    return false
                }
                let end = start + wanted.count
                guard end < raw.count else { return true }
                let next = raw[end]
                return next == UInt8(ascii: "/") || next == UInt8(ascii: "?") || next == UInt8(ascii: "#")
            }
        }
        return (repeats ?? nil) ?? false
    }

    /// Body framing from Content-Length / Transfer-Encoding (RFC 9112 §6.1–§6.3).
    static func framing(_ headers: HTTPFields, minorVersion: Int, limits: Limits) -> Result<
        ProxyRequest.BodyFraming, SluiceError
    > {
        let lengths = headers.values(.contentLength)
        let codings = headers.tokens(.transferEncoding)
        let hasTE = headers.contains(.transferEncoding)
        if hasTE {
            if !lengths.isEmpty {
                return .failure(.badRequest(reason: .malformed("both Content-Length and Transfer-Encoding")))
            }
            if minorVersion == 0 {
                return .failure(.badRequest(reason: .malformed("Transfer-Encoding in an HTTP/1.0 request")))
            }
            guard codings.last == "chunked" else {
                return .failure(.badRequest(reason: .malformed("Transfer-Encoding must end with chunked")))
            }
            if codings.count > 1 {
                let unsupported = codings.dropLast().joined(separator: ", ")
                if codings.filter({ $0 == "chunked" }).count > 1 {
                    return .failure(.badRequest(reason: .malformed("chunked applied more than once")))
                }
                return .failure(.badRequest(reason: .unsupportedTransferCoding(unsupported)))
            }
            return .success(.chunked)
        }
        guard !lengths.isEmpty else { return .success(.none) }
        guard lengths.count == 1 else {
            return .failure(.badRequest(reason: .malformed("more than one Content-Length")))
        }
        let text = lengths[0]
        guard !text.isEmpty, text.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let length = Int64(text)
        else { return .failure(.badRequest(reason: .malformed("invalid Content-Length"))) }
        if length > limits.maxBodyBytes {
            return .failure(.badRequest(reason: .bodyTooLarge(limit: Int(limits.maxBodyBytes))))
        }
        return .success(length == 0 ? .none : .length(length))
    }

    /// RFC 9110 `tchar`.
    /// (Bit masks of the token bytes below 64 and from 64 to 127: digits and `!#$%&'*+-.`, then
    /// letters and `^_`|~`; a test is a shift, not a chain of comparisons.)
    @inline(__always)
    public static func isTokenByte(_ byte: UInt8) -> Bool {
        if byte < 64 { return (0x03FF_6CFA_0000_0000 as UInt64) >> UInt64(byte) & 1 != 0 }
        if byte < 128 { return (0x57FF_FFFF_C7FF_FFFE as UInt64) >> UInt64(byte - 64) & 1 != 0 }
        return false
    }
}
