/// `replay:`: the request body is read (up to `limits.max_transform_body`) to match it, then the
/// recording answers through the usual response path (hooks, validation, stripping, the
/// client's framing) or, on a miss, the exchange fails with a `504` or goes on to the origin
/// with the bytes already read sent first.
enum ReplayStep {
    /// Reading the request body whole (bounded): to match it against the recording, or for a
    /// request breakpoint (to match its body conditions and show it).
    case gathering(RecordingTap, for: Gathering)
    /// The recording answers; `held` is the request body read to match it (a request breakpoint
    /// shows it).
    case answering(ReplayedResponse, held: [UInt8])
    /// Forwarded with `held` (the body read to match, or as edited at a breakpoint) sent first.
    case forwarding(held: [UInt8], sent: Int)
}

/// Why the request body is being read whole.
enum Gathering {
    case replay
    /// Request breakpoints that may pause it, and the request as it would be sent.
    case breakpoint([Breakpoint], UpstreamRequest)
}

extension Exchange {
    /// Starts matching the request against the recording.
    func beginReplay() {
        let tap = RecordingTap(limit: Int.max)
        replay = .gathering(tap, for: .replay)
        // Most requests have no body: decided at once, nothing read.
        if body.isComplete { return decideReplay(tap, bodyReadWhole: true) }
        gatherRequestBody()
    }

    /// Reads what the client sent of the body; decides once it is all there (or too large).
    func gatherRequestBody() {
        guard case .gathering(let tap, let purpose) = replay else { return }
        func decide(_ tap: RecordingTap, bodyReadWhole: Bool) {
            switch purpose {
            case .replay: decideReplay(tap, bodyReadWhole: bodyReadWhole)
            case .breakpoint(let points, let upstream):
                bodyRead(tap.body, whole: bodyReadWhole, points: points, upstream: upstream)
            }
        }
        if request.getsContinue, body.announceContinue() { output.sendContinue() }
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            if tap.size > Int64(env.transformLimit) { return decide(tap, bodyReadWhole: false) }
            let read = scratch.withUnsafeMutableBytes { body.read(from: client.stream, into: $0) }
            switch read {
            case .bytes(let count):
                scratch.withUnsafeBytes { bytes in
                    let piece = UnsafeRawBufferPointer(rebasing: bytes[0..<count])
                    tap.request(piece)
                    capture?.requestTap?.request(piece)
                }
            case .end:
                client.requestBodyDidEnd()
                return decide(tap, bodyReadWhole: true)
            case .wait:
                if client.inputClosed {
                    return fail(
                        .badRequest(reason: .malformed("the client closed the connection during the request body")))
                }
                return  // clientDataAvailable() calls again
            case .failure(let failure):
                return fail(failure)
            }
        }
    }

    private func decideReplay(_ tap: RecordingTap, bodyReadWhole: Bool) {
        guard let book = env.replayBook else { return }
        let digest = bodyReadWhole ? tap.finishDigest() : nil
        switch book.answer(
            method: request.method, url: machine.context.url, target: route.url, headers: request.headers,
            bodyDigest: digest)
        {
        case .recorded(let response):
            env.stats.replayServed += 1
            notes.replayed = response.id
            replay = .answering(response, held: tap.body)
            if !body.isComplete { output.keepAlive = false }
            // A head without `Date` (a HAR's, say) gets one from the session's path.
            if answersPlainly, client.stream.parts == nil, response.head.headers.contains(.date) {
                return servePlainReplay(response, book: book)
            }
            proceed(.replay)
        case .miss(let miss):
            env.stats.replayMissed += 1
            replay = .forwarding(held: tap.body, sent: 0)
            switch book.settings.onMiss {
            case .fail: fail(.replayMiss(miss))
            case .forward:
                proceed()
            }
        }
    }

    /// Whether a recorded response goes out as it is, the way a plain cache hit does: no rule
    /// validates, checks, transforms or rewrites it, no hook of a rule would see it, and no fault
    /// shapes or cuts it, and no request breakpoint may pause it. Anything else goes through the
    /// session like an origin's response.
    private var answersPlainly: Bool {
        let rule = route.rule
        return rule.accept == nil && rule.contract == nil && rule.rewrite == nil && route.transform == nil
            && !route.hasHooks && env.hooks.isEmpty && !stages.shapesOrCuts && !env.breakpoints.pausesRequests
    }

    /// The recorded head (kept per recorded exchange by the book) and body in one write.
    private func servePlainReplay(_ response: ReplayedResponse, book: ReplayBook) {
        notes.cacheStatus = CacheStatus(.replay)
        let head = book.plainHead(response, keepAlive: output.keepAlive)
        capture?.whole(head: head, body: response.body)
        output.complete(
            head: head, body: response.body, status: response.head.status, bodyBytes: Int64(response.body.count))
        finishIfDone()
    }

    /// Copies request body bytes read for matching into `buffer` (ahead of the rest of the body);
    /// `nil` when none are left.
    /// Whether every held byte has been handed to the transfer.
    var heldBodySent: Bool {
        guard case .forwarding(let held, let sent) = replay else { return false }
        return sent == held.count
    }

    func takeHeldBody(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard case .forwarding(let held, let sent) = replay, sent < held.count else { return nil }
        let count = min(buffer.count, held.count - sent)
        held.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + sent, byteCount: count) }
        replay = .forwarding(held: held, sent: sent + count)
        return count
    }
}
