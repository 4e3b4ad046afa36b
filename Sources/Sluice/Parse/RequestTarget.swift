#if canImport(Glibc)
    import Glibc
#endif

/// A request target (RFC 9112 §3.2) as a forward proxy sees it.
public enum RequestTarget: Sendable, Equatable {
    /// `GET http://host:port/path?query` — what proxies receive.
    case absolute(TargetURL)
    /// `CONNECT host:port`.
    case authority(host: String, port: UInt16)
    /// `GET /path` — meant for an origin server, not a proxy.
    case origin(String)
    /// `OPTIONS *`.
    case asterisk
}

/// An absolute `http` or `https` URL split into the parts a proxy needs.
public struct TargetURL: Sendable, Equatable, CustomStringConvertible {
    /// `http` or `https`, lower case.
    public var scheme: String
    /// The host, lower case; IPv6 literals keep their brackets.
    public var host: String
    /// The port, explicit or the scheme's default.
    public var port: UInt16
    /// Path and query, at least `/`; never a fragment.
    public var pathAndQuery: String
    /// Whether the URL had no path and no query (`http://host:port`), which `pathAndQuery` spells
    /// `/`. An `OPTIONS` request for such a URL asks about the server, not a resource, and is
    /// forwarded as `OPTIONS *` (RFC 9112 §3.2.4). Not part of equality: both spellings name one URL.
    public var hasEmptyPath = false

    /// Whether `port` is the scheme's default.
    public var hasDefaultPort: Bool { port == TargetURL.defaultPort(scheme) }

    /// The path without the query.
    public var path: String {
        // By byte: a search by Character cost thousands of instructions for a short path.
        guard let query = pathAndQuery.utf8.firstIndex(of: UInt8(ascii: "?")) else { return pathAndQuery }
        return String(pathAndQuery[..<query])
    }

    /// `host` or `host:port` as it belongs in a `Host` field.
    public var authority: String { hasDefaultPort ? host : "\(host):\(port)" }

    /// The normalised URL text: lower-case scheme and host, default port omitted.
    public var description: String {
        // Written byte by byte into one allocation: this is the cache key of every request, and
        // interpolation or appends cost several times more.
        let digits = hasDefaultPort ? 0 : (port >= 10000 ? 5 : port >= 1000 ? 4 : port >= 100 ? 3 : port >= 10 ? 2 : 1)
        let length = scheme.utf8.count + 3 + host.utf8.count + (digits > 0 ? digits + 1 : 0) + pathAndQuery.utf8.count
        return String(unsafeUninitializedCapacity: length) { buffer in
            var index = 0
            func put(_ text: String) {
                var text = text
                text.withUTF8 { bytes in
                    guard let source = bytes.baseAddress else { return }
                    (buffer.baseAddress! + index).update(from: source, count: bytes.count)
                    index += bytes.count
                }
            }
            put(scheme)
            put("://")
            put(host)
            if digits > 0 {
                buffer[index] = UInt8(ascii: ":")
                var value = Int(port)
                for position in stride(from: index + digits, to: index, by: -1) {
                    buffer[position] = UInt8(48 + value % 10)
                    value /= 10
                }
                index += digits + 1
            }
            put(pathAndQuery)
            return index
        }
    }

    /// Whether `text` is ``description`` byte for byte (compared in place, nothing made).
    public func isSpelled(_ text: String) -> Bool {
        let digits = hasDefaultPort ? 0 : (port >= 10000 ? 5 : port >= 1000 ? 4 : port >= 100 ? 3 : port >= 10 ? 2 : 1)
        let schemeCount = scheme.utf8.count
        let hostCount = host.utf8.count
        let pathCount = pathAndQuery.utf8.count
        let length = schemeCount + 3 + hostCount + (digits > 0 ? digits + 1 : 0) + pathCount
        guard text.utf8.count == length else { return false }
        let answer = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            let base = bytes.baseAddress!
            // The separators and the port's digits, then the parts with memcmp.
            guard base[schemeCount] == UInt8(ascii: ":"), base[schemeCount + 1] == UInt8(ascii: "/"),
                base[schemeCount + 2] == UInt8(ascii: "/")
            else { return false }
            var index = schemeCount + 3 + hostCount
            if digits > 0 {
                guard base[index] == UInt8(ascii: ":") else { return false }
                var value = Int(port)
                for position in stride(from: index + digits, to: index, by: -1) {
                    guard base[position] == UInt8(48 + value % 10) else { return false }
                    value /= 10
                }
                index += digits + 1
            }
            return TargetURL.equal(scheme, base) && TargetURL.equal(host, base + schemeCount + 3)
                && TargetURL.equal(pathAndQuery, base + index)
        }
        return answer ?? false
    }

    /// Whether `part`'s bytes are the ones at `bytes` (as many as `part` has).
    private static func equal(_ part: String, _ bytes: UnsafePointer<UInt8>) -> Bool {
        var part = part
        return part.withUTF8 { mine in mine.isEmpty || memcmp(mine.baseAddress!, bytes, mine.count) == 0 }
    }

    /// The origin (scheme, host, port) for same-origin comparisons.
    public var origin: String { "\(scheme)://\(host):\(port)" }

    public static func == (lhs: TargetURL, rhs: TargetURL) -> Bool {
        lhs.scheme == rhs.scheme && lhs.host == rhs.host && lhs.port == rhs.port && lhs.pathAndQuery == rhs.pathAndQuery
    }

    /// 80 for `http`, 443 for `https`.
    public static func defaultPort(_ scheme: String) -> UInt16 { scheme == "https" ? 443 : 80 }

    /// A URL from parts.
    public init(scheme: String, host: String, port: UInt16, pathAndQuery: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.pathAndQuery = pathAndQuery
    }

    /// Parses an absolute `http`/`https` URL; `nil` for anything else (userinfo, bad port, no host,
    /// spaces, control characters or non-ASCII bytes). Works on bytes: this runs for every request.
    public init?(_ text: String) {
        var text = text
        guard let parsed = text.withUTF8({ TargetURL.parse($0) }) else { return nil }
        self = parsed
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> TargetURL? {
        let count = bytes.count
        var index = 0
        while index < count, bytes[index] != UInt8(ascii: ":") { index += 1 }
        guard index == 4 || index == 5, index + 2 < count, bytes[index + 1] == UInt8(ascii: "/"),
            bytes[index + 2] == UInt8(ascii: "/")
        else { return nil }
        let scheme: String
        if index == 4, lowerEquals(bytes, 0, "http") {
            scheme = "http"
        } else if index == 5, lowerEquals(bytes, 0, "https") {
            scheme = "https"
        } else {
            return nil
        }
        let authorityStart = index + 3
        var authorityEnd = authorityStart
        while authorityEnd < count {
            let byte = bytes[authorityEnd]
            if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") { break }
            authorityEnd += 1
        }
        guard
            let (host, port) = splitAuthority(
                UnsafeBufferPointer(rebasing: bytes[authorityStart..<authorityEnd]), defaultPort: defaultPort(scheme))
        else { return nil }
        // Up to a fragment, visible ASCII only (eight bytes at a time).
        let rest = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[authorityEnd...])
        let pathEnd =
            rest.isEmpty
            ? count
            : memchr(rest.baseAddress!, Int32(UInt8(ascii: "#")), rest.count).map {
                authorityEnd + rest.baseAddress!.distance(to: UnsafeRawPointer($0))
            } ?? count
        let pathBytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[authorityEnd..<pathEnd])
        guard ByteScan.isVisibleASCII(pathBytes) else { return nil }
        var path = String(decoding: pathBytes, as: UTF8.self)
        let emptyPath = path.isEmpty
        if path.isEmpty || path.utf8.first == UInt8(ascii: "?") { path = "/" + path }
        var url = TargetURL(scheme: scheme, host: host, port: port, pathAndQuery: path)
        url.hasEmptyPath = emptyPath
        return url
    }

    private static func lowerEquals(_ bytes: UnsafeBufferPointer<UInt8>, _ start: Int, _ word: StaticString) -> Bool {
        let utf8 = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard start + utf8.count <= bytes.count else { return false }
        for offset in 0..<utf8.count where bytes[start + offset] | 0x20 != utf8[offset] { return false }
        return true
    }

    /// Splits `host[:port]` (IPv6 in brackets); rejects userinfo, empty hosts and bad ports.
    static func splitAuthority(_ authority: Substring, defaultPort: UInt16?) -> (String, UInt16)? {
        var text = String(authority)
        return text.withUTF8 { splitAuthority($0, defaultPort: defaultPort) }
    }

    /// Byte-level ``splitAuthority(_:defaultPort:)``: the host is lower-cased.
    static func splitAuthority(_ bytes: UnsafeBufferPointer<UInt8>, defaultPort: UInt16?) -> (String, UInt16)? {
        let count = bytes.count
        guard count > 0 else { return nil }
        var hostEnd = count
        var portStart = -1
        if bytes[0] == UInt8(ascii: "[") {
            var close = 1
            while close < count, bytes[close] != UInt8(ascii: "]") {
                let byte = bytes[close]
                let ok = isHex(byte) || byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".")
                guard ok else { return nil }
                close += 1
            }
            guard close < count, close > 1 else { return nil }
            hostEnd = close + 1
            if hostEnd < count {
                guard bytes[hostEnd] == UInt8(ascii: ":") else { return nil }
                portStart = hostEnd + 1
            }
        } else {
            for index in 0..<count {
                let byte = bytes[index]
                if byte == UInt8(ascii: ":") {
                    guard portStart < 0 else { return nil }
                    hostEnd = index
                    portStart = index + 1
                    continue
                }
                guard portStart < 0 else { continue }
                let ok =
                    (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                guard ok else { return nil }
            }
        }
        guard hostEnd > 0 else { return nil }
        var port: UInt16
        if portStart >= 0 {
            let digits = count - portStart
            guard digits > 0, digits <= 5 else { return nil }
            var value = 0
            for index in portStart..<count {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            guard value > 0, value <= 65535 else { return nil }
            port = UInt16(value)
        } else {
            guard let defaultPort else { return nil }
            port = defaultPort
        }
        // Lower-cased straight into the string's storage (no intermediate array; short hosts stay inline).
        let host = String(unsafeUninitializedCapacity: hostEnd) { buffer in
            for index in 0..<hostEnd {
                let byte = bytes[index]
                buffer[index] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            }
            return hostEnd
        }
        return (host, port)
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
    }
}
