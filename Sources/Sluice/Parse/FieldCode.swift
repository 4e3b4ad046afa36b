/// The field names Sluice looks for in most messages, as small numbers. A field line knows its
/// code from the moment it is made (the parsers classify the name's bytes once), so a lookup
/// compares one byte per line instead of two names, and ``HTTPFields`` answers "is there a
/// Transfer-Encoding?" from a bit without looking at the lines at all.
public enum FieldCode: UInt8, Sendable, CaseIterable {
    /// Any name not listed here.
    case other = 0
    case accept, acceptEncoding, acceptLanguage, acceptRanges, age, altSvc, authorization
    case cacheControl, cacheStatus, connection, contentEncoding, contentLength, contentLocation
    case contentRange, contentType, cookie, date, etag, expect, expires, forwarded, host
    case ifMatch, ifModifiedSince, ifNoneMatch, ifRange, ifUnmodifiedSince, keepAlive, lastModified
    case location, maxForwards, origin, pragma, proxyAuthenticate, proxyAuthorization, proxyConnection, range
    case referer, server, setCookie, sluiceStripNulls, te, trailer, transferEncoding, upgrade, userAgent, vary, via
    case warning, wwwAuthenticate, xForwardedFor

    /// The name in lower case (empty for ``other``).
    public var lowercaseName: StaticString {
        switch self {
        case .other: ""
        case .accept: "accept"
        case .acceptEncoding: "accept-encoding"
        case .acceptLanguage: "accept-language"
        case .acceptRanges: "accept-ranges"
        case .age: "age"
        case .altSvc: "alt-svc"
        case .authorization: "authorization"
        case .cacheControl: "cache-control"
        case .cacheStatus: "cache-status"
        case .connection: "connection"
        case .contentEncoding: "content-encoding"
        case .contentLength: "content-length"
        case .contentLocation: "content-location"
        case .contentRange: "content-range"
        case .contentType: "content-type"
        case .cookie: "cookie"
        case .date: "date"
        case .etag: "etag"
        case .expect: "expect"
        case .expires: "expires"
        case .forwarded: "forwarded"
        case .host: "host"
        case .ifMatch: "if-match"
        case .ifModifiedSince: "if-modified-since"
        case .ifNoneMatch: "if-none-match"
        case .ifRange: "if-range"
        case .ifUnmodifiedSince: "if-unmodified-since"
        case .keepAlive: "keep-alive"
        case .lastModified: "last-modified"
        case .location: "location"
        case .maxForwards: "max-forwards"
        case .origin: "origin"
        case .pragma: "pragma"
        case .proxyAuthenticate: "proxy-authenticate"
        case .proxyAuthorization: "proxy-authorization"
        case .proxyConnection: "proxy-connection"
        case .range: "range"
        case .referer: "referer"
        case .server: "server"
        case .setCookie: "set-cookie"
        case .sluiceStripNulls: "sluice-strip-nulls"
        case .te: "te"
        case .trailer: "trailer"
        case .transferEncoding: "transfer-encoding"
        case .upgrade: "upgrade"
        case .userAgent: "user-agent"
        case .vary: "vary"
        case .via: "via"
        case .warning: "warning"
        case .wwwAuthenticate: "www-authenticate"
        case .xForwardedFor: "x-forwarded-for"
        }
    }

    /// The code of a name given as bytes, in any case.
    public init(bytes: UnsafeRawBufferPointer) {
        self = FieldCodeTable.shared.code(of: bytes)
    }

    /// The code of `name`, in any case.
    public init(_ name: String) {
        if let code = name.utf8.withContiguousStorageIfAvailable({ FieldCodeTable.shared.code(of: .init($0)) }) {
            self = code
        } else {
            var copy = name
            self = copy.withUTF8 { FieldCodeTable.shared.code(of: .init($0)) }
        }
    }

    /// This code's bit in a set of codes (every case is below 64).
    var bit: UInt64 { 1 << UInt64(rawValue) }
}

/// The listed names as 64-bit words, grouped by length: a name of 8 to 19 bytes is compared as
/// its first 8 bytes, its next 8 and its last 8 (overlapping), a shorter one as one word. Each
/// word has a mask with 0x20 at the letters, so `(word | mask) == lower` ignores the case of
/// letters and of nothing else. Built once, never freed, made of plain pointers so that a lookup
/// retains nothing.
struct FieldCodeTable: @unchecked Sendable {
    static let shared = FieldCodeTable()

    private struct Entry {
        var code: FieldCode
        var words: (UInt64, UInt64, UInt64)
        var masks: (UInt64, UInt64, UInt64)
    }

    private static let longest = 19
    /// Entries sorted by length; `first[n] ..< first[n + 1]` are the names of `n` bytes.
    private let entries: UnsafeMutablePointer<Entry>
    private let first: UnsafeMutablePointer<Int>

    private init() {
        var sorted: [Entry] = []
        for code in FieldCode.allCases where code != .other {
            precondition(code.rawValue < 64, "a FieldCode needs a bit of HTTPFields' presence set")
            let name = code.lowercaseName
            let bytes = UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
            precondition(bytes.count >= 2 && bytes.count <= Self.longest)
            let masks = bytes.map { $0 &- 0x61 < 26 ? UInt8(0x20) : 0 }
            sorted.append(
                Entry(
                    code: code, words: Self.words(bytes),
                    masks: masks.withUnsafeBytes { Self.words($0) }))
        }
        sorted.sort { $0.code.lowercaseName.utf8CodeUnitCount < $1.code.lowercaseName.utf8CodeUnitCount }
        entries = .allocate(capacity: sorted.count)
        entries.initialize(from: sorted, count: sorted.count)
        first = .allocate(capacity: Self.longest + 2)
        var index = 0
        for length in 0...(Self.longest + 1) {
            while index < sorted.count, sorted[index].code.lowercaseName.utf8CodeUnitCount < length { index += 1 }
            first[length] = index
        }
    }

    /// The words a name of `bytes.count` bytes is compared as (zeros where it has none).
    @inline(__always)
    private static func words(_ bytes: UnsafeRawBufferPointer) -> (UInt64, UInt64, UInt64) {
        let count = bytes.count
        if count >= 8 {
            let head = bytes.loadUnaligned(as: UInt64.self)
            let middle = count >= 16 ? bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self) : 0
            let tail = bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            return (head, middle, tail)
        }
        var word: UInt64 = 0
        for index in 0..<count { word |= UInt64(bytes[index]) << UInt64(index * 8) }
        return (word, 0, 0)
    }

    func code(of bytes: UnsafeRawBufferPointer) -> FieldCode {
        let count = bytes.count
        guard count >= 2, count <= Self.longest else { return .other }
        let end = first[count + 1]
        var index = first[count]
        guard index < end else { return .other }
        let words = Self.words(bytes)
        while index < end {
            let entry = entries[index]
            if words.0 | entry.masks.0 == entry.words.0, words.1 | entry.masks.1 == entry.words.1,
                words.2 | entry.masks.2 == entry.words.2
            {
                return entry.code
            }
            index += 1
        }
        return .other
    }
}
