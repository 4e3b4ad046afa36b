import EventIO

/// An exchange's delivery chains (``DeliveryChain``), composed from its rule and what watches
/// it: `nil` where it has no stage, and then the response goes straight to its output.
struct ExchangeStages {
    /// The response as the origin or the cache gave it: contract check, JSON transform.
    var response: DeliveryChain<ResponseHead>?
    /// The client's head and body before its framing: injected reset, capture, shaping.
    var wire: DeliveryChain<WireHead>?

    /// The response's contract check, when its rule has one.
    var contract: ContractRun? { response?.stage(ContractStage.self)?.run }

    /// Whether the only wire stage keeps a copy for a watcher: a plain hit's head from memory and
    /// a stored body sent from its file may still go out as they are (the capture is told).
    var onlyCaptures: Bool { wire.map { $0.stages.count == 1 && $0.stages[0] is CaptureStage } ?? false }

    /// Whether a fault shapes or cuts what is written (`faults.bandwidth`, `faults.reset`).
    var shapesOrCuts: Bool { wire?.stage(ShapeStage.self) != nil || wire?.stage(ResetStage.self) != nil }
}

extension Exchange {
    /// The wire stages, at the start: a rule's injected reset, the capture for a watcher or the
    /// recording, a rule's bandwidth.
    func composeWireStages(faults plan: FaultPlan?) {
        var wire: [any DeliveryStage<WireHead>] = []
        if let after = plan?.resetAfter { wire.append(ResetStage(after: after, rule: route.rule.name)) }
        if let capture { wire.append(CaptureStage(capture)) }
        if let rate = plan?.bytesPerSecond {
            wire.append(ShapeStage(loop: env.loop, bytesPerSecond: rate, stream: client.stream))
        }
        if !wire.isEmpty { stages.wire = DeliveryChain(wire, sink: WireSink(self)) }
    }

    /// The response stages for a final head: its contract check (a stored response's too: the
    /// client gets it, and the contract may have changed since it was stored; a run's report
    /// counts hits as it counts fetches), then the JSON transform the plan holds for.
    func composeResponseStages(_ response: ResponseHead, plan: JSONBodyDelivery.Plan)
        -> DeliveryChain<ResponseHead>?
    {
        let transforms: Bool
        if case .hold = plan, route.transform != nil { transforms = true } else { transforms = false }
        let checks = Self.hasContract(route.rule)
        // Most exchanges have no stage: no array is made for them.
        guard checks || transforms || env.breakpoints.pausesResponses else { return nil }
        var stages: [any DeliveryStage<ResponseHead>] = []
        if checks {
            let sent = outgoing.sent ?? forwardRequest
            if let run = ContractRun.response(
                response, method: sent.method, url: sent.url, rule: route.rule, limit: env.transformLimit)
            {
                stages.append(
                    ContractStage(run, limit: env.transformLimit, heldLater: transforms, budget: env.heldBodies))
            }
        }
        if case .hold(let coding) = plan, let transform = route.transform {
            stages.append(
                TransformStage(
                    transform, limit: env.transformLimit, coding: coding, listsPaths: capture != nil,
                    budget: env.heldBodies))
        }
        if env.breakpoints.pausesResponses, let stage = breakpointStage() { stages.append(stage) }
        return stages.isEmpty ? nil : DeliveryChain(stages, sink: ResponseSink(self))
    }

    /// The response breakpoints this exchange's request fits, as the last response stage (the
    /// person sees what the client would get).
    private func breakpointStage() -> BreakpointStage? {
        // Matched on the client's request, as rules are.
        guard let url = route.url else { return nil }
        let points = env.breakpoints.candidates(
            for: .response, method: request.method, host: url.host, path: url.pathAndQuery, fields: request.headers)
        guard !points.isEmpty else { return nil }
        let sent = outgoing.sent
        let shown = PausedMessage(
            method: sent?.method ?? request.method, url: (sent?.url ?? url).description,
            headers: (sent?.headers ?? request.headers).map { ($0.name, ExchangeCapture.shownValue($0)) })
        let (book, id, rule) = (env.breakpoints, id, route.rule.contract != nil ? route.rule.name : nil)
        return BreakpointStage(
            points, limit: env.transformLimit, budget: env.heldBodies, headOnly: request.method == "HEAD",
            pause: { [weak self] point, response, stage in
                let item = book.pause(
                    exchange: id, stage: .response, breakpoint: point.name, request: shown, response: response,
                    contractRule: rule, target: stage)
                item?.owner = self
                return item
            },
            closeClient: { [weak self] name in self?.abortAtBreakpoint(name, closing: true) })
    }

    /// The client's head, through the wire stages.
    func sendWire(_ head: WireHead) {
        if let wire = stages.wire { return wire.head(head) }
        output.hold(head)
    }

    /// Body bytes for the client, through the wire stages; `false` = not taken (offered again
    /// after the client drained).
    func sendWire(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush) -> Bool {
        guard let wire = stages.wire else { return output.take(bytes, push) }
        let taken = wire.body(bytes, push)
        if !taken { output.stall() }
        return taken
    }

    func endWire() {
        if let wire = stages.wire { return wire.end() }
        output.end()
    }

    /// A response a person edited or wrote at a breakpoint, checked against the rule's contract
    /// as the origin's was: its verdict replaces the origin's on the client's head, in the log
    /// and in `/events` (the head said `passed` for a body that no longer went out).
    private func recheckContract(_ head: ResponseHead, _ body: [UInt8]) {
        guard route.rule.contract != nil else { return }
        let sent = outgoing.sent ?? forwardRequest
        // The origin's verdict under this rule (passed, failed, or not validated and why) goes;
        // a request's (`request-contract`) stays.
        let ofRule = "rule=" + StructuredField.quote(route.rule.name)
        notes.marks.removeAll { $0.hasSuffix(ofRule) && !$0.contains("reason=\"request-contract\"") }
        guard
            let run = ContractRun.response(
                head, method: sent.method, url: sent.url, rule: route.rule, limit: env.transformLimit)
        else {
            notes.contract = nil
            return
        }
        body.withUnsafeBytes { run.feed($0) }
        let outcome = run.finish()
        notes.contract = outcome
        notes.marks.append(ContractRun.mark(outcome, rule: run.rule))
    }

    /// What a stage said about the exchange.
    func noted(_ note: DeliveryNote) {
        switch note {
        case .mark(let mark): notes.marks.append(mark)
        case .verdict(let outcome, let run):
            notes.contract = outcome
            record(outcome, of: run)
        case .rejected(let head, let body):
            guard let capture, capture.requestTap != nil else { return }
            capture.rejected = (
                head.status, ResponseWriter.head(status: head.status, reason: head.reason, headers: head.headers), body
            )
        case .cut(let head, let rest):
            guard let capture, capture.requestTap != nil else { return }
            capture.rejected = (
                head.status, ResponseWriter.head(status: head.status, reason: head.reason, headers: head.headers),
                capture.body + rest
            )
        case .transformed(let summary, let stripped, let paths):
            if stripped { env.stats.jsonStripped += 1 }
            notes.transformNote = summary
            if !paths.isEmpty { capture?.strippedPaths = paths }
        case .untouched(let detail): noteUntouched(detail)
        case .fault(let what): notes.noteFault(what)
        case .breakpoint(let what): notes.noteBreakpoint(what)
        case .pausedFor(let seconds): notes.paused.response += seconds
        case .breakpointReceived(let original): notes.breakpointReceived = original
        case .breakpointSent(let head, let body): recheckContract(head, body)
        case .progress:
            // A shaper's slice: the source may go on, and the last one completes the response.
            guard !hasFinished else { return }
            clientDrained()
            finishIfDone()
        }
    }

    func noteUntouched(_ detail: String) {
        notes.marks.append(JSONBodyDelivery.note(detail, rule: route.matchedName))
        notes.transformNote = "untouched: " + detail
        env.stats.jsonUntouched += 1
    }

    /// A whole answer written at once (a problem, a local answer): kept for a watcher, then written.
    func answerWhole(_ head: ResponseHead, body: [UInt8], bodyBytes: Int64) {
        if let capture { capture.whole(head: ResponseWriter.head(head), body: body) }
        output.complete(head, body: body, bodyBytes: bodyBytes)
    }
}

/// The response chain's end: the client's head is made from what the stages pass on.
final class ResponseSink: DeliverySink {
    unowned let exchange: Exchange

    init(_ exchange: Exchange) { self.exchange = exchange }

    func head(_ head: ResponseHead) { exchange.prepare(head) }
    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush) -> Bool { exchange.sendWire(bytes, push) }
    func end() { exchange.endWire() }
    func fail(_ failure: SluiceError) { exchange.fail(failure) }
    func note(_ note: DeliveryNote) { exchange.noted(note) }
}

/// The wire chain's end: the exchange's output, which frames and writes.
final class WireSink: DeliverySink {
    unowned let exchange: Exchange

    init(_ exchange: Exchange) { self.exchange = exchange }

    func head(_ head: WireHead) { exchange.output.hold(head) }
    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush) -> Bool { exchange.output.take(bytes, push) }
    func end() { exchange.output.end() }
    func fail(_ failure: SluiceError) { exchange.fail(failure) }
    func note(_ note: DeliveryNote) { exchange.noted(note) }
}
