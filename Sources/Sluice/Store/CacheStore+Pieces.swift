import SQLite

/// Partial responses (RFC 9111 §3.3, §3.4): a stored `206` is a piece of its representation,
/// kept under its own key (the URL's key and a suffix no URL has) so that only `Range` requests
/// ever see it. A new piece of the same representation (same strong entity tag, same length)
/// that touches or overlaps the stored one is combined with it in the file; pieces that cover
/// the whole representation become a complete `200` under the URL's key.
extension CacheStore {
    /// What follows the URL's key in the key of its pieces (a space: never in a request target).
    static let piecesSuffix = " pieces"

    /// The key the pieces of a URL's responses are stored under.
    static func piecesKey(_ key: String) -> String { key + piecesSuffix }

    /// The URL's key of a key (a pieces key without its suffix).
    static func urlKey(_ key: String) -> String {
        key.hasSuffix(piecesSuffix) ? String(key.dropLast(piecesSuffix.count)) : key
    }

    /// How a new piece and the stored one of its variant come together.
    enum PieceUnion: Equatable {
        /// Not combinable (another representation, a gap between them): the new one replaces.
        case replaces
        /// Combined bytes: each source piece's bytes in the representation's coordinates, in order.
        case combined(ClosedRange<Int64>, parts: [(source: Source, bytes: ClosedRange<Int64>)])

        enum Source: Equatable { case stored, new }

        static func == (lhs: PieceUnion, rhs: PieceUnion) -> Bool {
            switch (lhs, rhs) {
            case (.replaces, .replaces): return true
            case (.combined(let one, let oneParts), .combined(let other, let otherParts)):
                return one == other && oneParts.map(\.source) == otherParts.map(\.source)
                    && oneParts.map(\.bytes) == otherParts.map(\.bytes)
            default: return false
            }
        }
    }

    /// Pure: the union of a stored piece and a new one of the same complete length, the new
    /// piece's bytes taken where they overlap.
    static func union(stored: ByteRange.Piece, new: ByteRange.Piece) -> PieceUnion {
        guard stored.complete == new.complete, stored.first <= new.last + 1, new.first <= stored.last + 1 else {
            return .replaces
        }
        var parts: [(source: PieceUnion.Source, bytes: ClosedRange<Int64>)] = []
        if stored.first < new.first { parts.append((.stored, stored.first...(new.first - 1))) }
        parts.append((.new, new.bytes))
        if stored.last > new.last { parts.append((.stored, (new.last + 1)...stored.last)) }
        return .combined(min(stored.first, new.first)...max(stored.last, new.last), parts: parts)
    }

    /// Commits a written piece (inside ``commit(entry:key:variant:size:headers:ttl:)``'s place):
    /// combined with the stored piece of its variant when they are of one representation and
    /// touch, and made the complete response when together they cover it. One transaction.
    func commitPiece(
        entry: Int64, key: String, variant: String, size: Int64, headers replaced: HTTPFields?, ttl: Int64?
    ) {
        do {
            var headers = try replaced ?? storedHeaders(entry)
            var finalSize = size
            var finalKey = key
            let added = try database.transaction {
                guard let piece = ByteRange.Piece(headers), piece.count == size else {
                    throw PieceError.mismatch
                }
                var old: [(id: Int64, footprint: Int64, headers: HTTPFields)] = []
                let select = try database.prepare(
                    "SELECT id, footprint, headers FROM entries WHERE key=?1 AND variant=?2 AND complete=1"
                )
                try select.bind(key, at: 1)
                try select.bind(variant, at: 2)
                while try select.step() {
                    old.append((select.int64(at: 0), select.int64(at: 1), CacheStore.decode(select.text(at: 2) ?? "")))
                }
                var covered = piece.bytes
                if let stored = old.first, let storedPiece = ByteRange.Piece(stored.headers),
                    ByteRange.sameRepresentation(stored.headers, headers),
                    case .combined(let union, let parts) = CacheStore.union(stored: storedPiece, new: piece),
                    union != piece.bytes
                {
                    try rewriteChunks(
                        of: entry,
                        from: parts.map { ($0.source == .stored ? (stored.id, storedPiece) : (entry, piece), $0.bytes) }
                    )
                    covered = union
                    // The stored piece's fields updated with the new one's (RFC 9111 §3.4): a field
                    // only the older piece had stays.
                    headers = CachePolicy.merge(stored.headers, with: headers)
                }
                var removed: Int64 = 0
                for (id, footprint, _) in old {
                    try deleteRows(id)
                    removed += footprint
                }
                // The pieces of other variants are bounded as complete responses are.
                removed += try dropVariantsBeyondLimit(key: key, keeping: variant)
                finalSize = Int64(covered.count)
                var status: Int64 = 206
                var reason = "Partial Content"
                if covered.lowerBound == 0, covered.upperBound == piece.complete - 1 {
                    // The pieces are the whole representation: the URL's complete response.
                    finalKey = CacheStore.urlKey(key)
                    status = 200
                    reason = "OK"
                    headers.remove(.contentRange)
                    removed += try replaceComplete(key: finalKey, variant: variant)
                } else {
                    headers.set(
                        "Content-Range",
                        ByteRange.Piece(first: covered.lowerBound, last: covered.upperBound, complete: piece.complete)
                            .contentRange)
                }
                headers.set("Content-Length", String(finalSize))
                let mark = try database.prepare(
                    "UPDATE entries SET complete=1, key=?2, status=?3, reason=?4, size=?5, ttl=?6, headers=?7 WHERE id=?1"
                )
                try mark.bind(entry, at: 1)
                try mark.bind(finalKey, at: 2)
                try mark.bind(status, at: 3)
                try mark.bind(reason, at: 4)
                try mark.bind(finalSize, at: 5)
                if let ttl { try mark.bind(ttl, at: 6) }
                try mark.bind(CacheStore.encode(headers), at: 7)
                try mark.step()
                noteStored(key: key)
                noteStored(key: finalKey)
                return try footprint(of: entry) - removed
            }
            totalBytes += added
        } catch {
            warnSkipped(error)
            discard(entry)
            return
        }
        evictIfNeeded()
    }

    /// A piece whose body is not the bytes its `Content-Range` names (never committed).
    enum PieceError: Error { case mismatch }

    /// A row's stored header fields.
    private func storedHeaders(_ entry: Int64) throws(SQLiteError) -> HTTPFields {
        let select = try database.prepare("SELECT headers FROM entries WHERE id=?1")
        try select.bind(entry, at: 1)
        guard try select.step() else { return HTTPFields() }
        return CacheStore.decode(select.text(at: 0) ?? "")
    }

    /// Drops the complete responses of a key's variant that a new one replaces (a commit, a
    /// combined piece, a copy from the shared tier), and the key's oldest other variants beyond
    /// `cache.max_variants` with the new one; inside the caller's transaction.
    /// Returns the bytes they took, for the caller to count once its transaction commits.
    @discardableResult
    func replaceComplete(key: String, variant: String) throws(SQLiteError) -> Int64 {
        let old = try database.prepare(
            "SELECT id, footprint FROM entries WHERE key=?1 AND variant=?2 AND complete=1")
        try old.bind(key, at: 1)
        try old.bind(variant, at: 2)
        return try deleteSelected(old) + (try dropVariantsBeyondLimit(key: key, keeping: variant))
    }

    /// Drops a key's least recently used other variants beyond `cache.max_variants` with
    /// `variant` (whose new response is being stored): inside the caller's transaction; the
    /// bytes they took. A lookup reads every variant of its key, so their number is bounded.
    func dropVariantsBeyondLimit(key: String, keeping variant: String) throws(SQLiteError) -> Int64 {
        let beyond = try database.prepare(
            "SELECT id, footprint FROM entries WHERE key=?1 AND variant<>?2 AND complete=1 ORDER BY last_access DESC, id DESC LIMIT -1 OFFSET ?3"
        )
        try beyond.bind(key, at: 1)
        try beyond.bind(variant, at: 2)
        try beyond.bind(Int64(max(settings.maxVariants - 1, 0)), at: 3)
        return try deleteSelected(beyond)
    }

    /// Deletes the entries a `SELECT id, footprint` names (read whole first: deleting while
    /// stepping would move under it); the bytes they took.
    private func deleteSelected(_ select: Statement) throws(SQLiteError) -> Int64 {
        var rows: [(id: Int64, footprint: Int64)] = []
        while try select.step() { rows.append((select.int64(at: 0), select.int64(at: 1))) }
        var removed: Int64 = 0
        for row in rows {
            try deleteRows(row.id)
            removed += row.footprint
        }
        return removed
    }

    /// Gives `entry` the chunks of `parts` in order, each part a byte range of a source piece's
    /// body (whole chunks copied in the file, chunks cut at a part's edge with `substr`): the
    /// entry's own chunks are first moved out of the way, then dropped.
    private func rewriteChunks(
        of entry: Int64, from parts: [(source: (id: Int64, piece: ByteRange.Piece), bytes: ClosedRange<Int64>)]
    ) throws(SQLiteError) {
        let aside: Int64 = 1 << 40
        let move = try database.prepare("UPDATE chunks SET seq=seq+?2 WHERE entry=?1")
        try move.bind(entry, at: 1)
        try move.bind(aside, at: 2)
        try move.step()
        let lengths = try database.prepare(
            "SELECT seq, length(data) FROM chunks WHERE entry=?1 AND seq>=?2 ORDER BY seq")
        let copy = try database.prepare(
            "INSERT INTO chunks(entry, seq, data) SELECT ?1, ?2, substr(data, ?5, ?6) FROM chunks WHERE entry=?3 AND seq=?4"
        )
        var next: Int64 = 0
        for (source, bytes) in parts {
            // The part in the source body's own offsets.
            let wanted = (bytes.lowerBound - source.piece.first)...(bytes.upperBound - source.piece.first)
            try lengths.bind(source.id, at: 1)
            try lengths.bind(source.id == entry ? aside : 0, at: 2)  // the entry's own: those moved aside
            var offset: Int64 = 0
            var chunks: [(seq: Int64, range: Range<Int64>)] = []
            while try lengths.step() {
                let length = lengths.int64(at: 1)
                chunks.append((lengths.int64(at: 0), offset..<(offset + length)))
                offset += length
            }
            lengths.reset()
            for (seq, range) in chunks {
                let start = max(range.lowerBound, wanted.lowerBound)
                let end = min(range.upperBound, wanted.upperBound + 1)
                guard start < end else { continue }
                try copy.bind(entry, at: 1)
                try copy.bind(next, at: 2)
                try copy.bind(source.id, at: 3)
                try copy.bind(seq, at: 4)
                try copy.bind(start - range.lowerBound + 1, at: 5)  // substr counts from 1
                try copy.bind(end - start, at: 6)
                try copy.step()
                copy.reset()
                next += 1
            }
        }
        let drop = try database.prepare("DELETE FROM chunks WHERE entry=?1 AND seq>=?2")
        try drop.bind(entry, at: 1)
        try drop.bind(aside, at: 2)
        try drop.step()
    }
}
