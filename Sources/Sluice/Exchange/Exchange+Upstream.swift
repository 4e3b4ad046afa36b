import EventIO

/// The upstream task's moments, delivered to the client.
extension Exchange: TaskDelegate {
    /// How many interim responses one exchange passes on: Early Hints and Processing come once or
    /// twice; an origin that sends thousands would only fill the client's buffer.
    static let interimLimit = 8

    /// RFC 9110 §15.2: a proxy forwards 1xx responses, but never to an HTTP/1.0 client.
    func task(_ task: UpstreamTask, didReceiveInterim response: ResponseHead) {
        guard self.task === task, request.minorVersion >= 1, pendingHead == nil, interimSent < Exchange.interimLimit
        else { return }
        interimSent += 1
        var headers = response.headers
        headers.remove("content-length")  // a 1xx has no content and says none (RFC 9110 §8.6)
        Forwarding.appendVia(&headers, version: response.version)
        client.connection.write(ResponseWriter.head(status: response.status, reason: response.reason, headers: headers))
    }

    func task(_ task: UpstreamTask, didReceive response: ResponseHead) {
        if staleFallback != nil, Exchange.errorStatuses.contains(response.status) {
            staleTrigger = response.status  // answered from the stale entry at completion
            return
        }
        if takeRevalidationHead(response) { return }
        deliverHead(response, request: task.currentRequest, fromCache: false)
    }

    /// Steps 4-6 for a response head, from the origin or from the cache.
    /// `upstream` is the request the response answers (`nil`: the request as it would be forwarded).
    func deliverHead(_ response: ResponseHead, request upstream: UpstreamRequest?, fromCache: Bool) {
        let stats = client.server.stats
        // 4. Validate (report mode; enforce mode already answered in the ValidationGate).
        if let accept = rule.accept, accept.onReject == .report,
            let failure = ResponseValidator.validate(
                response, request: upstream ?? forwardRequest, acceptance: accept, rule: rule.name)
        {
            marks.append(failure.headerValue)
            validationFailure = failure.detail
            stats.validationReported += 1
        }
        headFromCache = fromCache
        // Store (misses) or invalidate (unsafe methods), RFC 9111 §3 and §4.4.
        if !fromCache { cacheResponseHead(response, validationFailed: validationFailure != nil) }
        // 5. Transform: decide now, strip at the end of the body.
        if let mode = stripMode {
            let limit = client.server.transformLimit
            switch NullStrippingDelivery.plan(for: response, request: request, limit: limit) {
            case .pass:
                break
            case .untouched(let detail):
                noteUntouched(detail)
            case .hold(let coding):
                stripping = NullStrippingDelivery(mode: mode, limit: limit, head: response, coding: coding)
                status = response.status
                return
            }
        }
        prepareHead(response)
        if !fromCache { client.sendHeldHeadAtEndOfTurn() }
    }

    /// Sends a head still held back for the body (none came in this loop turn).
    func sendHeldHead() {
        guard pendingHead != nil, !finished, !client.connection.writeBroken else { return }
        send()
    }

    /// The head for the client, held back until the first body bytes so that both leave in one write
    /// (or, at the latest, at the end of the loop turn: ``sendHeldHead()``).
    private func prepareHead(_ response: ResponseHead) {
        if client.server.isShuttingDown { keepAlive = false }
        var (headers, framing) = Forwarding.clientResponse(
            response, request: request, date: client.server.date.now, keepAlive: keepAlive,
            stripped: headFromCache)
        if let cacheStatus { headers.append(name: "Cache-Status", value: cacheStatus) }
        if !marks.isEmpty { headers.append(name: "Sluice-Validation", value: marks.joined(separator: ", ")) }
        self.framing = framing
        bodyLength = framing == .length ? headers["content-length"].flatMap { Int64($0) } ?? 0 : 0
        if framing == .close { keepAlive = false }
        status = response.status
        pendingHead = ResponseWriter.head(status: response.status, reason: response.reason, headers: headers)
    }

    private func noteUntouched(_ detail: String) {
        marks.append(NullStrippingDelivery.note(detail, rule: ruleMatched ? rule.name : nil))
        transformNote = "untouched: " + detail
        client.server.stats.jsonUntouched += 1
    }

    /// Writes the held-back head together with `pieces` (at most three), in one system call when
    /// the socket takes them; `more`: more of the body follows (see `Connection.write(_:more:)`).
    private func send(more: Bool = false, _ pieces: UnsafeRawBufferPointer...) {
        let connection = client.connection
        guard let head = pendingHead else {
            switch pieces.count {
            case 0: return
            case 1: connection.write(pieces[0], more: more)
            case 2: connection.write(pieces[0], pieces[1], more: more)
            default: connection.write(pieces[0], pieces[1], pieces[2], more: more)
            }
            return
        }
        pendingHead = nil
        headSent = true
        head.withUnsafeBytes { headBytes in
            switch pieces.count {
            case 0: connection.write(headBytes, more: more)
            case 1: connection.write(headBytes, pieces[0], more: more)
            case 2: connection.write(headBytes, pieces[0], pieces[1], more: more)
            default: connection.write(headBytes, pieces[0], pieces[1], pieces[2], more: more)
            }
        }
    }

    func task(_ task: UpstreamTask, didReceive bytes: UnsafeRawBufferPointer) -> Bool {
        // A 304 has no body to send, and a 5xx answered by a stale entry is not sent.
        if revalidated != nil || staleTrigger != nil { return true }
        guard deliverBody(bytes) else { return false }
        // The cache keeps the origin's bytes exactly, whatever the client gets.
        if cacheWriter != nil { cacheBody(bytes) }
        return true
    }

    /// Body bytes for the client; `false` = not taken (the client is behind: retry after it drains).
    func deliverBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if stripping != nil {
            if stripping!.append(bytes) { return true }
            // Past max_transform_body: what was held goes out untouched, the rest streams.
            let held = stripping!
            stripping = nil
            noteUntouched(NullStrippingDelivery.tooLarge(held.limit))
            prepareHead(held.head)
            held.held.withUnsafeBytes { emit($0) }
        }
        // The client is gone (its error event is on the way): the bytes have nowhere to go.
        if client.connection.writeBroken { return true }
        if client.connection.outputCount >= ClientConnection.outputHighWater {
            pausedForClient = true
            return false
        }
        emit(bytes)
        return true
    }

    /// Sends body bytes in the response's framing.
    func emit(_ bytes: UnsafeRawBufferPointer) {
        switch framing {
        case .none:
            return
        case .chunked:
            guard !bytes.isEmpty else { return send() }
            let size = ResponseWriter.chunkHeader(bytes.count)
            // The last chunk (sent without `more`) follows.
            size.withUnsafeBytes { sizeBytes in
                ResponseWriter.crlf.withUnsafeBytes { crlf in send(more: true, sizeBytes, bytes, crlf) }
            }
        case .length, .close:
            // Body pieces arrive from libcurl 16 KiB at a time: while more is due, the kernel may
            // gather them into full packets. The last piece of a known length goes out at once.
            send(more: framing == .close || bytesSent + Int64(bytes.count) < bodyLength, bytes)
        }
        bytesSent += Int64(bytes.count)
    }

    /// The held body is complete: strip it (or explain why not) and send it.
    private func deliverHeldBody(_ held: NullStrippingDelivery) {
        switch held.finish() {
        case .stripped(let head, let body, let removed):
            client.server.stats.jsonStripped += 1
            transformNote = "stripped \(removed) null(s)"
            prepareHead(head)
            body.withUnsafeBytes { emit($0) }
        case .untouched(let detail):
            if let detail { noteUntouched(detail) }
            prepareHead(held.head)
            held.held.withUnsafeBytes { emit($0) }
        }
    }

    func task(_ task: UpstreamTask, fillBody buffer: UnsafeMutableRawBufferPointer) -> BodyChunk {
        if request.expectsContinue, !continueSent {
            continueSent = true
            client.connection.write(ResponseWriter.continueResponse)
        }
        switch body.read(from: client.connection, into: buffer) {
        case .bytes(let count):
            return .bytes(count)
        case .end:
            client.requestBodyDidEnd()
            return .end
        case .wait:
            if client.inputClosed {
                error = .badRequest(reason: .malformed("the client closed the connection during the request body"))
                return .failed
            }
            waitingForBody = true
            return .wait
        case .failure(let failure):
            error = failure
            return .failed
        }
    }

    func task(_ task: UpstreamTask, didCompleteWith failure: SluiceError?) {
        guard self.task === task else { return }
        if let failure {
            // A request-body failure outranks what libcurl reports about the aborted upload.
            let origin = Exchange.originFailureStatus(failure)
            if error == nil, origin.covered {
                if serveStaleAfterError(upstreamStatus: origin.originStatus ?? staleTrigger) { return }
                if mustRevalidateStale, origin.originStatus == nil {
                    // §5.2.2.2: a stale must-revalidate response is never served without the origin.
                    error = .upstreamFailed(
                        reason: .timedOut(
                            detail:
                                "The stored response must be revalidated (must-revalidate) and the origin failed: \(Problem(failure).detail)"
                        ))
                }
            }
            stripping = nil
            abandonCacheWriter()
            return fail(error ?? failure)
        }
        if let status = staleTrigger, serveStaleAfterError(upstreamStatus: status) { return }
        if let entry = revalidated {
            revalidated = nil
            return serveRevalidated(entry, upstream: task.currentRequest)
        }
        finishCacheWriter(task)
        deliverEnd()
    }

    /// The body is complete: release what was held and close the framing.
    func deliverEnd() {
        if let held = stripping {
            stripping = nil
            deliverHeldBody(held)
        }
        if framing == .chunked {
            ResponseWriter.lastChunk.withUnsafeBytes { send($0) }
        } else {
            send()
        }
        responseComplete = true
        finishIfDone()
    }
}
