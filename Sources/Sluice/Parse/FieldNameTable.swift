#if canImport(Glibc)
    import Glibc
#endif

/// The field names most messages carry, as `String`s made once: a parser that meets one exactly
/// as written here (the usual capitalization, or all lower case) takes it instead of making and
/// checking a new `String` for every line of every head.
enum FieldNameTable {
    /// The name written as `bytes`, whose code is `code` (the table's `String` when it is one of them).
    static func name(_ bytes: UnsafeRawBufferPointer, code: FieldCode) -> String {
        if code != .other, let name = name(bytes, code) { return name }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The table's `String` for a name of `code` written exactly as `bytes`, or `nil`.
    private static func name(_ bytes: UnsafeRawBufferPointer, _ code: FieldCode) -> String? {
        switch code {
        case .age: pick(bytes, "Age", "age")
        case .via: pick(bytes, "Via", "via")
        case .date: pick(bytes, "Date", "date")
        case .host: pick(bytes, "Host", "host")
        case .vary: pick(bytes, "Vary", "vary")
        case .etag: pick(bytes, "ETag", "etag")
        case .server: pick(bytes, "Server", "server")
        case .accept: pick(bytes, "Accept", "accept")
        case .cookie: pick(bytes, "Cookie", "cookie")
        case .expires: pick(bytes, "Expires", "expires")
        case .location: pick(bytes, "Location", "location")
        case .connection: pick(bytes, "Connection", "connection")
        case .userAgent: pick(bytes, "User-Agent", "user-agent")
        case .keepAlive: pick(bytes, "Keep-Alive", "keep-alive")
        case .setCookie: pick(bytes, "Set-Cookie", "set-cookie")
        case .contentType: pick(bytes, "Content-Type", "content-type")
        case .cacheControl: pick(bytes, "Cache-Control", "cache-control")
        case .lastModified: pick(bytes, "Last-Modified", "last-modified")
        case .acceptRanges: pick(bytes, "Accept-Ranges", "accept-ranges")
        case .contentLength: pick(bytes, "Content-Length", "content-length")
        case .acceptEncoding: pick(bytes, "Accept-Encoding", "accept-encoding")
        case .contentEncoding: pick(bytes, "Content-Encoding", "content-encoding")
        case .transferEncoding: pick(bytes, "Transfer-Encoding", "transfer-encoding")
        default: nil
        }
    }

    /// `usual` or `lower` (literals: no allocation to return them) when `bytes` is one of them;
    /// both have `bytes.count` bytes.
    private static func pick(_ bytes: UnsafeRawBufferPointer, _ usual: String, _ lower: String) -> String? {
        if same(bytes, usual) { return usual }
        if same(bytes, lower) { return lower }
        return nil
    }

    private static func same(_ bytes: UnsafeRawBufferPointer, _ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { memcmp(bytes.baseAddress!, $0.baseAddress!, bytes.count) == 0 }
            ?? text.utf8.elementsEqual(bytes)
    }
}
