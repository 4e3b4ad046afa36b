import EventIO

/// The driver's part in serving a stored response: the head through the same steps as an
/// origin's (validation, transform), then the body from the cache tiers with backpressure.
extension Exchange {
    /// Answers from a stored response in the form the machine chose (``StoredAnswer``): the
    /// driver only writes the head and pumps the body from the tiers.
    func serve(_ entry: CacheStore.Entry, age: Int64, as answer: StoredAnswer) {
        guard let cache = env.cache else { return }
        // A hit answers the request as the origin would have: its contract check first.
        if route.rule.contract?.requests ?? .off != .off, let failure = checkRequestHead(forwardRequest) {
            return fail(.contractViolation(failure))
        }
        env.stats.cacheHits += 1
        dropRequestBody()
        let revalidated = machine.phase.serving == .revalidated
        if !revalidated { cache.touch(entry.ref, now: env.clock()) }
        // A response the origin has just validated for this request goes without Age, unless
        // the 304 had one (RFC 9111 §5.1: Age says it was not validated for this request).
        let age = revalidated && !entry.headers.contains(.age) ? nil : max(0, age)
        // The head with Age, made only off the plain path (a copy of the fields per hit otherwise).
        var head: ResponseHead {
            var head = entry.head
            if let age { head.headers.set("Age", String(age)) }
            return head
        }
        switch answer {
        case .plain:
            // The common hit: the client head comes from memory, only Age and Cache-Status are
            // new (when this connection stays open and the head is kept).
            if output.keepAlive, !env.isShuttingDown, notes.marks.isEmpty, stages.wire == nil || stages.onlyCaptures,
                output.writesBytes, !mayPauseResponse,
                let status = notes.cacheStatus,
                let plain = StoredResponse.plainHead(
                    entry, age: age, request: request, cacheStatus: status, cache: cache)
            {
                sendWire(WireHead(form: .bytes(plain), framing: .length, status: entry.status, bodyLength: 0))
                return startStoredBody(entry, cache: cache)
            }
            serveWhole(entry, head: head, plan: .pass, cache: cache)
        case .whole(let plan):
            serveWhole(entry, head: head, plan: plan, cache: cache)
        case .notModified:
            deliverHead(StoredResponse.notModified(head), plan: .pass, fromCache: true)
            deliverEnd()
        case .range(let bytes):
            deliverHead(ByteRange.partialHead(head, bytes: bytes, size: entry.size), plan: .pass, fromCache: true)
            startStoredBody(entry, cache: cache, range: bytes)
        case .piece(let bytes, let within, let complete):
            deliverHead(ByteRange.partialHead(head, bytes: bytes, size: complete), plan: .pass, fromCache: true)
            startStoredBody(entry, cache: cache, range: within)
        case .unsatisfiable(let complete):
            deliverHead(ByteRange.unsatisfiableHead(head, size: complete), plan: .pass, fromCache: true)
            deliverEnd()
        }
    }

    /// The stored head with `Age`, then the body from the tiers.
    private func serveWhole(
        _ entry: CacheStore.Entry, head: ResponseHead, plan: JSONBodyDelivery.Plan, cache: any CacheTier
    ) {
        deliverHead(head, plan: plan, fromCache: true)
        if request.method == "HEAD" || output.framing == .none && stages.response == nil { return deliverEnd() }
        startStoredBody(entry, cache: cache)
    }

    private func startStoredBody(_ entry: CacheStore.Entry, cache: any CacheTier, range: ClosedRange<Int64>? = nil) {
        storedBody = .entry(StoredResponse.Cursor(entry, cache: cache, range: range))
        pumpStoredBody()
    }

    /// Sends stored body pieces — of a stored entry, or of one being written (read-while-write) —
    /// until the client falls behind (resumed when it drains), the writer must catch up (resumed
    /// when it flushes), or the end. A body that cannot be read whole cuts the connection.
    func pumpStoredBody() {
        guard var reading = storedBody, let cache = env.cache else { return }
        // Bodies kept as files go out without a copy when nothing transforms them.
        let (output, capture) = (output, capture)
        let stop = reading.pump(
            from: cache, isBehind: { output.stream.writeBroken || (stages.response == nil && output.isBehind) },
            deliver: { deliverBody($0) },
            deliverFile: stages.response == nil && (stages.wire == nil || stages.onlyCaptures) && output.sendsFiles
                ? { file, range in
                    guard output.deliver(file: file, range: range) else { return false }
                    capture?.append(UnsafeRawBufferPointer(rebasing: file.bytes[range]))
                    return true
                } : nil)
        storedBody = reading
        switch stop {
        case .stalled:
            output.stall()
        case .caughtUp:
            break  // the writer tells when it flushes the next chunk
        case .ended:
            stopStoredBody()
            deliverEnd()
        case .broken where !output.headSent && output.bytesSent == 0:
            // Nothing of it went out (a purge came first): the client is told so, and may ask again.
            stopStoredBody()
            fail(.unavailable(reason: .storedResponseGone))
        case .broken:
            stopStoredBody()
            notes.error = .upstreamFailed(
                reason: .badResponse(
                    detail: "the stored body could not be read whole (purged, unreadable, or given up while written)"))
            finish(closeConnection: true)
        }
    }

    /// No more stored body goes out (the end, or the client left).
    func stopStoredBody() {
        if case .whileWritten(let cursor) = storedBody { cursor.writer.unwatch(self) }
        storedBody = nil
    }
}

// MARK: - Read-while-write

extension Exchange {
    /// Serves the entry the awaited fetch is writing (``live``): its stored head at once, then its
    /// chunks as they are flushed, with the client's backpressure; the end when it is committed.
    /// An entry given up midway cuts the connection (its head was sent): never a short body
    /// passed off as whole.
    func serveWhileWritten(_ writer: CacheWriter, as answer: StoredAnswer) {
        env.stats.cacheHits += 1
        dropRequestBody()
        var head = writer.head
        head.headers.set("Age", "0")
        let plan: JSONBodyDelivery.Plan
        switch answer {
        case .notModified:
            deliverHead(StoredResponse.notModified(head), plan: .pass, fromCache: true)
            return deliverEnd()
        case .whole(let chosen): plan = chosen
        case .plain, .range, .piece, .unsatisfiable: plan = .pass  // not chosen for a response being written
        }
        deliverHead(head, plan: plan, fromCache: true)
        if output.framing == .none && stages.response == nil { return deliverEnd() }
        // The head goes at once, as the fetch's own client's does: the body follows as it is
        // flushed, and an entry given up midway is a cut the client sees, never a silent close.
        client.sendHeldHeadAtEndOfTurn()
        storedBody = .whileWritten(StoredResponse.LiveCursor(writer: writer))
        let loop = env.loop
        writer.watch(self) { [weak self] in
            loop.callSoon { self?.pumpStoredBody() }
        }
        pumpStoredBody()
    }
}

extension ExchangePhase {
    /// Which stored answer is being served, if one is.
    var serving: Serving? { if case .servingStored(let serving) = self { serving } else { nil } }
}

extension Exchange {
    /// Whether a response breakpoint fits this request (a plain hit then takes the general path,
    /// where the breakpoint stage is).
    var mayPauseResponse: Bool {
        guard env.breakpoints.pausesResponses, let url = route.url else { return false }
        return !env.breakpoints.candidates(
            for: .response, method: request.method, host: url.host, path: url.pathAndQuery, fields: request.headers
        ).isEmpty
    }
}
