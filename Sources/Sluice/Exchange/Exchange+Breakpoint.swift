import Codec
import EventIO
import TLS

/// Request breakpoints: a matching request is read whole (bounded by `limits.max_transform_body`)
/// before anything is sent upstream, shown in the Paused list, and goes on as a person decides
/// (``PauseDecision``). Response breakpoints are a delivery stage (``BreakpointStage``).
extension Exchange: PauseTarget {
    /// Reads the request body (when there is one) to match body conditions and to show it.
    func readForBreakpoint(_ points: [Breakpoint], _ upstream: UpstreamRequest) {
        let tap = RecordingTap(limit: Int.max)
        replay = .gathering(tap, for: .breakpoint(points, upstream))
        if body.isComplete { return bodyRead([], whole: true, points: points, upstream: upstream) }
        gatherRequestBody()
    }

    /// The body is read (or too large to hold): pause when a breakpoint still fits.
    func bodyRead(_ bytes: [UInt8], whole: Bool, points: [Breakpoint], upstream: UpstreamRequest) {
        // Read for the breakpoint: sent first. (A replayed request keeps its recording's answer.)
        if case .gathering = replay { replay = .forwarding(held: bytes, sent: 0) }
        guard whole else {
            notes.noteBreakpoint("request not paused at \(points[0].name): its body is larger than max_transform_body")
            return send(upstream)
        }
        // A compressed body (`Content-Encoding: gzip`) is matched and shown decoded, as a
        // response's is.
        let decoded = Exchange.decodedBody(bytes, headers: upstream.headers, limit: env.transformLimit)
        let content = decoded?.body ?? bytes
        guard let point = points.first(where: { !$0.readsBody || $0.matchesBody(content) }) else {
            return send(upstream)
        }
        var shown = PausedMessage(
            method: upstream.method, url: upstream.url.description,
            headers: upstream.headers.map { ($0.name, $0.value) },
            body: content)
        shown.decodedFrom = decoded?.coding
        guard
            env.breakpoints.pause(
                exchange: id, stage: .request, breakpoint: point.name, request: shown, response: nil,
                contractRule: route.rule.contract != nil ? route.rule.name : nil, target: self) != nil
        else { return send(upstream) }
        notes.noteBreakpoint("request paused at \(point.name)")
        outgoing.sent = upstream
    }

    /// A person decided about the paused request.
    /// Whether a breakpoint holds this exchange now (a person decides what it does).
    var isPausedAtBreakpoint: Bool {
        notes.breakpoint != nil && env.breakpoints.paused.contains { $0.exchange == id }
    }

    func resolve(_ decision: PauseDecision, of item: PausedItem) {
        guard !hasFinished, var upstream = outgoing.sent else { return }
        notes.paused.request += item.held
        let held: [UInt8]
        switch replay {
        case .forwarding(let body, _), .answering(_, let body): held = body
        case nil, .gathering: return
        }
        switch decision {
        case .timedOut where client.inputClosed:
            // Nobody waits for it any more: not sent.
            notes.noteBreakpoint("timed out; the client had left, not sent")
            notes.error = .breakpointAborted(breakpoint: item.breakpoint)
            finish(closeConnection: true)
        case .resume(nil), .timedOut:
            notes.noteBreakpoint(decision.isTimeout ? "timed out, resumed unchanged" : "resumed")
            send(upstream)
        case .resume(let edit?):
            let decoded = Exchange.decodedBody(held, headers: upstream.headers, limit: env.transformLimit)
            switch Exchange.apply(edit, to: &upstream, body: held, decoded: decoded) {
            case .failure(let failure): return fail(failure)
            case .success(let body):
                if edit.url != nil {
                    // Another URL is reached as its own rule says (trust, pins, parent), as a
                    // composed request is.
                    let rule = env.rules.resolve(
                        method: upstream.method, host: upstream.url.host, path: upstream.url.pathAndQuery
                    ).rule
                    upstream.trust = rule.tls
                    upstream.parent = env.parents.parent(
                        host: upstream.url.host, https: upstream.url.scheme == "https", rule: rule.proxy)
                }
                notes.noteBreakpoint("edited, resumed")
                notes.requestEdited = true
                notes.breakpointSent = PausedMessage(
                    method: upstream.method, url: upstream.url.description,
                    headers: upstream.headers.map { ($0.name, $0.value) }, body: body)
                // A revalidation's own conditions go: the edited request's answer must not
                // refresh the client's stored entry.
                for name in ["if-none-match", "if-modified-since"] where forwardRequest.headers[name] == nil {
                    upstream.headers.remove(name)
                }
                // A replayed request (answered, or missed and forwarded): the recording is asked again.
                if env.replayBook != nil { return rematchReplay(upstream, body: body, edit: edit) }
                replay = .forwarding(held: body, sent: 0)
                send(upstream)
            }
        case .abort(let closing):
            notes.noteBreakpoint(closing ? "aborted, connection closed" : "aborted")
            forgetReplayAnswer()
            abortAtBreakpoint(item.breakpoint, closing: closing)
        case .answer(let answer):
            notes.noteBreakpoint("answered")
            forgetReplayAnswer()
            notes.mapping = "breakpoint"
            let (head, body) = Exchange.answerHead(answer, date: env.date.now, keepAlive: output.keepAlive)
            let headOnly = request.method == "HEAD"
            answerWhole(head, body: headOnly ? [] : body, bodyBytes: headOnly ? 0 : Int64(body.count))
            finishIfDone()
        }
    }

    /// A replayed request edited at a breakpoint: the recording answers the edited request when it
    /// holds one for it; otherwise `replay.on_miss` decides (a `504`, or the origin). It is matched
    /// as the recording keeps requests, the client's, with only what the person changed (never the
    /// fields or URL a rule's rewrite or mapping made). Each exchange counts once, as served or
    /// missed, by how it ends.
    private func rematchReplay(_ upstream: UpstreamRequest, body: [UInt8], edit: PausedMessage) {
        guard let book = env.replayBook else { return }
        var served = false
        if case .answering = replay { served = true }
        let digest = body.withUnsafeBytes { Digest.hex(Digest.sha256($0)) }
        switch book.answer(
            method: edit.method ?? request.method,
            url: edit.url != nil ? upstream.url.description : machine.context.url,
            target: edit.url != nil ? upstream.url : route.url ?? upstream.url,
            headers: edit.headers != nil ? upstream.headers : request.headers, bodyDigest: digest)
        {
        case .recorded(let response):
            if !served {
                env.stats.replayMissed -= 1
                env.stats.replayServed += 1
            }
            notes.replayed = response.id
            notes.cacheStatus = CacheStatus(.replay)
            replay = .answering(response, held: body)
            send(upstream)
        case .miss(let miss):
            if served {
                env.stats.replayServed -= 1
                env.stats.replayMissed += 1
            }
            notes.replayed = nil
            notes.cacheStatus = CacheStatus(.forward(.bypass), detail: "breakpoint")
            replay = .forwarding(held: body, sent: 0)
            switch book.settings.onMiss {
            case .fail: fail(.replayMiss(miss))
            case .forward: send(upstream)
            }
        }
    }

    /// A person answered or aborted a request the recording was to answer: it is not a replay any
    /// more (not counted as served, not marked replayed).
    private func forgetReplayAnswer() {
        guard case .answering = replay else { return }
        env.stats.replayServed -= 1
        notes.replayed = nil
        notes.cacheStatus = CacheStatus(.forward(.bypass), detail: "breakpoint")
    }

    /// `502 breakpoint-aborted`, or the connection closed without an answer.
    func abortAtBreakpoint(_ name: String, closing: Bool) {
        guard closing else { return fail(.breakpointAborted(breakpoint: name)) }
        notes.error = .breakpointAborted(breakpoint: name)
        output.keepAlive = false
        output.dropHeldHead()
        finish(closeConnection: true)
    }

    /// The body decoded from its one content coding Sluice reads (gzip, deflate, br, zstd), and
    /// that coding; `nil` when it has none, another, or does not decode within `limit`.
    static func decodedBody(_ body: [UInt8], headers: HTTPFields, limit: Int) -> (body: [UInt8], coding: String)? {
        guard headers.contains(.contentEncoding), !body.isEmpty else { return nil }
        let codings = headers.tokens(.contentEncoding).filter { $0 != "identity" }
        guard codings.count == 1, let coding = ContentCoding(token: codings[0]),
            let plain = try? coding.decode(body, limit: limit)
        else { return nil }
        return (plain, coding.rawValue)
    }

    /// Applies an edit to the request about to be sent: method, URL, fields (framing fields are
    /// recomputed from the body), body. The body sent is the edited one, whole. A body that was
    /// shown `decoded`: an edited one goes as written, without its content coding; one left as it
    /// was follows the edited `Content-Encoding` as a response's does (``BreakpointStage/recoded(_:was:now:plain:)``).
    static func apply(
        _ edit: PausedMessage, to upstream: inout UpstreamRequest, body: [UInt8],
        decoded: (body: [UInt8], coding: String)? = nil
    )
        -> Result<[UInt8], SluiceError>
    {
        let (method, url): (String?, TargetURL?)
        switch edit.editedTarget() {
        case .success(let target): (method, url) = target
        case .failure(let failure): return .failure(failure)
        }
        let original = upstream.headers
        if let method { upstream.method = method }
        if let url { upstream.url = url }
        // Fields were checked where the edit came in (the admin API): written as they are.
        if let fields = edit.headers {
            let takesTrailers = upstream.headers.tokens(.te).contains("trailers")
            upstream.headers = PausedMessage.sentFields(fields)
            // The client's `TE: trailers` (a gRPC call's) belongs to the hop, not to the fields
            // a person edits: kept.
            if takesTrailers, !upstream.headers.contains(.te) {
                upstream.headers.append(name: "TE", value: "trailers", code: .te)
            }
        }
        var sent = edit.body ?? body
        if edit.body != nil {
            // The person wrote the body as shown (decoded): it goes as written.
            if decoded != nil { upstream.headers.remove(.contentEncoding) }
        } else if edit.headers != nil,
            let recoded = BreakpointStage.recoded(
                body, was: original, now: &upstream.headers, plain: { decoded?.body })
        {
            sent = recoded
        }
        // The transport writes the framing from `body` (a field here would be a second
        // Content-Length line, which an origin must refuse: RFC 9112 §6.3).
        upstream.headers.remove(.transferEncoding)
        upstream.headers.remove(.contentLength)
        if sent.isEmpty, ["GET", "HEAD", "DELETE", "OPTIONS"].contains(upstream.method) {
            upstream.body = .none
        } else {
            upstream.body = .length(Int64(sent.count))
        }
        return .success(sent)
    }

    /// A response written in the editor: its head (framing made from the body) and body.
    static func answerHead(_ answer: PausedMessage, date: String, keepAlive: Bool) -> (ResponseHead, [UInt8]) {
        let body = answer.body ?? []
        var headers = PausedMessage.sentFields(answer.headers ?? [])
        let status = answer.status ?? 200
        if !MapLocal.isBodiless(status) { headers.set("Content-Length", String(body.count)) }
        if !headers.contains(.date) { headers.append(name: "Date", value: date, code: .date) }
        Forwarding.appendVia(&headers, version: "1.1")
        if !keepAlive { headers.append(name: "Connection", value: "close", code: .connection) }
        return (
            ResponseHead(status: status, reason: ReasonPhrase.standard(status), headers: headers),
            MapLocal.isBodiless(status) ? [] : body
        )
    }
}

extension PausedMessage {
    /// The edited method and URL, checked: a method is a token, a URL an absolute `http(s)` one.
    func editedTarget() -> Result<(method: String?, url: TargetURL?), SluiceError> {
        func bad(_ why: String) -> Result<(method: String?, url: TargetURL?), SluiceError> {
            .failure(.badRequest(reason: .malformed(why)))
        }
        if let method, method.isEmpty || !method.utf8.allSatisfy({ RequestParser.isTokenByte($0) }) {
            return bad("the edited method is not a token: \(method)")
        }
        var edited: TargetURL?
        if let url {
            guard let parsed = TargetURL(url), parsed.scheme == "http" || parsed.scheme == "https" else {
                return bad("the edited URL is not an absolute http(s) URL: \(url)")
            }
            edited = parsed
        }
        return .success((method, edited))
    }
}

extension PauseDecision {
    var isTimeout: Bool { if case .timedOut = self { true } else { false } }
}
