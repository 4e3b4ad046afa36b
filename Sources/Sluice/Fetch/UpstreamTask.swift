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
    /// The will-cache hook's answer at completion: `nil` = no hook ran, `.some(nil)` = store nothing,
    /// otherwise the proposal to store (perhaps changed).
    public private(set) var cachingDecision: CachedResponseProposal?? = nil
    /// Whether a request body read has begun (the body cannot be replayed after that).
    public private(set) var bodyStarted = false

    /// Runs the will-cache hook on the complete response (``cachingDecision``); returns what is
    /// proposed for storing after it (the proposal itself when no hook is set; `nil`: store nothing).
    func decideCaching(for response: ResponseHead) -> CachedResponseProposal? {
        let proposal = CachedResponseProposal(request: currentRequest, response: response, bodyBytes: bodyBytes)
        guard let handler = hooks.cachedResponseHandler else { return proposal }
        let decided = handler.task(self, willCache: proposal)
        cachingDecision = .some(decided)
        return decided
    }

    weak var delegate: (any TaskDelegate)?
    unowned let session: Session
    var handle: EasyHandle?
    private var headTimer: Timer?
    private var startTime: UInt64 = 0
    private var building: ResponseHead?
    /// Bytes of the header section being received (`limits.max_header_bytes`).
    private var headBytes = 0
    private var pendingRedirect: UpstreamRequest?
    private var failure: SluiceError?
    private var finished = false
    /// Set by the connection filter when it refused an address that is this proxy.
    var refusedTarget: SluiceError.ForbiddenReason?

    init(id: Int, request: UpstreamRequest, delegate: any TaskDelegate, hooks: Hooks, session: Session) {
        self.id = id
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
    public var isFinished: Bool { finished }

    // MARK: - Control

    /// Sends the request (the first time) or the next one after a followed redirect.
    /// The delegate may hear the completion before this returns (an immediate failure).
    public func start() {
        if startTime == 0 { session.eventMonitor.taskDidStart(self) }
        startTime = EventLoop.monotonicNanoseconds()
        if startedAt == 0 { startedAt = startTime }
        let handle = session.checkoutHandle()
        self.handle = handle
        handle.delegate = self
        session.configure(handle, for: currentRequest)
        building = nil
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
        guard !finished, let handle, handle.isActive else { return }
        handle.unpause()
    }

    /// Stops the task; the delegate hears `didCompleteWith` at the next loop turn.
    public func cancel(_ error: SluiceError) { fail(error) }

    private func fail(_ error: SluiceError) {
        guard !finished, failure == nil else { return }
        failure = error
        pendingRedirect = nil
        if let handle, handle.isActive {
            session.multi.remove(handle)
        }
        session.loop.callSoon { [self] in self.finish(curlError: nil) }
    }

    // MARK: - Completion

    func transferDidComplete(error: CurlError?) {
        headTimer?.cancel()
        openedConnections += handle?.newConnections ?? 0
        timings = handle?.timings
        if failure == nil, let next = pendingRedirect {
            pendingRedirect = nil
            recycleHandle()
            currentRequest = next
            start()
            return
        }
        finish(curlError: error)
    }

    private func finish(curlError: CurlError?) {
        guard !finished else { return }
        finished = true
        headTimer?.cancel()
        var error = failure
        if error == nil, let curlError { error = convert(curlError) }
        if error == nil, response == nil {
            error = .upstreamFailed(
                reason: .badResponse(detail: "The origin closed the connection without a response."))
        }
        recycleHandle()
        session.delegate.task(self, didCompleteWith: error)
    }

    private func recycleHandle() {
        if let handle {
            handle.delegate = nil
            if !handle.isActive { session.recycle(handle) }
        }
        handle = nil
    }

    // MARK: - Response head

    private func headerLine(_ line: UnsafeRawBufferPointer) -> EasyHandle.Action {
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        let text = UnsafeRawBufferPointer(rebasing: line[0..<end])
        headBytes += line.count
        if headBytes > session.settings.maxHeaderBytes {
            // libcurl's own limit (100 KiB per header section) would only say "Out of memory".
            return refuse("The origin's response header section exceeds \(session.settings.maxHeaderBytes) bytes.")
        }
        if text.isEmpty {
            headBytes = 0
            guard var head = building else { return .proceed }
            building = nil
            guard head.status >= 200 else {
                // 1xx: passed on (RFC 9110 §15.2) while the final response is awaited. 100 answers an
                // Expect that Sluice owns (libcurl sends none) and 101 an Upgrade it never forwards.
                if head.status != 100, head.status != 101 {
                    HopByHop.strip(&head.headers)
                    delegate?.task(self, didReceiveInterim: head)
                }
                return .proceed
            }
            if let violation = ResponseFraming.violation(&head) { return refuse(violation) }
            return headDidComplete(head)
        }
        if building == nil {
            building = StatusLine.parse(text)
            return building == nil ? .abort : .proceed
        }
        guard building != nil else { return .proceed }
        if let first = text.first, first == 0x20 || first == 0x09, let last = building!.headers.fields.last {
            // obs-fold from an origin: replace with a space (RFC 9112 §5.2).
            if let violation = ResponseFraming.valueViolation(UnsafeRawBufferPointer(rebasing: text[1...])) {
                return refuse(violation)
            }
            var headers = building!.headers
            headers.remove(last.name)
            headers.append(
                name: last.name, value: last.value + " " + String(decoding: text, as: UTF8.self).trimmingOWS())
            building!.headers = headers
            return .proceed
        }
        guard let colon = text.firstIndex(of: UInt8(ascii: ":")) else {
            return refuse("The origin sent a header line without a colon.")
        }
        var start = colon + 1
        var stop = text.count
        while start < stop, text[start] == 0x20 || text[start] == 0x09 { start += 1 }
        while stop > start, text[stop - 1] == 0x20 || text[stop - 1] == 0x09 { stop -= 1 }
        var nameEnd = colon
        while nameEnd > 0, text[nameEnd - 1] == 0x20 || text[nameEnd - 1] == 0x09 { nameEnd -= 1 }
        let nameBytes = UnsafeRawBufferPointer(rebasing: text[..<nameEnd])
        let valueBytes = UnsafeRawBufferPointer(rebasing: text[start..<stop])
        if let violation = ResponseFraming.nameViolation(nameBytes) ?? ResponseFraming.valueViolation(valueBytes) {
            return refuse(violation)
        }
        let name = String(decoding: nameBytes, as: UTF8.self)
        let value = String(decoding: valueBytes, as: UTF8.self)
        building!.headers.append(name: name, value: value)
        return .proceed
    }

    /// Stops a transfer whose head must not be relayed: the client gets 502.
    private func refuse(_ detail: String) -> EasyHandle.Action {
        failure = .upstreamFailed(reason: .badResponse(detail: detail))
        return .abort
    }

    private func headDidComplete(_ head: ResponseHead) -> EasyHandle.Action {
        headTimer?.cancel()
        timeToHead = Double(EventLoop.monotonicNanoseconds() - startTime) / 1e9
        if head.status == 407, let parent = currentRequest.parent, currentRequest.url.scheme == "http" {
            // The parent's own answer to an absolute-form request: Sluice is the client's proxy,
            // so the client must not be asked for the parent's credentials.
            failure = .upstreamFailed(reason: .parentAuthRequired(parent: parent.description))
            return .abort
        }
        response = head
        switch session.delegate.task(self, didReceiveHead: head) {
        case .deliver:
            delegate?.task(self, didReceive: head)
            return .proceed
        case .follow(let next, let state):
            redirectState = state
            pendingRedirect = next
            return .proceed
        case .fail(let error):
            failure = error
            return .abort
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
        if pendingRedirect != nil { return .proceed }  // a followed 3xx: its body is discarded
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
            failure = failure ?? .badRequest(reason: .malformed("the request body failed"))
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

/// Status lines of upstream responses.
enum StatusLine {
    /// `HTTP/1.1 200 OK`, `HTTP/2 200`; `nil` if it is not a status line.
    static func parse(_ text: UnsafeRawBufferPointer) -> ResponseHead? {
        guard text.starts(with: "HTTP/".utf8), let space = text.firstIndex(of: 0x20) else { return nil }
        let version = String(decoding: text[5..<space], as: UTF8.self)
        let rest = text[(space + 1)...]
        guard rest.count >= 3 else { return nil }
        let codeBytes = rest.prefix(3)
        guard codeBytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let code = Int(String(decoding: codeBytes, as: UTF8.self))
        else { return nil }
        var reason = ""
        if rest.count > 3 {
            guard rest[rest.startIndex + 3] == 0x20 else { return nil }
            // Control bytes never reach a client's status line.
            let text = rest.dropFirst(4)
            func allowed(_ byte: UInt8) -> Bool { byte >= 0x20 && byte != 0x7F || byte == 0x09 }
            reason =
                text.allSatisfy(allowed)
                ? String(decoding: text, as: UTF8.self) : String(decoding: text.filter(allowed), as: UTF8.self)
        }
        return ResponseHead(
            status: code, reason: reason, version: version == "2" ? "2" : version, headers: HTTPFields(capacity: 16))
    }
}
