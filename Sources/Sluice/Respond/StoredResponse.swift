import EventIO

/// Respond, from the cache: the head of a stored response and its body, read out with backpressure.
enum StoredResponse {
    /// Header fields a 304 to the client's own conditional request carries (RFC 9110 §15.4.5).
    static let notModifiedFields = [
        "etag", "cache-control", "content-location", "date", "expires", "vary", "age", "last-modified",
    ]

    /// The 304 that answers a client whose validators match the stored response.
    static func notModified(_ head: ResponseHead) -> ResponseHead {
        var headers = HTTPFields()
        for field in head.headers where notModifiedFields.contains(where: field.hasName) {
            headers.append(line: field)
        }
        return ResponseHead(status: 304, reason: "Not Modified", version: head.version, headers: headers)
    }

    /// The client head of a hit that needs nothing but the stored head — a keep-alive HTTP/1.1
    /// GET, no validation, no stripping, no conditional match (``StoredAnswer/plain``, decided by
    /// the machine), a Content-Length body kept in memory with its Date — made by the general
    /// path (`Forwarding.clientResponse`) once per kept body, then completed here with Age (none
    /// for one just revalidated) and
    /// Cache-Status. `nil`: take the general path.
    static func plainHead(
        _ entry: CacheStore.Entry, age: Int64?, request: ProxyRequest, cacheStatus: CacheStatus, cache: any CacheTier
    ) -> [UInt8]? {
        var template = cache.hotHead(entry.ref)
        if template == nil {
            let stored = entry.head.headers
            guard cache.bodyIsHot(entry.ref), stored.contains(.date), stored.contains(.contentLength),
                !stored.contains(.transferEncoding)
            else { return nil }
            var head = entry.head
            head.headers.remove(.age)
            let (headers, framing) = Forwarding.clientResponse(
                head, request: request, date: "", keepAlive: true, stripped: true)
            guard framing == .length else { return nil }
            var bytes = ResponseWriter.head(status: head.status, reason: head.reason, headers: headers)
            bytes.removeLast(2)  // the empty line: Age and Cache-Status follow
            cache.keepHotHead(bytes, entry: entry.ref)
            template = bytes
        }
        guard let template else { return nil }
        let bound = template.count + "Age: \r\nCache-Status: \r\n\r\n".utf8.count + 20 + cacheStatus.byteBound
        var bytes: [UInt8] = []
        bytes.append(atMost: bound) { out in
            template.withUnsafeBufferPointer { out.put($0) }
            if let age {
                out.put("Age: ")
                out.putDecimal(max(0, age))
                out.put("\r\nCache-Status: ")
            } else {
                out.put("Cache-Status: ")
            }
            cacheStatus.write(into: &out)
            out.put("\r\n\r\n")
        }
        return bytes
    }

    /// How a stored body's pump ended.
    enum Stop {
        /// The client is behind (or gone): resume when it drains.
        case stalled
        /// Every chunk written so far went out: resume when the writer flushes another
        /// (read-while-write only).
        case caughtUp
        /// The whole body went out.
        case ended
        /// The tier lost part of the body (purged meanwhile, unreadable, or given up while it
        /// was written): never fake an end.
        case broken
    }

    /// What a stored body is read from.
    enum Reading {
        /// A complete stored entry.
        case entry(Cursor)
        /// The entry the awaited fetch is writing (read-while-write).
        case whileWritten(LiveCursor)

        /// The pump of whichever cursor it is; `deliverFile`: how a body kept as a file is sent
        /// whole (`nil`: as bytes, like the others).
        mutating func pump(
            from cache: any CacheTier, isBehind: () -> Bool, deliver: (UnsafeRawBufferPointer) -> Bool,
            deliverFile: ((SharedFile, Range<Int>) -> Bool)?
        ) -> Stop {
            switch self {
            case .entry(var cursor):
                defer { self = .entry(cursor) }
                return cursor.pump(from: cache, isBehind: isBehind, deliver: deliver, deliverFile: deliverFile)
            case .whileWritten(var cursor):
                defer { self = .whileWritten(cursor) }
                return cursor.pump(from: cache, isBehind: isBehind, deliver: deliver)
            }
        }
    }

    /// A stored body being read out: from memory when the tier holds it whole, else chunk by chunk.
    struct Cursor {
        let entry: EntryRef
        let size: Int64
        /// The whole body, when kept in memory.
        let bytes: HotBody?
        /// The bytes sent: all of them, or one range (a `206`).
        let window: Range<Int64>
        private var next: Int64 = 0
        /// Body bytes read so far (sent, or skipped before the window).
        private var sent: Int64 = 0
        /// The entry's chunks held while they are read (a body not in memory).
        private let lease: CacheReadLease?

        init(_ entry: CacheStore.Entry, cache: any CacheTier, range: ClosedRange<Int64>? = nil) {
            self.entry = entry.ref
            size = entry.size
            bytes = cache.wholeBody(entry)
            window = range.map { $0.lowerBound..<($0.upperBound + 1) } ?? 0..<entry.size
            if bytes != nil { sent = window.lowerBound }
            lease = bytes == nil ? cache.lease(entry.ref) : nil
        }

        /// Sends pieces until the client falls behind or the end; `deliver` returns `false` when a
        /// piece was not taken. A body kept as a file goes to `deliverFile` in one piece, when given.
        mutating func pump(
            from cache: any CacheTier, isBehind: () -> Bool, deliver: (UnsafeRawBufferPointer) -> Bool,
            deliverFile: ((SharedFile, Range<Int>) -> Bool)? = nil
        ) -> Stop {
            while true {
                if isBehind() { return .stalled }
                if let bytes {
                    // A body held in memory: the rest of it from its file without a copy, or
                    // slices of it, with the same backpressure.
                    let start = Int(sent)
                    let last = min(bytes.count, Int(window.upperBound))
                    guard start < last else { return .ended }
                    if case .file(let file) = bytes, let deliverFile {
                        guard deliverFile(file, start..<last) else { return .stalled }
                        sent = Int64(last)
                        continue
                    }
                    let end = min(last, start + CacheWriter.chunkSize)
                    guard bytes.withUnsafeBytes({ deliver(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }) else {
                        return .stalled
                    }
                    sent = Int64(end)
                    continue
                }
                if sent >= window.upperBound { return .ended }
                guard let chunk = cache.chunk(of: entry, at: next) else { return sent == size ? .ended : .broken }
                // The part of this chunk inside the window (all of it, unless a range is served).
                let start = Int(max(0, window.lowerBound - sent))
                let end = Int(min(Int64(chunk.count), window.upperBound - sent))
                if start < end {
                    guard chunk.withUnsafeBytes({ deliver(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }) else {
                        return .stalled
                    }
                }
                next += 1
                sent += Int64(chunk.count)
            }
        }
    }

    /// An entry read while it is being written (a collapsed waiter's read-while-write): the
    /// chunks flushed so far, then the end once the writer committed.
    struct LiveCursor {
        let writer: CacheWriter
        private var next: Int64 = 0
        /// The entry's chunks held while they are read (past the commit, too).
        private let lease: CacheReadLease

        init(writer: CacheWriter) {
            self.writer = writer
            lease = writer.store.lease(writer.entry)
        }

        mutating func pump(
            from cache: any CacheTier, isBehind: () -> Bool, deliver: (UnsafeRawBufferPointer) -> Bool
        ) -> Stop {
            while true {
                if isBehind() { return .stalled }
                guard next < writer.flushedChunks else {
                    switch writer.progress {
                    case .writing: return .caughtUp
                    case .complete: return .ended
                    case .abandoned: return .broken
                    }
                }
                if writer.progress == .abandoned { return .broken }
                guard let chunk = cache.chunk(of: EntryRef(row: writer.entry), at: next) else { return .broken }
                guard chunk.withUnsafeBytes({ deliver($0) }) else { return .stalled }
                next += 1
            }
        }
    }
}
