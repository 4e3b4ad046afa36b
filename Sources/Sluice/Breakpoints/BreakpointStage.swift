import Codec

/// Delivery stage: response breakpoints. A response that fits one (its status and media type at
/// the head, its body conditions at the end) is held whole, at most `limits.max_transform_body`
/// of it (a larger one is not paused, and says so), and waits in the Paused list for a person:
/// it goes on as it was, edited, replaced by an answer, or aborted (``PauseDecision``).
final class BreakpointStage: DeliveryStage, PauseTarget {
    /// What the stage needs of its exchange: to register the pause.
    typealias Pause = (_ point: Breakpoint, _ response: PausedMessage, _ target: BreakpointStage) -> PausedItem?

    private enum Phase {
        /// Before the head.
        case waiting
        /// Held until the end, for these breakpoints.
        case holding(HeldResponse, [Breakpoint])
        /// Waiting for a person.
        case paused(HeldResponse, DeliveryNext<ResponseHead>)
        /// Nothing to do: the response passes.
        case passing
        case done
    }

    let candidates: [Breakpoint]
    let limit: Int
    let budget: HeldBodyBudget?
    /// A HEAD request's response: its announced length is not a body.
    let headOnly: Bool
    private let pause: Pause
    /// Ends the exchange by closing the client's connection, no answer (an abort that closes).
    private let closeClient: (String) -> Void
    private var phase = Phase.waiting
    /// What went out after holding and was not taken yet.
    private let releasing = ReleaseSlot<ResponseHead>()

    init(
        _ candidates: [Breakpoint], limit: Int, budget: HeldBodyBudget? = nil, headOnly: Bool, pause: @escaping Pause,
        closeClient: @escaping (String) -> Void
    ) {
        self.candidates = candidates
        self.limit = limit
        self.budget = budget
        self.headOnly = headOnly
        self.pause = pause
        self.closeClient = closeClient
    }

    func head(_ head: ResponseHead, _ next: DeliveryNext<ResponseHead>) {
        let fitting = candidates.filter { $0.matchesResponse(head) }
        guard !fitting.isEmpty else {
            phase = .passing
            return next.head(head)
        }
        if !headOnly, let length = head.headers[.contentLength].flatMap({ Int64($0) }), length > Int64(limit) {
            next.note(
                .breakpoint("response not paused at \(fitting[0].name): its body is larger than max_transform_body"))
            phase = .passing
            return next.head(head)
        }
        phase = .holding(HeldResponse(head, limit: limit, budget: budget), fitting)
    }

    func body(_ bytes: UnsafeRawBufferPointer, _ push: DeliveryPush, _ next: DeliveryNext<ResponseHead>) -> Bool {
        if !releasing.before(push) { return false }
        guard case .holding(var held, let fitting) = phase else {
            if case .passing = phase { return next.body(bytes, push) }
            return true
        }
        phase = .done  // appended in place, not copied
        if held.append(bytes) {
            phase = .holding(held, fitting)
            return true
        }
        phase = .passing
        next.note(.breakpoint("response not paused at \(fitting[0].name): \(held.gaveUp(budget?.total ?? 0))"))
        return held.overflow(with: bytes, push, to: next, releasing: releasing)
    }

    func end(_ next: DeliveryNext<ResponseHead>) {
        guard case .holding(let held, let fitting) = phase else {
            if case .passing = phase, !releasing.endAfter() { next.end() }
            return
        }
        phase = .passing
        let decoded = BreakpointStage.decoded(held, limit: limit)
        let content = decoded?.0 ?? held.bytes
        guard let point = fitting.first(where: { !$0.readsBody || $0.matchesBody(content) }) else {
            return held.pass(to: next, releasing: releasing)
        }
        var shown = PausedMessage(
            status: held.head.status, headers: held.head.headers.map { ($0.name, $0.value) }, body: held.bytes)
        if let (body, coding) = decoded {
            shown.body = body
            shown.decodedFrom = coding
        }
        guard pause(point, shown, self) != nil else { return held.pass(to: next, releasing: releasing) }
        next.note(.breakpoint("response paused at \(point.name)"))
        phase = .paused(held, next)
    }

    func resolve(_ decision: PauseDecision, of item: PausedItem) {
        guard case .paused(let held, let next) = phase else { return }
        phase = .done
        next.note(.pausedFor(item.held))
        switch decision {
        case .resume(nil), .timedOut:
            next.note(.breakpoint(decision.isTimeout ? "timed out, resumed unchanged" : "resumed"))
            held.pass(to: next, releasing: releasing)
        case .resume(let edit?), .answer(let edit):
            let answered: Bool
            if case .answer = decision { answered = true } else { answered = false }
            next.note(.breakpoint(answered ? "answered" : "edited, resumed"))
            next.note(
                .breakpointReceived(
                    PausedMessage(
                        status: held.head.status, headers: held.head.headers.map { ($0.name, $0.value) },
                        body: held.bytes)))
            let (head, body) = BreakpointStage.edited(
                held, with: edit, replacing: answered, headOnly: headOnly, limit: limit)
            next.note(.breakpointSent(head, body))
            next.head(head)
            releasing.start(body, share: held.share, next: next, ending: true)
        case .abort(let closing):
            next.note(.breakpoint(closing ? "aborted, connection closed" : "aborted"))
            // The exchange ends here: nothing of the chain is touched after.
            if closing { return closeClient(item.breakpoint) }
            return next.fail(.breakpointAborted(breakpoint: item.breakpoint))
        }
        // The response may be complete now: the exchange looks (as after a shaper's slice).
        next.note(.progress)
    }

    func drained() -> Bool { releasing.goOn() }

    func abandon() {
        phase = .done
        releasing.cancel()
    }

    /// The held body decoded from its one content coding (gzip, deflate, br), when it has one
    /// Sluice reads: matched and shown as text.
    static func decoded(_ held: HeldResponse, limit: Int) -> ([UInt8], String)? {
        let codings = held.head.headers.tokens(.contentEncoding).filter { $0 != "identity" }
        guard codings.count == 1, let coding = ContentCoding(token: codings[0]),
            let decoded = try? coding.decode(held.bytes, limit: limit)
        else { return nil }
        return (decoded, coding.rawValue)
    }

    /// The bytes to send when a person edited a message's fields and left its body (`bytes`, coded
    /// as `was` says) alone: a content coding taken off sends the body decoded (`plain`), one
    /// changed to a coding Sluice writes encodes it afresh; `nil` when the bytes go as they are
    /// (the same codings, or a label the person put on a plain body). A coding Sluice cannot write
    /// puts the original label back on `now`: a coding describes the bytes sent (RFC 9110 §8.4).
    /// Request and response breakpoints alike. (Compared as codings: `x-gzip` is gzip.)
    static func recoded(
        _ bytes: [UInt8], was original: HTTPFields, now fields: inout HTTPFields, plain decode: () -> [UInt8]?
    ) -> [UInt8]? {
        func codings(_ fields: HTTPFields) -> [String] {
            fields.tokens(.contentEncoding).filter { $0 != "identity" }.map { ContentCoding(token: $0)?.rawValue ?? $0 }
        }
        let was = codings(original)
        let now = codings(fields)
        guard was != now else { return nil }
        let plain = was.isEmpty ? bytes : decode()
        if let plain, now.isEmpty {
            fields.remove(.contentEncoding)
            return plain
        }
        if let plain, now.count == 1, let coding = ContentCoding(token: now[0]) { return coding.encode(plain) }
        // A coding Sluice does not write, named on a plain body: the person's own label, sent as
        // written (dropping it silently would undo their edit).
        if !was.isEmpty { fields.set("Content-Encoding", original.values(.contentEncoding).joined(separator: ", ")) }
        return nil
    }

    /// The held response with a person's edits (or, `replacing`, their answer alone): the fields
    /// given replace the head's, the framing follows the body (`Content-Length`; a changed body
    /// is sent as it was written, so its content coding goes).
    static func edited(
        _ held: HeldResponse, with edit: PausedMessage, replacing: Bool, headOnly: Bool = false, limit: Int = .max
    ) -> (ResponseHead, [UInt8]) {
        var head = held.head
        if let status = edit.status { head.status = status }
        if edit.status != nil { head.reason = "" }
        if let fields = edit.headers ?? (replacing ? [] : nil) { head.headers = PausedMessage.sentFields(fields) }
        var body = edit.body ?? (replacing ? [] : held.bytes)
        var changed = edit.body != nil && edit.body != held.bytes
        if edit.body != nil {
            // The person wrote the body as shown (decoded): it goes out as written.
            head.headers.remove(.contentEncoding)
        } else if !replacing, edit.headers != nil {
            if let recoded = recoded(
                held.bytes, was: held.head.headers, now: &head.headers, plain: { decoded(held, limit: limit)?.0 })
            {
                body = recoded
                changed = true
            }
        }
        if changed {
            // Another representation: its digests go, its entity tag is weak.
            for name in ["content-md5", "digest", "content-digest", "repr-digest"] { head.headers.remove(name) }
            if let etag = head.headers[.etag], !etag.hasPrefix("W/") { head.headers.set("ETag", "W/" + etag) }
        }
        head.headers.remove(.transferEncoding)
        // A HEAD's, a 204's and a 304's length is not their body's: kept as it was.
        if headOnly || [204, 304].contains(head.status) || head.status < 200 {
            if let length = held.head.headers[.contentLength], head.status != 204 {
                head.headers.set("Content-Length", length)
            } else {
                head.headers.remove(.contentLength)
            }
            return (head, [])
        }
        head.headers.set("Content-Length", String(body.count))
        return (head, body)
    }
}
