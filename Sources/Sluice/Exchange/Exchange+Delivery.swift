import Contract
import EventIO

/// The driver's byte paths: the upstream task's moments become machine events, and the head and
/// body of a response — from the origin or from the cache tiers — go to the client through
/// Validate, Store, Transform and Respond.
extension Exchange: TaskDelegate {
    /// How many interim responses one exchange passes on: Early Hints and Processing come once or
    /// twice; an origin that sends thousands would only fill the client's buffer.
    static let interimLimit = 8

    /// RFC 9110 §15.2: a proxy forwards 1xx responses, but never to an HTTP/1.0 client. The
    /// origin's `100 Continue` answers the client's forwarded expectation: passed on once, and
    /// not at all when the client had one already (Sluice's own, after the origin's silence).
    func task(_ task: UpstreamTask, didReceiveInterim response: ResponseHead) {
        guard self.task === task, !machine.isOrphaned, request.minorVersion >= 1, !output.isHoldingHead,
            notes.interimSent < Exchange.interimLimit
        else { return }
        if response.status == 100 {
            guard request.getsContinue, body.announceContinue() else { return }
        }
        notes.interimSent += 1
        output.interim(Forwarding.clientInterim(response))
    }

    func task(_ task: UpstreamTask, didReceive response: ResponseHead) {
        // The origin answered before it asked for the body (RFC 9110 §10.1.1): the body is never
        // read, so the connection closes after this answer, and says so.
        if body.expectation == .forwarded { output.keepAlive = false }
        // The origin answered while the request body was still coming: what is left of it will
        // not be read as a request, so the connection closes after this answer, and the head says
        // so (RFC 9112 §9.6): an HTTP/1.1 client then sends no more requests on it.
        if !body.isComplete, response.status >= 200, request.wire == .http1 { output.keepAlive = false }
        run(.responseHead(response, now: env.clock()))
    }

    func task(_ task: UpstreamTask, didReceive bytes: UnsafeRawBufferPointer) -> Bool {
        switch machine.bodyRoute {
        case .nowhere: return true  // a 304's, or a 5xx that a stale entry answers
        case .cacheOnly: break
        case .client: guard deliverBody(bytes) else { return false }
        }
        // The cache keeps the origin's bytes exactly, whatever the client gets.
        if let writer, !writer.append(bytes, now: env.clock()) {
            self.writer = nil
            run(.storeEnded)
        }
        return true
    }

    /// The client's socket, when the body goes to it exactly as the origin sent it and nothing
    /// else wants it: not stored, no response stage (contract, transform, breakpoint), no wire
    /// stage (capture, shaping, an injected reset), a plain HTTP/1.1 client, and a fetch that
    /// ends with its client (a collapse leader may go on without it, and its socket with it).
    func task(_ task: UpstreamTask, sinkForSplicing count: Int64) -> Connection? {
        guard self.task === task, case .client = machine.bodyRoute, writer == nil, stages.response == nil,
            stages.wire == nil, !machine.mayBeOrphaned
        else { return nil }
        return output.spliceSink(for: count)
    }

    func task(_ task: UpstreamTask, didSplice count: Int64, whole: Bool) {
        output.spliced(count)
        if whole { env.stats.upstreamSplicedBodies += 1 }
        env.stats.upstreamSplicedBytes += count
    }

    func task(_ task: UpstreamTask, fillBody buffer: UnsafeMutableRawBufferPointer) -> BodyChunk {
        if machine.isOrphaned { return .failed }  // the client, and its request body, are gone
        if request.getsContinue, body.announceContinue() { output.sendContinue() }
        var buffer = buffer
        if outgoing.pace != nil, !body.isComplete {
            // faults.bandwidth: no more than the rate allows; the upload waits for the next slice.
            let allowed = outgoing.pace!.allowance(now: EventLoop.monotonicNanoseconds())
            guard allowed > 0 else {
                waiting.start(.upload, milliseconds: outgoing.pace!.wait)
                return .wait
            }
            buffer = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, allowed)])
        }
        if replay != nil, let count = takeHeldBody(into: buffer) {
            outgoing.contract?.feed(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count]))
            return heldBodySent && refusesLastBytes() ? .failed : .bytes(count)
        }
        let read = body.read(from: client.stream, into: buffer)
        switch read {
        case .bytes(let count):
            let piece = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count])
            outgoing.pace?.spend(count)
            capture?.requestTap?.request(piece)
            outgoing.contract?.feed(piece)
            return refusesLastBytes() ? .failed : .bytes(count)
        case .end:
            client.requestBodyDidEnd()
            if let contract = outgoing.contract, !settleRequestContract(contract) { return .failed }
            return .end
        case .wait:
            if client.inputClosed {
                notes.error = .badRequest(
                    reason: .malformed("the client closed the connection during the request body"))
                return .failed
            }
            return .wait
        case .failure(let failure):
            notes.error = failure
            return .failed
        }
    }

    func task(_ task: UpstreamTask, didReceiveTrailers trailers: HTTPFields) {
        guard self.task === task else { return }
        var fields = trailers
        HopByHop.strip(&fields)
        capture?.trailers = fields
        output.trailers = fields
        client.responseTrailers(fields)
    }

    func task(_ task: UpstreamTask, didCompleteWith failure: SluiceError?) {
        guard self.task === task else { return }
        run(.upstreamCompleted(failure, ownError: notes.error, now: env.clock()))
    }

    // MARK: - Head

    /// Validate (report mode; enforce mode answered in the rule's gate), store or invalidate, then
    /// the response's stages (its contract check, the transform's plan) to the client's head.
    func deliverHead(_ response: ResponseHead, plan: JSONBodyDelivery.Plan, fromCache: Bool) {
        if let accept = route.rule.accept, accept.onReject == .report,
            let failure = ResponseValidator.validate(
                response, request: outgoing.sent ?? forwardRequest, acceptance: accept, rule: route.rule.name)
        {
            notes.marks.append(failure.headerValue)
            notes.validationFailure = failure.detail
            env.stats.validationReported += 1
        }
        if !fromCache { store(response) }
        if case .untouched(let detail) = plan { noteUntouched(detail) }
        output.status = response.status
        if let chain = composeResponseStages(response, plan: plan) {
            stages.response = chain
            chain.head(response)
        } else {
            prepare(response)
        }
        if !fromCache { client.sendHeldHeadAtEndOfTurn() }
    }

    /// The request body's verdict, once: `false` when an enforced contract refuses it (the origin
    /// never sees its end: the transfer is cut before it).
    /// The last bytes of a body whose length was announced (read now, or held for a replay): the
    /// contract's verdict comes before they go, so that an enforced one's origin never has the
    /// whole body (a `required` is only known at the end), and a reported one's reaches the head
    /// (libcurl asks no more of a body whose length it was given: no `.end` is read). `true` when
    /// it refuses them.
    private func refusesLastBytes() -> Bool {
        guard body.isComplete, let contract = outgoing.contract else { return false }
        return !settleRequestContract(contract)
    }

    private func settleRequestContract(_ contract: ContractRun) -> Bool {
        guard contract.outcome == nil, contract.validatesBody || !contract.headViolations.isEmpty else { return true }
        let outcome = contract.finish()
        if case .failed(let failure) = outcome, contract.enforces(failure) {
            record(outcome, of: contract)
            notes.error = .contractViolation(failure)
            return false
        }
        requestVerdict(outcome, of: contract)
        return true
    }

    /// A request's verdict under `requests: report` (`enforce` stops a broken request instead):
    /// counted, marked on the client's head when it has not gone out yet, and kept for the
    /// exchange's record, where it makes the exchange's verdict `failed` whatever the response's.
    func requestVerdict(_ outcome: ContractRun.Outcome, of contract: ContractRun) {
        record(outcome, of: contract)
        guard case .failed(let failure) = outcome else { return }
        notes.requestContractFailure = failure
        notes.marks.append(ContractRun.mark(outcome, rule: contract.rule, direction: contract.direction))
    }

    /// Counters by rule, operation and keyword; the report-mode failure for the record.
    func record(_ outcome: ContractRun.Outcome, of run: ContractRun) {
        env.stats.contractChecked += 1
        guard case .failed(let failure) = outcome else { return }
        env.stats.contractFailed += 1
        // A reported response failure keeps the response out of the cache; a request's does not.
        if run.direction == .response, run.settings.onViolation == .report {
            notes.validationFailure = notes.validationFailure ?? failure.detail
        }
    }

    func store(_ response: ResponseHead) {
        guard let cache = env.cache, let url = route.url, notes.replayed == nil, !notes.requestEdited else { return }
        let now = env.clock()
        let start = ResponseStoring.start(
            response, method: request.method, url: url, key: machine.cacheKey, cache: cache,
            admission: { admission(cache: cache, requestTime: min(machine.phase.fetchRequestTime ?? now, now)) },
            validationFailed: notes.validationFailure != nil,
            now: now)
        var status = notes.cacheStatus ?? .forward(.miss)
        switch start {
        case .none, .invalidated: return
        case .refused(let refusal):
            status.detail = refusal.rawValue
            notes.cacheStatus = status
            run(.storing(.notShareable))
        case .skipped:
            // The file refused the entry (a full disk): the response still goes, and says so.
            status.detail = "store-failed"
            notes.cacheStatus = status
            run(.storing(.failed))
        case .writing(let writer, let shareable):
            self.writer = writer
            status.stored = true
            notes.cacheStatus = status
            run(.storing(shareable ? .shared : .notShareable))
        }
    }

    /// The client head, held for the body's first bytes (a stored head had its hop-by-hop fields
    /// removed when it was stored), through the wire stages.
    func prepare(_ response: ResponseHead) {
        if env.isShuttingDown { output.keepAlive = false }
        sendWire(
            output.clientHead(
                response, request: request, date: env.date.now, fromCache: machine.servesStored,
                cacheStatus: notes.cacheStatus, marks: notes.marks))
    }

    // MARK: - Body

    /// Body bytes for the client; `false` = not taken (the client is behind: retry after it drains).
    func deliverBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if let chain = stages.response { return chain.body(bytes) }
        return sendWire(bytes, .offer)
    }

    /// The body is complete: the stages release what they held, and the framing is closed.
    func deliverEnd() {
        if let chain = stages.response { chain.end() } else { endWire() }
        finishIfDone()
    }
}
