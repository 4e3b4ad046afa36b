import EventIO

/// The driver's byte paths: the upstream task's moments become machine events, and the head and
/// body of a response — from the origin or from the cache tiers — go to the client through
/// Validate, Store, Transform and Respond.
extension Exchange: TaskDelegate {
    /// How many interim responses one exchange passes on: Early Hints and Processing come once or
    /// twice; an origin that sends thousands would only fill the client's buffer.
    static let interimLimit = 8

    /// RFC 9110 §15.2: a proxy forwards 1xx responses, but never to an HTTP/1.0 client.
    func task(_ task: UpstreamTask, didReceiveInterim response: ResponseHead) {
        guard self.task === task, !machine.isOrphaned, request.minorVersion >= 1, !output.isHoldingHead,
            notes.interimSent < Exchange.interimLimit
        else { return }
        notes.interimSent += 1
        var headers = response.headers
        headers.remove("content-length")  // a 1xx has no content and says none (RFC 9110 §8.6)
        Forwarding.appendVia(&headers, version: response.version)
        output.interim(ResponseWriter.head(status: response.status, reason: response.reason, headers: headers))
    }

    func task(_ task: UpstreamTask, didReceive response: ResponseHead) {
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

    func task(_ task: UpstreamTask, fillBody buffer: UnsafeMutableRawBufferPointer) -> BodyChunk {
        if machine.isOrphaned { return .failed }  // the client, and its request body, are gone
        if request.expectsContinue, body.announceContinue() { client.stream.write(ResponseWriter.continueResponse) }
        var buffer = buffer
        if uploadPace != nil, !body.isComplete {
            // faults.bandwidth: no more than the rate allows; the upload waits for the next slice.
            let allowed = uploadPace!.allowance(now: EventLoop.monotonicNanoseconds())
            guard allowed > 0 else {
                let timer = paceTimer ?? Timer(loop: env.loop) { [weak self] in self?.task?.resume() }
                paceTimer = timer
                timer.schedule(milliseconds: uploadPace!.wait)
                return .wait
            }
            buffer = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<min(buffer.count, allowed)])
        }
        if replay != nil, let count = takeHeldBody(into: buffer) {
            requestContract?.feed(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count]))
            return .bytes(count)
        }
        let read = body.read(from: client.stream, into: buffer)
        if case .bytes(let count) = read {
            uploadPace?.spend(count)
            recordTap?.request(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count]))
        }
        switch read {
        case .bytes(let count):
            requestContract?.feed(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count]))
            return .bytes(count)
        case .end:
            client.requestBodyDidEnd()
            if let contract = requestContract, contract.validatesBody || !contract.headViolations.isEmpty {
                let outcome = contract.finish()
                record(outcome, of: contract)
                if case .failed(let failure) = outcome {
                    if contract.settings.requests == .enforce {
                        // The origin never sees the end of this body: the transfer is cut before it.
                        notes.error = .contractViolation(failure)
                        return .failed
                    }
                    if notes.contract == nil { notes.contract = outcome }
                    notes.requestContractFailure = failure
                }
            }
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
        client.responseTrailers(fields)
    }

    func task(_ task: UpstreamTask, didCompleteWith failure: SluiceError?) {
        guard self.task === task else { return }
        run(.upstreamCompleted(failure, ownError: notes.error, now: env.clock()))
    }

    // MARK: - Head

    /// Validate (report mode; enforce mode answered in the rule's gate), store or invalidate, then
    /// the transform's plan: hold the body for stripping, or prepare the head for the client.
    func deliverHead(_ response: ResponseHead, plan: JSONBodyDelivery.Plan, fromCache: Bool) {
        if let accept = route.rule.accept, accept.onReject == .report,
            let failure = ResponseValidator.validate(
                response, request: upstreamRequest ?? forwardRequest, acceptance: accept, rule: route.rule.name)
        {
            notes.marks.append(failure.headerValue)
            notes.validationFailure = failure.detail
            env.stats.validationReported += 1
        }
        if !fromCache, let run = contractCheck(response) {
            contract = run
            if run.validatesBody, holdsForVerdict(run, response), !isHold(plan) {
                contractHold = ContractHold(head: response)
                store(response)
                output.status = response.status
                return
            }
            if run.settings.onViolation == .report, !run.headViolations.isEmpty {
                notes.marks.append(ContractRun.mark(.failed(run.headFailure()), rule: run.rule))
            }
        }
        if !fromCache { store(response) }
        switch plan {
        case .pass: break
        case .untouched(let detail): noteUntouched(detail)
        case .hold(let coding):
            held = JSONBodyDelivery(
                transform: route.transform!, limit: env.transformLimit, head: response, coding: coding)
            output.status = response.status
            return
        }
        prepare(response)
        if !fromCache { client.sendHeldHeadAtEndOfTurn() }
    }

    // MARK: - Contract

    /// The contract check of a response from the origin, if its rule has a contract.
    private func contractCheck(_ response: ResponseHead) -> ContractRun? {
        guard route.rule.contract != nil else { return nil }
        let sent = upstreamRequest ?? forwardRequest
        return ContractRun.response(
            response, method: sent.method, url: sent.url, rule: route.rule, limit: env.transformLimit)
    }

    /// Enforce mode holds the body for its verdict; report mode holds a small body whose length
    /// is announced (64 KiB at most), so that its head can say the verdict.
    private func holdsForVerdict(_ run: ContractRun, _ response: ResponseHead) -> Bool {
        let length = response.headers["content-length"].flatMap { Int64($0) }
        if run.settings.onViolation == .enforce {
            if let length, length > Int64(env.transformLimit) {
                run.skipBody(JSONBodyDelivery.tooLarge(env.transformLimit))
                notes.marks.append(ContractRun.mark(.notValidated("body-too-large"), rule: run.rule))
                return false
            }
            return true
        }
        return !response.headers.contains("transfer-encoding") && length.map { $0 <= 65536 } == true
    }

    private func isHold(_ plan: JSONBodyDelivery.Plan) -> Bool {
        if case .hold = plan { return true }
        return false
    }

    /// Counters by rule, operation and keyword; the report-mode failure for the record.
    func record(_ outcome: ContractRun.Outcome, of run: ContractRun) {
        env.stats.contractChecked += 1
        guard case .failed(let failure) = outcome else { return }
        env.stats.contractFailed += 1
        if run.settings.onViolation == .report { notes.validationFailure = notes.validationFailure ?? failure.detail }
    }

    func store(_ response: ResponseHead) {
        guard let cache = env.cache, let url = route.url, notes.replayed == nil else { return }
        let now = env.clock()
        let start = ResponseStoring.start(
            response, method: request.method, url: url, key: machine.cacheKey, cache: cache,
            admission: { admission(cache: cache, now: now) }, validationFailed: notes.validationFailure != nil,
            now: now)
        var status = notes.cacheStatus ?? .forward(.miss)
        switch start {
        case .none, .invalidated: return
        case .refused(let refusal):
            status.detail = refusal.rawValue
            notes.cacheStatus = status
            run(.storing(.notShareable))
        case .skipped:
            run(.storing(.failed))
        case .writing(let writer, let shareable):
            self.writer = writer
            status.stored = true
            notes.cacheStatus = status
            run(.storing(shareable ? .shared : .notShareable))
        }
    }

    /// The client head, held for the body's first bytes (a stored head had its hop-by-hop fields
    /// removed when it was stored).
    private func prepare(_ response: ResponseHead) {
        if env.isShuttingDown { output.keepAlive = false }
        output.prepare(
            response, request: request, date: env.date.now, fromCache: machine.servesStored,
            cacheStatus: notes.cacheStatus, marks: notes.marks)
    }

    private func noteUntouched(_ detail: String) {
        notes.marks.append(JSONBodyDelivery.note(detail, rule: route.matchedName))
        notes.transformNote = "untouched: " + detail
        env.stats.jsonUntouched += 1
    }

    // MARK: - Body

    /// Body bytes for the client; `false` = not taken (the client is behind: retry after it drains).
    func deliverBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if let contract {
            contract.feed(bytes)
            if let hold = contractHold {
                if hold.bytes.count + bytes.count <= env.transformLimit {
                    hold.bytes.append(contentsOf: bytes)
                    return true
                }
                // Past max_transform_body: what was held goes out unvalidated, the rest streams.
                let gaveUp = contractHold.take()!
                contract.skipBody(JSONBodyDelivery.tooLarge(env.transformLimit))
                notes.marks.append(ContractRun.mark(.notValidated("body-too-large"), rule: contract.rule))
                prepare(gaveUp.head)
                gaveUp.bytes.withUnsafeBytes { output.emit($0) }
            }
        }
        if held != nil {
            if held!.append(bytes) { return true }
            // Past max_transform_body: what was held goes out untouched, the rest streams.
            let gaveUp = held.take()!
            noteUntouched(JSONBodyDelivery.tooLarge(gaveUp.limit))
            prepare(gaveUp.head)
            gaveUp.held.withUnsafeBytes { output.emit($0) }
        }
        let taken = output.deliver(bytes)
        if output.resetDue {
            notes.noteFault("reset after \(output.bytesSent) bytes")
            fail(.injected(rule: route.rule.name, status: 0, retryAfter: nil))
            return true
        }
        return taken
    }

    /// The body is complete: release what was held and close the framing.
    func deliverEnd() {
        if let contract {
            let outcome = contract.finish()
            notes.contract = outcome
            record(outcome, of: contract)
            if case .failed(let failure) = outcome, contract.settings.onViolation == .enforce,
                contractHold != nil || held != nil
            {
                contractHold = nil
                held = nil
                return fail(.contractViolation(failure))
            }
            if let hold = contractHold.take() {
                notes.marks.append(ContractRun.mark(outcome, rule: contract.rule))
                prepare(hold.head)
                hold.bytes.withUnsafeBytes { output.emit($0) }
            }
        }
        if let held = held.take() {
            switch held.finish() {
            case .transformed(let head, let body, let removed, let patched, let note):
                if removed > 0 { env.stats.jsonStripped += 1 }
                notes.transformNote = JSONBodyDelivery.summary(removed: removed, patched: patched, note: note)
                if removed > 0 { capture?.strippedPaths = held.removedPaths() }
                prepare(head)
                body.withUnsafeBytes { output.emit($0) }
            case .untouched(let detail):
                if let detail { noteUntouched(detail) }
                prepare(held.head)
                held.held.withUnsafeBytes { output.emit($0) }
            }
        }
        output.end()
        finishIfDone()
    }
}
