/// `Cache-Control` directives (RFC 9111 §5.2), parsed once per message; unknown ones are ignored.
struct CacheControl: Equatable {
    var noStore = false
    var noCache = false
    var noTransform = false
    var isPrivate = false
    var isPublic = false
    var mustRevalidate = false
    var proxyRevalidate = false
    /// §5.2.2.3: store only if the cache implements the status code's caching rules (then no-store is ignored).
    var mustUnderstand = false
    var onlyIfCached = false
    var maxAge: Int64?
    var sMaxAge: Int64?
    var maxStale: Int64?
    /// `max-stale` without a value: any staleness.
    var maxStaleAny = false
    var minFresh: Int64?
    var staleWhileRevalidate: Int64?
    var staleIfError: Int64?

    init(_ fields: HTTPFields) {
        guard fields.contains(.cacheControl) else { return }
        let lines = fields.fields
        for index in lines.indices where lines[index].code == .cacheControl {
            var value = lines[index].value
            value.withUTF8 { parse($0) }
        }
    }

    /// One field value, byte by byte (no allocation): `name[=token|"quoted"]` items separated by
    /// commas (RFC 9110 §5.6.2, §5.6.4). A quoted string ends at its first `"` not escaped by a
    /// backslash, so what it holds (`foo="a\", max-age=1"`) is never read as directives. An
    /// argument that is no delta-seconds (`max-age=1x`, or whitespace around the `=`, which the
    /// grammar does not allow) makes the directive invalid: a lifetime of 0, stale (§4.2.1).
    private mutating func parse(_ b: UnsafeBufferPointer<UInt8>) {
        let n = b.count
        var i = 0
        func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 }
        while i < n {
            while i < n, isSpace(b[i]) || b[i] == 0x2C { i += 1 }
            let nameStart = i
            while i < n, b[i] != 0x3D, b[i] != 0x2C, !isSpace(b[i]) { i += 1 }
            let name = UnsafeBufferPointer(rebasing: b[nameStart..<i])
            let nameEnd = i
            while i < n, isSpace(b[i]) { i += 1 }
            var hasArgument = false
            var argument: Int64?
            if i < n, b[i] == 0x3D {
                hasArgument = true
                var valid = i == nameEnd
                i += 1
                if i < n, isSpace(b[i]) {
                    valid = false
                    while i < n, isSpace(b[i]) { i += 1 }
                }
                var number: Int64 = 0
                var digits = 0
                var others = 0
                func take(_ c: UInt8) {
                    guard c >= 0x30, c <= 0x39 else { return others += 1 }
                    // Delta-seconds (§1.2.2) saturate at 2^31.
                    number = min(number * 10 + Int64(c - 0x30), 2_147_483_648)
                    digits += 1
                }
                if i < n, b[i] == 0x22 {
                    i += 1
                    while i < n, b[i] != 0x22 {
                        if b[i] == 0x5C, i + 1 < n { i += 1 }  // quoted-pair
                        take(b[i])
                        i += 1
                    }
                    if i < n { i += 1 } else { valid = false }  // no closing quote
                } else {
                    while i < n, b[i] != 0x2C, !isSpace(b[i]) {
                        take(b[i])
                        i += 1
                    }
                }
                if valid, digits > 0, others == 0 { argument = number }
            }
            while i < n, b[i] != 0x2C {
                // Bytes after the argument before the comma (`max-age=1 2`): not delta-seconds.
                if !isSpace(b[i]) { argument = nil }
                i += 1
            }
            apply(name, hasArgument: hasArgument, argument: argument)
        }
    }

    /// A directive given twice counts once, as first given (§4.2.1: "either the first occurrence
    /// should be used or the response should be considered stale"): a later `max-age` cannot
    /// lengthen the lifetime an earlier one set.
    private mutating func apply(_ name: UnsafeBufferPointer<UInt8>, hasArgument: Bool, argument: Int64?) {
        func named(_ literal: StaticString) -> Bool {
            guard name.count == literal.utf8CodeUnitCount else { return false }
            let bytes = literal.utf8Start
            for k in 0..<name.count {
                let c = name[k]
                if (c >= 0x41 && c <= 0x5A ? c | 0x20 : c) != bytes[k] { return false }
            }
            return true
        }
        switch name.count {
        case 6: if named("public") { isPublic = true }
        case 7:
            if named("max-age") {
                if maxAge == nil { maxAge = argument ?? (hasArgument ? 0 : nil) }
            } else if named("private") {
                isPrivate = true
            }
        case 8:
            if named("no-store") {
                noStore = true
            } else if named("no-cache") {
                noCache = true
            } else if named("s-maxage") {
                if sMaxAge == nil { sMaxAge = argument ?? (hasArgument ? 0 : nil) }
            }
        case 9:
            if named("max-stale") {
                if maxStale == nil, !maxStaleAny {
                    if hasArgument { maxStale = argument } else { maxStaleAny = true }
                }
            } else if named("min-fresh") {
                if minFresh == nil { minFresh = argument }
            }
        case 12: if named("no-transform") { noTransform = true }
        case 14: if named("only-if-cached") { onlyIfCached = true }
        case 15:
            if named("must-revalidate") {
                mustRevalidate = true
            } else if named("must-understand") {
                mustUnderstand = true
            }
        case 16: if named("proxy-revalidate") { proxyRevalidate = true }
        case 22: if named("stale-while-revalidate"), staleWhileRevalidate == nil { staleWhileRevalidate = argument }
        default: break
        }
        if name.count == 14, named("stale-if-error"), staleIfError == nil { staleIfError = argument }
    }
}
