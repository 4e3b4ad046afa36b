import SQLite

/// `sluice cache search`: URLs, header fields and bodies, the bodies streamed.
extension CacheInspector {
    /// Where ``search(_:in:limit:now:)`` looks.
    public enum Place: String, Sendable, CaseIterable { case url, headers, body }

    /// Entries whose URL, header fields or body contain `text` (bodies as stored, compressed
    /// ones decoded up to `decodeLimit`), streamed chunk by chunk: memory stays flat whatever
    /// the size of the cache. Returns each match with where it was found.
    public func search(
        _ text: String, in places: Set<Place>, limit: Int, now: Double,
        decode: (_ coding: String, _ body: [UInt8]) -> [UInt8]? = { _, _ in nil }
    ) throws -> [(entry: Entry, places: [Place])] {
        let needle = Array(text.utf8)
        guard !needle.isEmpty else { return [] }
        let lowered = text.lowercased()
        let statement = try database.prepare(
            "SELECT \(columns) FROM entries WHERE complete=1 ORDER BY last_access DESC, id DESC")
        var found: [(Entry, [Place])] = []
        while try statement.step(), found.count < limit {
            let entry = entry(statement, now: now)
            var matched: [Place] = []
            if places.contains(.url), entry.url.lowercased().contains(lowered) { matched.append(.url) }
            if places.contains(.headers),
                entry.headers.contains(where: { ($0.name + ": " + $0.value).lowercased().contains(lowered) })
            {
                matched.append(.headers)
            }
            if places.contains(.body), try bodyContains(needle, entry: entry, decode: decode) { matched.append(.body) }
            if !matched.isEmpty { found.append((entry, matched)) }
        }
        return found
    }

    /// Whether the stored body holds `needle`, read one chunk at a time (a match may span two).
    private func bodyContains(
        _ needle: [UInt8], entry: Entry, decode: (String, [UInt8]) -> [UInt8]?
    ) throws -> Bool {
        if let coding = entry.headers[.contentEncoding], entry.size <= CacheInspector.decodeLimit {
            var whole: [UInt8] = []
            try body(of: entry.id) { whole.append(contentsOf: $0) }
            let decoded = decode(coding, whole) ?? whole
            return CacheInspector.find(needle, in: decoded[...])
        }
        var carry: [UInt8] = []
        var hit = false
        let statement = try database.prepare("SELECT data FROM chunks WHERE entry=?1 ORDER BY seq")
        try statement.bind(entry.id, at: 1)
        while !hit, try statement.step() {
            let window = carry + statement.blob(at: 0)
            hit = CacheInspector.find(needle, in: window[...])
            carry = Array(window.suffix(needle.count - 1))
        }
        return hit
    }

    /// Compressed bodies larger than this are searched as stored.
    public static let decodeLimit: Int64 = 16 << 20

    static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Bool {
        guard needle.count <= haystack.count, let first = needle.first else { return needle.isEmpty }
        var index = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while index <= last {
            if haystack[index] == first, haystack[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}
