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
    public internal(set) var currentRequest: UpstreamRequest
    /// The final response head, once it arrived.
    public internal(set) var response: ResponseHead?
    /// The followed-redirect chain.
    public internal(set) var redirectState: RedirectState
    /// This task's hooks: its own, merged over the session's when it was made.
    public let hooks: Hooks
    /// Response body bytes received so far.
    public internal(set) var bodyBytes: Int64 = 0
    /// What is left of the current response's plain body framed by its length, when libcurl
    /// carries it straight from the origin (0: none, or all arrived): at its end the connection
    /// is checked for bytes beyond it.
    var curlBodyLeft: Int64 = 0
    /// Seconds from start to the response head.
    public internal(set) var timeToHead: Double?
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
    public internal(set) var bodyStarted = false

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
    var trailers = HTTPFields()
    var trailerBytes = 0
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

    /// Set by this file and its `+` extensions only.
    var phase = Phase.idle

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
    var transfer: Transfer? {
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

    /// The wait for the head counts from the request sent: while its body moves it starts over
    /// with each piece (an hour-long upload is no origin slow to answer), and an origin that stops
    /// taking the body is still timed. While the body waits for its client, the time is the
    /// client's: `timeouts.client_body` times it (a `408`, RFC 9110 §15.5.9, not the origin's
    /// `504`), and the wait for the head stops until the next piece. Where nothing else watches
    /// the client (`client_body: 0`) it goes on, and a pause longer than the limit ends the
    /// exchange. A gRPC call's client may keep its stream open and quiet as long as it likes,
    /// and its server answer at the stream's end (client streaming): its wait stops too (the
    /// call's own deadline, `grpc-timeout`, is its server's).
    func uploadDid(_ chunk: BodyChunk) {
        guard let headTimer else { return }
        switch chunk {
        case .bytes, .end: headTimer.timer.schedule(milliseconds: session.settings.responseTimeoutMilliseconds)
        case .wait:
            if session.settings.clientBodyTimed || GRPCAnswer.isCall(contentType: currentRequest.headers[.contentType])
            {
                headTimer.timer.cancel()
            }
        case .failed: return
        }
    }

    /// No head within `timeouts.upstream_response`.
    func headTimedOut() {
        let limit = session.settings.responseTimeoutMilliseconds
        fail(.upstreamFailed(reason: .timedOut(detail: "No response headers from the origin within \(limit) ms.")))
    }

    /// Gives the head timer back to the session (disarmed): the head came or the transfer ended.
    func returnHeadTimer() {
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
    func abort(_ error: SluiceError) -> TransferStep {
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
            guard offset < replayed.body.count else {
                if !replayed.trailers.fields.isEmpty { delegate?.task(self, didReceiveTrailers: replayed.trailers) }
                return finish(failure: nil)
            }
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
}
