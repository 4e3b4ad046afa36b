import Curl
import EventIO

/// One upstream exchange, spanning any redirects it follows. Each transfer of it is carried by
/// one of the session's two transports (``Carrier``): a native HTTP/1.1 exchange on a pooled
/// connection, or a libcurl handle; the hooks, monitors, errors and timings are the same either
/// way. Created by ``Session/makeTask(_:delegate:hooks:)``; confined to the loop thread.
public final class UpstreamTask {
    /// The task's number, unique per session.
    public let id: Int
    /// The request as first sent.
    public let originalRequest: UpstreamRequest
    /// The request being sent now (differs after a followed redirect).
    public private(set) var currentRequest: UpstreamRequest
    /// The final response head, once it arrived.
    public private(set) var response: ResponseHead?
    /// The followed-redirect chain.
    public internal(set) var redirectState: RedirectState
    /// This task's hooks: its own, merged over the session's when it was made.
    public let hooks: Hooks
    /// Response body bytes received so far.
    public private(set) var bodyBytes: Int64 = 0
    /// What is left of the current response's plain body framed by its length, when libcurl
    /// carries it straight from the origin (0: none, or all arrived): at its end the connection
    /// is checked for bytes beyond it.
    private var curlBodyLeft: Int64 = 0
    /// Seconds from start to the response head.
    public private(set) var timeToHead: Double?
    /// The last transfer's phases, once it ended.
    public private(set) var timings: TransferTimings?
    /// When the task was created and when its first transfer started (monotonic nanoseconds).
    public let createdAt = EventLoop.monotonicNanoseconds()
    public private(set) var startedAt: UInt64 = 0
    /// New upstream connections this task opened (0 = it reused pooled ones).
    public private(set) var openedConnections = 0
    /// The will-cache hook's answer at completion.
    public private(set) var cachingDecision = CachingDecision.notAsked
    /// Whether a request body read has begun (the body cannot be replayed after that).
    public private(set) var bodyStarted = false

    /// Runs the will-cache hook on the complete response (``cachingDecision``); returns what is
    /// proposed for storing after it (the proposal itself when no hook is set; `nil`: store nothing).
    func decideCaching(for response: ResponseHead) -> CachedResponseProposal? {
        let proposal = CachedResponseProposal(request: currentRequest, response: response, bodyBytes: bodyBytes)
        guard let handler = hooks.cachedResponseHandler else { return proposal }
        let decided = handler.task(self, willCache: proposal)
        cachingDecision = decided.map(CachingDecision.store) ?? .doNotStore
        return decided
    }

    /// Hears the task's moments. Unowned, not weak (no side table for the exchange, which is
    /// retained often): a delegate that lets go of its task detaches first (``detach()``).
    unowned var delegate: (any TaskDelegate)?
    /// The session that made it. What drives a task holds the session: an exchange (or a
    /// background refresh) holds its environment, which holds the session; a task's `deinit`
    /// does not touch it. Held without reference counting: it is read several times a request,
    /// and `unowned` costs a checked retain and a release on each read.
    unowned(unsafe) let session: Session
    private var headTimer: Session.HeadTimer?
    /// The response's trailer section as it arrives, and its size.
    private var trailers = HTTPFields()
    private var trailerBytes = 0
    /// Set by the connection filter when it refused an address that is this proxy.
    var refusedTarget: SluiceError.ForbiddenReason?

    /// Where the task stands; each case carries what only it has.
    enum Phase {
        /// Made, not started.
        case idle
        /// A transfer runs.
        case transferring(Transfer)
        /// A followed 3xx arrived: its body is discarded until its transfer ends; then `next` is sent.
        indirect case redirecting(Transfer, next: UpstreamRequest)
        /// The task failed (a cancel, a refused head, a failed upload): the transfer, if any, is
        /// being stopped, and the completion reports `error`.
        indirect case failing(Transfer?, SluiceError)
        /// A recorded response is handed to the delegate instead of a transfer (`--replay`);
        /// `offset` body bytes were taken.
        indirect case replaying(ReplayedResponse, offset: Int)
        /// The delegate heard the completion.
        case finished
    }

    private var phase = Phase.idle

    /// The recorded response this task hands over instead of asking the origin.
    private let replayed: ReplayedResponse?
    /// Whether it hands over a recorded response (nothing of it is cached: no will-cache moment).
    var replays: Bool { replayed != nil }

    init(
        id: Int, request: UpstreamRequest, delegate: any TaskDelegate, hooks: Hooks, session: Session,
        replayed: ReplayedResponse? = nil
    ) {
        self.id = id
        self.replayed = replayed
        originalRequest = request
        currentRequest = request
        self.delegate = delegate
        self.hooks = hooks
        self.session = session
        redirectState = RedirectState(limit: session.settings.redirectLimit, start: request.url)
    }

    /// What still points back at it lets go: its head timer, its native transfer (a task the
    /// session ran ends finished, so this is a net for one that never ran to its end). The
    /// session may be gone already (a proxy that stopped): the timer is not given back to it.
    deinit {
        headTimer?.task = nil
        if case .native(let native)? = transfer?.carrier { native.task = nil }
    }

    /// The delegate lets go of this task: nothing more of it reaches the delegate (which
    /// ignores a task it no longer holds anyway).
    public func detach() { delegate = nil }

    /// The exchange's ``Timeline`` from this task's transfer timings (`nil` before the transfer ended).
    func timeline(exchangeStart: UInt64, complete: Double) -> Timeline? {
        guard let timings else { return nil }
        return Timeline(
            queued: Double(startedAt &- exchangeStart) / 1e9, dns: timings.nameLookup,
            connect: max(0, timings.connect - timings.nameLookup),
            tls: timings.tls > 0 ? max(0, timings.tls - timings.connect) : 0, firstByte: timings.firstByte,
            complete: complete)
    }

    /// Whether the task has finished (successfully or not).
    public var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// The running transfer, in any phase that has one.
    private var transfer: Transfer? {
        switch phase {
        case .transferring(let transfer), .redirecting(let transfer, _), .failing(let transfer?, _):
            return transfer
        case .idle, .failing(nil, _), .finished, .replaying:
            return nil
        }
    }

    /// The running transfer's libcurl handle, when libcurl carries it.
    var handle: EasyHandle? {
        guard case .curl(let handle)? = transfer?.carrier else { return nil }
        return handle
    }

    /// Which transport carried the last transfer (`nil` before one started, and for a replay).
    public private(set) var engine: Engine?

    // MARK: - Control

    /// Sends the request (the first time) or the next one after a followed redirect.
    /// The delegate may hear the completion before this returns (an immediate failure).
    public func start() {
        let now = EventLoop.monotonicNanoseconds()
        if case .idle = phase {
            session.eventMonitor.taskDidStart(self)
            startedAt = now
        }
        if let replayed {
            phase = .replaying(replayed, offset: 0)
            // At the next loop turn, as a transfer's head would come: never inside the caller.
            session.loop.callSoon { [self] in self.replayHead() }
            return
        }
        beginTransfer(now)
    }

    /// Sends the current request with the transport that carries it.
    private func beginTransfer(_ now: UInt64) {
        let head = ResponseHeadParser(maxHeaderBytes: session.settings.maxHeaderBytes)
        response = nil
        if session.native.carries(currentRequest) {
            let native = NativeTransfer(request: currentRequest, task: self, transport: session.native)
            phase = .transferring(Transfer(carrier: .native(native), head: head, startTime: now))
            engine = .native
            armHeadTimer()
            native.start()
            return
        }
        // libcurl answers a 417 to an expectation by sending the request again without it, and
        // then never sends one on that handle again: it gets no expectation, and Sluice answers
        // the client's itself (the body goes with the head).
        if currentRequest.expectsContinue { currentRequest.expectsContinue = false }
        let handle = session.checkoutHandle()
        handle.delegate = self
        session.configure(handle, for: currentRequest)
        phase = .transferring(Transfer(carrier: .curl(handle), head: head, startTime: now))
        engine = .curl
        armHeadTimer()
        do {
            try session.multi.add(handle)
        } catch {
            fail(.upstreamFailed(reason: .badResponse(detail: error.description)))
        }
    }

    private func armHeadTimer() {
        let limit = session.settings.responseTimeoutMilliseconds
        guard limit > 0 else { return }
        if headTimer == nil { headTimer = session.lendHeadTimer(to: self) }
        headTimer?.timer.schedule(milliseconds: limit)
    }

    /// No head within `timeouts.upstream_response`.
    func headTimedOut() {
        let limit = session.settings.responseTimeoutMilliseconds
        fail(.upstreamFailed(reason: .timedOut(detail: "No response headers from the origin within \(limit) ms.")))
    }

    /// Gives the head timer back to the session (disarmed): the head came or the transfer ended.
    private func returnHeadTimer() {
        guard let headTimer else { return }
        self.headTimer = nil
        session.returnHeadTimer(headTimer)
    }

    /// Resumes a transfer paused by the delegate (the client drained, or body bytes arrived).
    public func resume() {
        if case .replaying = phase {
            session.loop.callSoon { [weak self] in self?.pumpReplay() }
            return
        }
        guard case .transferring(let transfer) = phase else { return }
        switch transfer.carrier {
        case .curl(let handle): if handle.isActive { handle.unpause() }
        case .native(let native): native.resume()
        }
    }

    /// Stops the task; the delegate hears `didCompleteWith` at the next loop turn.
    public func cancel(_ error: SluiceError) { fail(error) }

    /// Fails the task now: the transfer is stopped (taken off the multi handle, or its connection
    /// closed) and the completion comes at the next loop turn (never from inside a callback).
    private func fail(_ error: SluiceError) {
        let transfer: Transfer?
        switch phase {
        case .transferring(let running), .redirecting(let running, _): transfer = running
        case .idle, .replaying: transfer = nil
        case .failing, .finished: return
        }
        phase = .failing(transfer, error)
        switch transfer?.carrier {
        case .curl(let handle)?: if handle.isActive { session.multi.remove(handle) }
        case .native(let native)?: native.cancel()
        case nil: break
        }
        session.loop.callSoon { [self] in self.finish(failure: nil) }
    }

    /// Marks the task failed from inside a transport's callback, which then aborts the transfer:
    /// the transport completes it and ``transferDidComplete(failure:)`` reports `error`.
    private func abort(_ error: SluiceError) -> TransferStep {
        switch phase {
        case .transferring(let transfer), .redirecting(let transfer, _): phase = .failing(transfer, error)
        case .idle, .failing, .finished, .replaying: break
        }
        return .abort
    }

    // MARK: - Completion

    /// The transport ended the transfer; `failure` says why when it did not end whole.
    func transferDidComplete(failure: TransferFailure?) {
        returnHeadTimer()
        switch transfer?.carrier {
        case .curl(let handle)?:
            openedConnections += handle.newConnections
            timings = TransferTimings(handle.timings)
        case .native(let native)?:
            openedConnections += native.openedConnections
            timings = native.timings
        case nil: break
        }
        if case .transferring(let transfer) = phase, case .declined? = failure, case .native = transfer.carrier {
            // The native transport cannot carry this origin (it speaks only HTTP/2; the transport
            // remembers it): libcurl does.
            beginTransfer(EventLoop.monotonicNanoseconds())
            return
        }
        if case .redirecting(let transfer, let next) = phase {
            release(transfer)
            currentRequest = next
            start()
            return
        }
        finish(failure: failure)
    }

    private func finish(failure: TransferFailure?) {
        let error: SluiceError?
        switch phase {
        case .finished: return
        case .failing(_, let failed): error = failed
        case .idle, .transferring, .redirecting, .replaying:
            let own: SluiceError?
            switch failure {
            case .curl(let curlError)?: own = convert(curlError)
            case .native(let nativeError)?: own = nativeError
            case .declined?:
                own = .upstreamFailed(reason: .badResponse(detail: "No transport could carry the request."))
            case nil: own = nil
            }
            error =
                own
                ?? (response == nil
                    ? .upstreamFailed(
                        reason: .badResponse(detail: "The origin closed the connection without a response."))
                    : nil)
        }
        returnHeadTimer()
        if let transfer { release(transfer) }
        phase = .finished
        // libcurl hands HTTP/2 trailers over without the empty line that ends a section.
        if error == nil, trailerBytes > 0, !trailers.fields.isEmpty {
            delegate?.task(self, didReceiveTrailers: trailers)
        }
        session.delegate.task(self, didCompleteWith: error)
    }

    /// Gives a finished transfer's libcurl handle back to the session (a native transfer gave
    /// its connection back, or closed it, when it ended).
    private func release(_ transfer: Transfer) {
        guard case .curl(let handle) = transfer.carrier else { return }
        handle.delegate = nil
        if !handle.isActive { session.recycle(handle) }
    }

    // MARK: - Replay

    /// The recorded head goes through the monitors and the response hooks (validation gates) as
    /// an origin's would; a recorded response is final, so no redirect is followed from it.
    private func replayHead() {
        guard case .replaying(let replayed, _) = phase else { return }
        timeToHead = Double(EventLoop.monotonicNanoseconds() - startedAt) / 1e9
        response = replayed.head
        switch session.delegate.task(self, didReceiveHead: replayed.head, mayFollow: false) {
        case .deliver, .follow:
            delegate?.task(self, didReceive: replayed.head)
            pumpReplay()
        case .fail(let error):
            fail(error)
        }
    }

    /// Hands the recorded body over in 64 KiB pieces while the delegate takes them; a refused
    /// piece waits for ``resume()``.
    private func pumpReplay() {
        while case .replaying(let replayed, let offset) = phase {
            guard offset < replayed.body.count else { return finish(failure: nil) }
            guard let delegate else { return fail(.upstreamFailed(reason: .cancelled(detail: "the exchange ended"))) }
            let end = min(replayed.body.count, offset + 64 * 1024)
            let taken = replayed.body.withUnsafeBytes {
                delegate.task(self, didReceive: UnsafeRawBufferPointer(rebasing: $0[offset..<end]))
            }
            guard taken else { return }
            bodyBytes += Int64(end - offset)
            if case .replaying = phase { phase = .replaying(replayed, offset: end) }
        }
    }

    // MARK: - Response head

    /// What one header line (with or without its CRLF) meant for the transfer.
    enum HeadLine {
        /// The section goes on (or an interim head or a trailer line was taken).
        case more
        /// `100 Continue` to a request that expects it (passed on to the client): its body may go.
        case continued
        /// `417` to the expectation, before any of the body went: the transport sends the
        /// request again without it (RFC 9110 §10.1.1: the chain does not support expectations).
        case expectationRefused
        /// The final head arrived and is delivered (or followed): its body comes next. The head
        /// is the origin's, before any rewrite: its framing is what the transport reads by.
        case final(ResponseHead)
        /// The transfer must stop (the task has failed).
        case abort
    }

    /// One line of a header section from the transport: interim heads, the final head, then the
    /// trailer section. Shared by both transports, so each checks and reports heads alike.
    func receiveHeadLine(_ line: UnsafeRawBufferPointer) -> HeadLine {
        guard case .transferring(let transfer) = phase else { return .more }
        // After the final head, header lines are the trailer section (chunked coding's, or
        // HTTP/2's trailing HEADERS: gRPC's status): kept for the client, bounded like a head.
        if response != nil {
            trailerLine(line)
            return .more
        }
        return headStep(transfer.head.consume(line), line: line, transfer: transfer)
    }

    /// The whole lines of `bytes` from `consumed` on, up to the first that completes something
    /// (a head, an interim head, a refusal): the lines before it go straight to the parser, with
    /// the phase looked at once rather than once per line. `consumed` moves past every line
    /// taken; `nil` when no whole line is left.
    func receiveHeadLines(_ bytes: UnsafeRawBufferPointer, consumed: inout Int) -> HeadLine? {
        guard case .transferring(let transfer) = phase, response == nil else {
            guard let end = bytes.index(of: 0x0A, from: consumed) else { return nil }
            defer { consumed = end + 1 }
            return receiveHeadLine(UnsafeRawBufferPointer(rebasing: bytes[consumed...end]))
        }
        while let end = bytes.index(of: 0x0A, from: consumed) {
            let line = UnsafeRawBufferPointer(rebasing: bytes[consumed...end])
            consumed = end + 1
            let step = transfer.head.consume(line)
            if case .more = step { continue }
            return headStep(step, line: line, transfer: transfer)
        }
        return nil
    }

    /// What a head line's `step` means for the task.
    private func headStep(_ step: ResponseHeadParser.Step, line: UnsafeRawBufferPointer, transfer: Transfer)
        -> HeadLine
    {
        switch step {
        case .more:
            return .more
        case .interim(let head) where head.status == 101:
            // Sluice never forwards an Upgrade through the session: a switch it did not ask for
            // would make what follows another protocol's bytes.
            return abortLine(
                .upstreamFailed(
                    reason: .badResponse(detail: "The origin switched protocols (101) without being asked.")))
        case .interim(var head):
            // 1xx: passed on (RFC 9110 §15.2) while the final response is awaited. A 100 only
            // when the request carried the client's expectation (an unasked one says nothing).
            if head.status == 100, !currentRequest.expectsContinue || currentRequest.body == .none { return .more }
            HopByHop.strip(&head.headers)
            delegate?.task(self, didReceiveInterim: head)
            return head.status == 100 ? .continued : .more
        case .final(let origin)
        where origin.status == 417 && currentRequest.expectsContinue && transfer.awaitsContinue:
            // Not the client's answer: the expectation was Sluice's to forward. The request goes
            // again without it; the client gets Sluice's own 100 when its body is asked for.
            currentRequest.expectsContinue = false
            return .expectationRefused
        case .final(let origin):
            // Framing fields are never rewritten (refused by the configuration): the checked
            // framing stands.
            var head = origin
            currentRequest.responseRewrite?.apply(to: &head.headers)
            switch headDidComplete(head, transfer: transfer) {
            case .proceed, .pause: return .final(origin)
            case .abort: return .abort
            }
        case .refused(let detail):
            return abortLine(.upstreamFailed(reason: .badResponse(detail: detail)))
        case .notHTTP:
            // libcurl 7.88 can hand an HTTP/2 stream's trailers over before its head when the
            // whole stream arrived in one read (a small gRPC answer): a field line before any
            // status line is kept as a trailer, and the head still follows.
            if case .curl = transfer.carrier, transfer.head.isBetweenSections, line.contains(UInt8(ascii: ":")),
                trailerBytes < 16 * 1024
            {
                trailerLine(line)
                return .more
            }
            return abortLine(
                .upstreamFailed(
                    reason: .badResponse(detail: "The origin's answer does not start with an HTTP status line.")))
        }
    }

    private func abortLine(_ error: SluiceError) -> HeadLine {
        _ = abort(error)
        return .abort
    }

    /// One trailer line, kept for the delegate (told at completion, before the end).
    private func trailerLine(_ line: UnsafeRawBufferPointer) {
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        guard end > 0 else { return }  // the section's end: handed over at completion
        trailerBytes += line.count
        guard trailerBytes <= 16 * 1024, let colon = line[..<end].firstIndex(of: UInt8(ascii: ":")) else {
            return  // beyond the limit, or not a field: dropped (the body is complete)
        }
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
        let value = UnsafeRawBufferPointer(rebasing: line[(colon + 1)..<end])
        guard ResponseFraming.nameViolation(name) == nil, ResponseFraming.valueViolation(value) == nil else { return }
        var start = 0
        var stop = value.count
        while start < stop, value[start] == 0x20 || value[start] == 0x09 { start += 1 }
        while stop > start, value[stop - 1] == 0x20 || value[stop - 1] == 0x09 { stop -= 1 }
        trailers.append(
            name: String(decoding: name, as: UTF8.self),
            wireValue: UnsafeRawBufferPointer(rebasing: value[start..<stop]), code: FieldCode(bytes: name))
    }

    private func headDidComplete(_ head: ResponseHead, transfer: Transfer) -> TransferStep {
        returnHeadTimer()
        timeToHead = Double(EventLoop.monotonicNanoseconds() - transfer.startTime) / 1e9
        if head.status == 407, let parent = currentRequest.parent, currentRequest.url.scheme == "http" {
            // The parent's own answer to an absolute-form request: Sluice is the client's proxy,
            // so the client must not be asked for the parent's credentials.
            return abort(.upstreamFailed(reason: .parentAuthRequired(parent: parent.description)))
        }
        response = head
        curlBodyLeft = 0
        if case .curl = engine, currentRequest.url.scheme == "http", currentRequest.parent == nil,
            case .exactly(let length) = ResponseBodyFraming.of(method: currentRequest.method, head: head).length
        {
            curlBodyLeft = length
        }
        switch session.delegate.task(self, didReceiveHead: head) {
        case .deliver:
            delegate?.task(self, didReceive: head)
            return .proceed
        case .follow(let next, let state):
            redirectState = state
            phase = .redirecting(transfer, next: next)
            return .proceed
        case .fail(let error):
            return abort(error)
        }
    }
}

// MARK: - What transports call

extension UpstreamTask {
    /// A piece of the response body (framing removed): taken, or refused until ``resume()``.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> TransferStep {
        if case .redirecting = phase { return .proceed }  // a followed 3xx: its body is discarded
        guard let delegate else { return .abort }
        if delegate.task(self, didReceive: bytes) {
            bodyBytes += Int64(bytes.count)
            return .proceed
        }
        return .pause
    }

    /// Where the rest of the body (`count` bytes) may be moved by the kernel, unseen: the
    /// delegate's client socket when it allows that (see ``TaskDelegate/task(_:sinkForSplicing:)``).
    func spliceSink(for count: Int64) -> Connection? {
        if case .redirecting = phase { return nil }  // a followed 3xx's body is discarded
        guard let delegate else { return nil }
        return delegate.task(self, sinkForSplicing: count)
    }

    /// Body bytes the kernel has moved to the client so far in a splice still running (they are
    /// told when it ends), for progress.
    var splicedSoFar: Int64 {
        guard case .transferring(let transfer) = phase, case .native(let native) = transfer.carrier else { return 0 }
        return native.splicedSoFar
    }

    /// Body bytes the kernel moved to the client (``spliceSink(for:)``); `whole`: all it was asked.
    func receiveSpliced(_ count: Int64, whole: Bool) {
        bodyBytes += count
        delegate?.task(self, didSplice: count, whole: whole)
    }

    /// Request-body bytes for the transport to send; `.failed` has failed the task.
    func fillUpload(_ buffer: UnsafeMutableRawBufferPointer) -> BodyChunk {
        guard let delegate else { return .failed }
        bodyStarted = true
        let chunk = delegate.task(self, fillBody: buffer)
        if case .failed = chunk { _ = abort(.badRequest(reason: .malformed("the request body failed"))) }
        return chunk
    }

    /// Whether the transport may connect to `address` (the target guard); a refusal is kept for
    /// the error.
    func mayConnect(to address: SocketAddress) -> Bool {
        // Through a parent the socket goes to the parent, which the configuration named.
        if currentRequest.parent != nil { return true }
        guard let refusal = session.targetGuard.refusal(address, localClient: currentRequest.fromLocalClient) else {
            return true
        }
        refusedTarget = refusal
        return false
    }
}

// MARK: - libcurl callbacks

extension UpstreamTask: EasyHandleDelegate {
    public func easyHandle(_ handle: EasyHandle, didReceiveHeaderLine line: UnsafeRawBufferPointer) -> EasyHandle.Action
    {
        switch receiveHeadLine(line) {
        case .more, .continued, .expectationRefused, .final: .proceed
        case .abort: .abort
        }
    }

    public func easyHandle(_ handle: EasyHandle, didReceiveBody bytes: UnsafeRawBufferPointer) -> EasyHandle.Action {
        let step = receiveBody(bytes)
        // Bytes beyond a plain body's end (a followed redirect's too) must not become the next
        // request's answer. Only pieces taken count: libcurl hands a paused one over again.
        if curlBodyLeft > 0, case .proceed = step {
            curlBodyLeft -= Int64(bytes.count)
            if curlBodyLeft == 0 { handle.retireConnectionIfInputWaits() }
        }
        return EasyHandle.Action(step)
    }

    public func easyHandle(_ handle: EasyHandle, fillUploadBuffer buffer: UnsafeMutableRawBufferPointer)
        -> EasyHandle.UploadResult
    {
        switch fillUpload(buffer) {
        case .bytes(let count): .bytes(count)
        case .end: .end
        case .wait: .pause
        case .failed: .abort
        }
    }

    public func easyHandle(_ handle: EasyHandle, mayConnectTo address: SocketAddress) -> Bool {
        mayConnect(to: address)
    }
}

extension EasyHandle.Action {
    init(_ step: TransferStep) {
        switch step {
        case .proceed: self = .proceed
        case .pause: self = .pause
        case .abort: self = .abort
        }
    }
}
