#if canImport(Glibc)
    import Glibc
#endif

/// The field names most messages carry, as `String`s made once: a parser that meets one exactly
/// as written here (the usual capitalization, or all lower case) takes it instead of making and
/// checking a new `String` for every line of every head.
enum FieldNameTable {
    /// The table's `String` for a name written exactly as `bytes`, or `nil`.
    static func name(_ bytes: UnsafeRawBufferPointer) -> String? {
        switch bytes.count {
        case 3: return pick(bytes, "Age", "age") ?? pick(bytes, "Via", "via")
        case 4: return pick(bytes, "Date", "date") ?? pick(bytes, "Host", "host") ?? pick(bytes, "Vary", "vary")
        case 6:
            return pick(bytes, "Server", "server") ?? pick(bytes, "Accept", "accept")
                ?? pick(bytes, "Cookie", "cookie")
        case 7: return pick(bytes, "Expires", "expires")
        case 8: return pick(bytes, "Location", "location")
        case 10:
            return pick(bytes, "Connection", "connection") ?? pick(bytes, "User-Agent", "user-agent")
                ?? pick(bytes, "Keep-Alive", "keep-alive") ?? pick(bytes, "Set-Cookie", "set-cookie")
        case 12: return pick(bytes, "Content-Type", "content-type")
        case 13:
            return pick(bytes, "Cache-Control", "cache-control") ?? pick(bytes, "Last-Modified", "last-modified")
                ?? pick(bytes, "Accept-Ranges", "accept-ranges")
        case 14: return pick(bytes, "Content-Length", "content-length")
        case 15: return pick(bytes, "Accept-Encoding", "accept-encoding")
        case 16: return pick(bytes, "Content-Encoding", "content-encoding")
        case 17: return pick(bytes, "Transfer-Encoding", "transfer-encoding")
        default: return nil
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
