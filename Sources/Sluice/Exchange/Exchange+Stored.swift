import EventIO

/// The driver's part in serving a stored response: the head through the same steps as an
/// origin's (validation, transform), then the body from the cache tiers with backpressure.
extension Exchange {
    /// Answers from a stored response: 304 when the client's own validators match (§4.3.2),
    /// a 206 or 416 for a `Range` on a stored 200 (``ByteRange``), otherwise the stored head with
    /// `Age` and the body from the tiers.
    /// `answersUpstream`: the entry stands for the answer to the request sent upstream.
    func serve(_ entry: CacheStore.Entry, age: Int64, answersUpstream: Bool) {
        guard let cache = env.cache else { return }
        env.stats.cacheHits += 1
        if machine.phase.serving != .revalidated { cache.touch(entry.ref, now: env.clock()) }
        if !answersUpstream, route.rule.accept == nil, route.stripMode == nil, notes.marks.isEmpty,
            request.method == "GET", request.minorVersion == 1, output.keepAlive, !env.isShuttingDown,
            !request.headers.contains("range"), let status = notes.cacheStatus,
            let head = StoredResponse.plainHead(
                entry, age: age, request: request, cacheStatus: status.description, cache: cache)
        {
            // The common hit: the client head comes from memory, only Age and Cache-Status are new.
            output.hold(head, framing: .length)
            output.status = entry.head.status
            return startStoredBody(entry, cache: cache)
        }
        var head = entry.head
        head.headers.set("Age", String(max(0, age)))
        let answered = answersUpstream ? upstreamRequest : nil
        if let accept = route.rule.accept, accept.onReject == .enforce,
            let failure = ResponseValidator.validate(
                head, request: answered ?? forwardRequest, acceptance: accept, rule: route.rule.name)
        {
            return fail(.validationFailed(failure))
        }
        if head.status == 206, let piece = ByteRange.Piece(head.headers) {
            return servePiece(entry, head: head, piece: piece, cache: cache)
        }
        if Revalidation.clientValidatorsMatch(request.headers, stored: head.headers), head.status == 200 {
            deliverHead(StoredResponse.notModified(head), plan: .pass, fromCache: true)
            return deliverEnd()
        }
        // A range of a stored 200 (not under null stripping: the client's representation is then
        // not the stored bytes, so it gets the whole stripped response).
        if request.method == "GET", head.status == 200, route.stripMode == nil, request.headers.contains("range") {
            switch ByteRange.answer(request.headers, stored: head.headers, size: entry.size) {
            case .whole: break
            case .partial(let bytes):
                deliverHead(ByteRange.partialHead(head, bytes: bytes, size: entry.size), plan: .pass, fromCache: true)
                return startStoredBody(entry, cache: cache, range: bytes)
            case .unsatisfiable:
                deliverHead(ByteRange.unsatisfiableHead(head, size: entry.size), plan: .pass, fromCache: true)
                return deliverEnd()
            }
        }
        deliverHead(head, plan: stripPlan(head), fromCache: true)
        if request.method == "HEAD" || output.framing == .none && held == nil { return deliverEnd() }
        startStoredBody(entry, cache: cache)
    }

    /// A stored piece (a `206`) chosen for this `Range`: the bytes asked for, cut from it.
    private func servePiece(_ entry: CacheStore.Entry, head: ResponseHead, piece: ByteRange.Piece, cache: TieredCache) {
        switch ByteRange.answer(request.headers, piece: piece, stored: head.headers) {
        case .partial(let bytes):
            deliverHead(ByteRange.partialHead(head, bytes: bytes, size: piece.complete), plan: .pass, fromCache: true)
            let within = (bytes.lowerBound - piece.first)...(bytes.upperBound - piece.first)
            startStoredBody(entry, cache: cache, range: within)
        case .unsatisfiable:
            deliverHead(ByteRange.unsatisfiableHead(head, size: piece.complete), plan: .pass, fromCache: true)
            deliverEnd()
        case .whole, nil:
            // The machine chose the piece for holding the range; nothing between changed that.
            fail(.upstreamFailed(reason: .badResponse(detail: "the stored piece does not hold the range asked for")))
        }
    }

    func stripPlan(_ head: ResponseHead) -> NullStrippingDelivery.Plan {
        guard route.stripMode != nil else { return .pass }
        return NullStrippingDelivery.plan(for: head, request: request, limit: env.transformLimit)
    }

    private func startStoredBody(_ entry: CacheStore.Entry, cache: TieredCache, range: ClosedRange<Int64>? = nil) {
        storedBody = .entry(StoredResponse.Cursor(entry, cache: cache, range: range))
        pumpStoredBody()
    }

    /// Sends stored body pieces — of a stored entry, or of one being written (read-while-write) —
    /// until the client falls behind (resumed when it drains), the writer must catch up (resumed
    /// when it flushes), or the end. A body that cannot be read whole cuts the connection.
    func pumpStoredBody() {
        guard var reading = storedBody, let cache = env.cache else { return }
        // Bodies kept as files go out without a copy when nothing transforms them.
        let output = output
        let stop = reading.pump(
            from: cache, isBehind: { output.stream.writeBroken || (held == nil && output.isBehind) },
            deliver: { deliverBody($0) },
            deliverFile: held == nil && output.sendsFiles ? { output.deliver(file: $0, range: $1) } : nil)
        storedBody = reading
        switch stop {
        case .stalled:
            output.stall()
        case .caughtUp:
            break  // the writer tells when it flushes the next chunk
        case .ended:
            stopStoredBody()
            deliverEnd()
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
    func serveWhileWritten() {
        guard let writer = live else { return }
        env.stats.cacheHits += 1
        var head = writer.head
        head.headers.set("Age", "0")
        if let accept = route.rule.accept, accept.onReject == .enforce,
            let failure = ResponseValidator.validate(
                head, request: forwardRequest, acceptance: accept, rule: route.rule.name)
        {
            return fail(.validationFailed(failure))
        }
        if Revalidation.clientValidatorsMatch(request.headers, stored: head.headers), head.status == 200 {
            deliverHead(StoredResponse.notModified(head), plan: .pass, fromCache: true)
            return deliverEnd()
        }
        deliverHead(head, plan: stripPlan(head), fromCache: true)
        if output.framing == .none && held == nil { return deliverEnd() }
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
