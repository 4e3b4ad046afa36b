import Curl
import EventIO

/// One upstream exchange, spanning any redirects it follows; owns a libcurl handle while it runs.
/// Created by ``Session/makeTask(_:delegate:hooks:)``; confined to the loop thread.
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
    /// Seconds from start to the response head.
    public private(set) var timeToHead: Double?
    /// The last transfer's phases (libcurl's timings), once it ended.
    public private(set) var timings: EasyHandle.Timings?
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

    weak var delegate: (any TaskDelegate)?
    unowned let session: Session
    private var headTimer: Timer?
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

    /// The exchange's ``Timeline`` from this task's libcurl timings (`nil` before the transfer ended).
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

    /// The running transfer's handle, in any phase that has one.
    var handle: EasyHandle? {
        switch phase {
        case .transferring(let transfer), .redirecting(let transfer, _), .failing(let transfer?, _):
            return transfer.handle
        case .idle, .failing(nil, _), .finished, .replaying:
            return nil
        }
    }

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
        let handle = session.checkoutHandle()
        handle.delegate = self
        session.configure(handle, for: currentRequest)
        phase = .transferring(
            Transfer(
                handle: handle, head: ResponseHeadParser(maxHeaderBytes: session.settings.maxHeaderBytes),
                startTime: now))
        response = nil
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
        if headTimer == nil {
            headTimer = Timer(loop: session.loop) { [unowned self] in
                self.fail(
                    .upstreamFailed(
                        reason: .timedOut(detail: "No response headers from the origin within \(limit) ms.")))
            }
        }
        headTimer?.schedule(milliseconds: limit)
    }

    /// Resumes a transfer paused by the delegate (the client drained, or body bytes arrived).
    public func resume() {
        if case .replaying = phase {
            session.loop.callSoon { [weak self] in self?.pumpReplay() }
            return
        }
        guard case .transferring(let transfer) = phase, transfer.handle.isActive else { return }
        transfer.handle.unpause()
    }

    /// Stops the task; the delegate hears `didCompleteWith` at the next loop turn.
    public func cancel(_ error: SluiceError) { fail(error) }

    /// Fails the task now: the transfer is taken off the multi handle and the completion comes
    /// at the next loop turn (never from inside a libcurl callback).
    private func fail(_ error: SluiceError) {
        let transfer: Transfer?
        switch phase {
        case .transferring(let running), .redirecting(let running, _): transfer = running
        case .idle, .replaying: transfer = nil
        case .failing, .finished: return
        }
        phase = .failing(transfer, error)
        if let handle = transfer?.handle, handle.isActive { session.multi.remove(handle) }
        session.loop.callSoon { [self] in self.finish(curlError: nil) }
    }

    /// Marks the task failed from inside a libcurl callback, which then aborts the transfer:
    /// libcurl completes it and ``transferDidComplete(error:)`` reports `error`.
    private func abort(_ error: SluiceError) -> EasyHandle.Action {
        switch phase {
        case .transferring(let transfer), .redirecting(let transfer, _): phase = .failing(transfer, error)
        case .idle, .failing, .finished, .replaying: break
        }
        return .abort
    }

    // MARK: - Completion

    func transferDidComplete(error: CurlError?) {
        headTimer?.cancel()
        openedConnections += handle?.newConnections ?? 0
        timings = handle?.timings
        if case .redirecting(let transfer, let next) = phase {
            recycle(transfer.handle)
            currentRequest = next
            start()
            return
        }
        finish(curlError: error)
    }

    private func finish(curlError: CurlError?) {
        let error: SluiceError?
        switch phase {
        case .finished: return
        case .failing(_, let failure): error = failure
        case .idle, .transferring, .redirecting, .replaying:
            error =
                curlError.map(convert)
                ?? (response == nil
                    ? .upstreamFailed(
                        reason: .badResponse(detail: "The origin closed the connection without a response."))
                    : nil)
        }
        headTimer?.cancel()
        if let handle { recycle(handle) }
        phase = .finished
        // libcurl hands HTTP/2 trailers over without the empty line that ends a section.
        if error == nil, !trailers.fields.isEmpty { delegate?.task(self, didReceiveTrailers: trailers) }
        session.delegate.task(self, didCompleteWith: error)
    }

    private func recycle(_ handle: EasyHandle) {
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
            guard offset < replayed.body.count else { return finish(curlError: nil) }
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

    private func headerLine(_ line: UnsafeRawBufferPointer) -> EasyHandle.Action {
        guard case .transferring(let transfer) = phase else { return .proceed }
        // After the final head, header lines are the trailer section (chunked coding's, or
        // HTTP/2's trailing HEADERS: gRPC's status): kept for the client, bounded like a head.
        if response != nil { return trailerLine(line) }
        let step = transfer.head.consume(line)
        switch step {
        case .more:
            return .proceed
        case .interim(var head):
            // 1xx: passed on (RFC 9110 §15.2) while the final response is awaited. 100 answers an
            // Expect that Sluice owns (libcurl sends none) and 101 an Upgrade it never forwards.
            if head.status != 100, head.status != 101 {
                HopByHop.strip(&head.headers)
                delegate?.task(self, didReceiveInterim: head)
            }
            return .proceed
        case .final(var head):
            // Framing fields are never rewritten (refused by the configuration): the checked
            // framing stands.
            currentRequest.responseRewrite?.apply(to: &head.headers)
            return headDidComplete(head, transfer: transfer)
        case .refused(let detail):
            return abort(.upstreamFailed(reason: .badResponse(detail: detail)))
        case .notHTTP:
            // libcurl 7.88 can hand an HTTP/2 stream's trailers over before its head when the
            // whole stream arrived in one read (a small gRPC answer): a field line before any
            // status line is kept as a trailer, and the head still follows.
            if transfer.head.isBetweenSections, line.contains(UInt8(ascii: ":")), trailerBytes < 16 * 1024 {
                return trailerLine(line)
            }
            return .abort
        }
    }

    /// One trailer line, kept for the delegate (told at completion, before the end).
    private func trailerLine(_ line: UnsafeRawBufferPointer) -> EasyHandle.Action {
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        guard end > 0 else { return .proceed }  // the section's end: handed over at completion
        trailerBytes += line.count
        guard trailerBytes <= 16 * 1024, let colon = line[..<end].firstIndex(of: UInt8(ascii: ":")) else {
            return .proceed  // beyond the limit, or not a field: dropped (the body is complete)
        }
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
        let value = UnsafeRawBufferPointer(rebasing: line[(colon + 1)..<end])
        guard ResponseFraming.nameViolation(name) == nil, ResponseFraming.valueViolation(value) == nil else {
            return .proceed
        }
        trailers.append(
            name: String(decoding: name, as: UTF8.self), value: String(decoding: value, as: UTF8.self).trimmingOWS())
        return .proceed
    }

    private func headDidComplete(_ head: ResponseHead, transfer: Transfer) -> EasyHandle.Action {
        headTimer?.cancel()
        timeToHead = Double(EventLoop.monotonicNanoseconds() - transfer.startTime) / 1e9
        if head.status == 407, let parent = currentRequest.parent, currentRequest.url.scheme == "http" {
            // The parent's own answer to an absolute-form request: Sluice is the client's proxy,
            // so the client must not be asked for the parent's credentials.
            return abort(.upstreamFailed(reason: .parentAuthRequired(parent: parent.description)))
        }
        response = head
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

// MARK: - libcurl callbacks

extension UpstreamTask: EasyHandleDelegate {
    public func easyHandle(_ handle: EasyHandle, didReceiveHeaderLine line: UnsafeRawBufferPointer) -> EasyHandle.Action
    {
        headerLine(line)
    }

    public func easyHandle(_ handle: EasyHandle, didReceiveBody bytes: UnsafeRawBufferPointer) -> EasyHandle.Action {
        if case .redirecting = phase { return .proceed }  // a followed 3xx: its body is discarded
        guard let delegate else { return .abort }
        if delegate.task(self, didReceive: bytes) {
            bodyBytes += Int64(bytes.count)
            return .proceed
        }
        return .pause
    }

    public func easyHandle(_ handle: EasyHandle, fillUploadBuffer buffer: UnsafeMutableRawBufferPointer)
        -> EasyHandle.UploadResult
    {
        guard let delegate else { return .abort }
        bodyStarted = true
        switch delegate.task(self, fillBody: buffer) {
        case .bytes(let count): return .bytes(count)
        case .end: return .end
        case .wait: return .pause
        case .failed:
            _ = abort(.badRequest(reason: .malformed("the request body failed")))
            return .abort
        }
    }

    public func easyHandle(_ handle: EasyHandle, mayConnectTo address: SocketAddress) -> Bool {
        // Through a parent the socket goes to the parent, which the configuration named.
        if currentRequest.parent != nil { return true }
        guard let refusal = session.targetGuard.refusal(address, localClient: currentRequest.fromLocalClient) else {
            return true
        }
        refusedTarget = refusal
        return false
    }
}
