import EventIO

#if canImport(Glibc)
    import Glibc
#endif

/// One request and its response on a pooled connection (RFC 9112): the head and the first body
/// bytes in one write, the rest of the body streamed as the client sends it (its length, or
/// chunked), the response read line by line through the task (``UpstreamTask/receiveHeadLine(_:)``:
/// the same checks and hooks as libcurl's), then its body by its framing, with backpressure both
/// ways. The connection goes back to the pool only when the response was framed exactly, the
/// request body was sent whole and nothing arrived beyond the end; any doubt closes it.
final class NativeTransfer {
    /// Input held from the origin before reading pauses (the client is slower).
    static let readHighWater = 256 * 1024
    /// What one readable event reads of a body that may be large (``readAvailable`` goes on in
    /// pieces of this size when it filled).
    static let bodyReadPiece = 64 * 1024
    /// The least of a body left that is moved in the kernel (``SocketSplice``) rather than read:
    /// below it, a pipe's setup costs more than the copies it saves.
    static let spliceMinimum: Int64 = 128 * 1024
    /// Output queued to the origin before the request body waits for it to drain.
    static let writeHighWater = 256 * 1024
    static let writeLowWater = 64 * 1024

    /// Where the request stands.
    enum Sending {
        /// No connection yet.
        case notYet
        /// The head went out with `Expect: 100-continue`: the body waits for the origin's 100
        /// (or `timeouts.upstream_continue` of silence); a final answer first means it never goes.
        case awaitingContinue(UploadFraming)
        /// The origin answered before it asked for the body: the body is never sent (and the
        /// connection is not reused: the request was never whole).
        case withheld
        /// Body bytes are sent as the client gives them.
        case body(UploadFraming)
        /// The client has no more for now; ``resume()`` goes on.
        case waiting(UploadFraming)
        /// The whole request was written.
        case sent
    }

    /// How the request body is framed upstream, and what is left of it.
    enum UploadFraming {
        case length(remaining: Int64)
        case chunked
    }

    /// Where the response stands.
    enum Reading {
        /// Waiting for a connection, or the request is being sent and nothing arrived.
        case notYet
        /// Header sections (interim ones, then the final one), line by line.
        case head
        /// The body: what is left of it by its framing.
        case body(BodyLeft)
        /// The task refused a piece (`held` bytes, decoded): reading waits for ``resume()``.
        case held(BodyLeft, pending: [UInt8])
        /// The rest of a body of known length moves from the origin's socket to the client's in
        /// the kernel, unseen; the transfer hears when it ended.
        case spliced(SocketSplice)
        /// Ended (whole, failed or cancelled): nothing more is told.
        case done
    }

    /// What is left of a response body.
    enum BodyLeft {
        case exactly(Int64)
        case chunked(ChunkedDecoder)
        case untilClose
    }

    /// The request's method (a HEAD answer has no body) and body framing.
    let method: String
    let body: UpstreamRequest.Body
    /// The request head, made once (a retry sends it again).
    private(set) var head: [UInt8]
    let key: OriginKey
    /// The task it works for. Unowned, not weak (a weak reference gives the task a side table,
    /// and every retain of it the slow path): the task clears it when it goes (its `deinit`).
    unowned var task: UpstreamTask?
    /// The session's transport, which outlives every transfer it carries (it goes with the
    /// session, after the tasks and their transfers): held without reference counting, as it is
    /// read several times a transfer.
    unowned(unsafe) let transport: NativeTransport
    var connection: OriginConnection?
    var sending = Sending.notYet
    var reading = Reading.notYet
    var framing: ResponseBodyFraming?
    /// The connection carried requests before this one (a failure before any answer may be its
    /// close racing this request: tried again once on a new connection when nothing was consumed).
    private var reused = false
    var receivedAny = false
    /// The origin's end of stream was seen.
    var peerClosed = false
    /// Inside a call from the task (``resume()``): the completion waits for the next loop turn.
    private var inTaskCall = false
    var startedAt: UInt64 = 0
    /// New connections opened for this transfer (0: a pooled one was reused).
    private(set) var openedConnections = 0
    var timings = TransferTimings()
    /// Why the target guard refused every address, for the error.
    private(set) var refusal: SluiceError?
    var scratch: [UInt8] = []
    /// The request body waits for the origin's `100 Continue` (RFC 9110 §10.1.1).
    private(set) var expectsContinue: Bool
    /// Sends the body anyway when the origin stays silent (an HTTP/1.0 server ignores the expectation).
    var continueTimer: Timer?

    init(request: UpstreamRequest, task: UpstreamTask, transport: NativeTransport) {
        method = request.method
        body = request.body
        expectsContinue = request.expectsContinue && request.body != .none
        head = RequestHeadWriter.head(request)
        key = OriginKey(request)
        self.task = task
        self.transport = transport
    }

    /// A connection it still holds (a net: every end releases it) stops pointing back at it.
    deinit {
        connection?.user = nil
        continueTimer?.cancel()
    }

    // MARK: - Control (from the task)

    func start() {
        startedAt = EventLoop.monotonicNanoseconds()
        transport.checkout(for: self)
    }

    /// The client drained (the body may go on) or sent more of its body (the upload may go on).
    func resume() {
        inTaskCall = true
        defer { inTaskCall = false }
        if case .waiting(let framing) = sending {
            sending = .body(framing)
            sendBody()
        }
        if case .held(let left, let pending) = reading {
            reading = .body(left)
            if !pending.isEmpty {
                let step = pending.withUnsafeBytes { task?.receiveBody($0) ?? .abort }
                switch step {
                case .proceed: break
                case .pause:
                    reading = .held(left, pending: pending)
                    return
                case .abort: return stop(nil)
                }
            }
            if case .chunked(let decoder) = left, decoder.isFinished {
                // That was the body's last piece: the trailers, then the end.
                passTrailers(decoder.trailerLines)
                return responseEnded()
            }
            connection?.socket?.resumeReading()
            connection?.socket?.readAvailable(upTo: NativeTransfer.readHighWater)
            readResponse()
        }
    }

    /// The task gave up: the connection closes (what it carried is unknown), nothing is told.
    func cancel() {
        guard !isDone else { return }
        if case .spliced(let splice) = reading { splice.cancel() }
        reading = .done
        if let connection {
            self.connection = nil
            transport.release(connection, reusable: false)
        } else {
            transport.withdraw(self)
        }
    }

    var isDone: Bool {
        if case .done = reading { return true }
        return false
    }

    // MARK: - Connection (from the pool)

    /// Whether the transfer still waits for `connection` (it did not give up).
    func isWaiting(for connection: OriginConnection) -> Bool { !isDone && self.connection === connection }

    var wantsConnection: Bool { !isDone && connection == nil }

    func opening(_ connection: OriginConnection) {
        self.connection = connection
        openedConnections += 1
    }

    func mayConnect(to address: SocketAddress) -> Bool {
        if task?.mayConnect(to: address) ?? false { return true }
        if let reason = task?.refusedTarget { refusal = .forbidden(reason: reason) }
        return false
    }

    func couldNotConnect(_ error: SluiceError) {
        connection = nil
        finish(.native(error))
    }

    /// The origin speaks only HTTP/2: libcurl carries the transfer.
    func declined() {
        connection = nil
        finish(.declined)
    }

    /// The connection is ready: the request goes out.
    func begin(on connection: OriginConnection) {
        guard !isDone, let stream = connection.stream else { return }
        // A pooled connection is checked against the guard again: it may have been opened for
        // a local client, and this request's client may not reach loopback.
        if connection.served > 0, let address = connection.address, !mayConnect(to: address) {
            transport.release(connection, reusable: true)
            return finish(
                .native(
                    refusal ?? .forbidden(reason: .targetDenied(target: address.description, rule: "loopback_targets")))
            )
        }
        self.connection = connection
        reused = connection.served > 0
        connection.lend(to: self)
        if !reused {
            let opening = connection.opening
            timings.nameLookup = opening.nameLookup
            timings.connect = opening.connect
            timings.tls = opening.tls
        } else {
            let now = Double(EventLoop.monotonicNanoseconds() &- startedAt) / 1e9
            timings.nameLookup = now
            timings.connect = now
        }
        reading = .head
        if body != .none { connection.readTimeout(false) }
        sendHead(on: stream)
        if case .done = reading { return }
        if stream.inputCount > 0 { readResponse() }
    }

    /// Whether the response head has not come yet (interim heads aside).
    var isAwaitingHead: Bool { if case .head = reading { true } else { false } }

    /// The connection ended (the origin's close, an error, a timeout).
    func ended(_ event: Connection.Event) {
        switch event {
        case .endOfStream:
            peerClosed = true
            readResponse()
            if case .done = reading { return }
            if case .held = reading { return }  // the rest is read when the client takes it
            _ = endOfInput()
        case .error(let code, _):
            // An alert that came before the reset (an origin refusing a handshake's client
            // certificate, or its absence, then closing) says why better than the reset.
            if case .head = reading, let tls = connection?.stream as? TLSStream {
                _ = tls.inputCount  // decrypts what came
                if tls.failure != nil {
                    return stop(.native(.upstreamFailed(reason: .badResponse(detail: closedInHeadDetail()))))
                }
            }
            // A reset is never a close-delimited body's end: the body may be cut.
            if case .head = reading, mayRetry { return retry() }
            let detail = String(cString: strerror(code))
            // A TLS origin that wants a client certificate and got none often resets the
            // connection (its alert lost with the reset): said as what it may be.
            var hint = ""
            if case .head = reading, key.scheme == "https", key.trust?.clientCertificate == nil {
                hint = UpstreamTrust.clientCertificateHint
            }
            stop(
                .native(
                    .upstreamFailed(
                        reason: .badResponse(detail: "The connection to the origin failed (\(detail)).\(hint)"))))
        case .timeout(reading: true) where isAwaitingHead:
            // Until the head, `timeouts.upstream_response` is the limit (the task's head timer),
            // not `upstream_idle`: a slow API may think longer than its body may stall. Reading
            // goes on (the timer with it); nothing is re-armed per request on the common path.
            connection?.socket?.resumeReading()
        case .timeout:
            stop(
                .native(
                    .upstreamFailed(
                        reason: .timedOut(
                            detail:
                                "The origin sent nothing for \(transport.settings.idleTimeoutMilliseconds) ms.")))
            )
        case .connected:
            break
        }
    }

    /// Whether a failure before any answer may be the origin's idle close racing this request on
    /// a reused connection, and the request may go again: nothing of the answer arrived, the
    /// request sent no body (it has none, or it still waits for the origin's 100), and its
    /// method is idempotent (RFC 9110 §9.2.2).
    var mayRetry: Bool {
        guard !receivedAny, reused else { return false }
        if body != .none {
            guard case .awaitingContinue = sending else { return false }
        }
        switch method {
        case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE": return true
        default: return false
        }
    }

    /// A reused connection closed before any answer (the origin's idle close raced this
    /// request): the request, which sent no body yet, goes again on a new connection.
    func retry() {
        guard let connection else { return }
        self.connection = nil
        transport.release(connection, reusable: false)
        reading = .notYet
        sending = .notYet
        continueTimer?.cancel()
        reused = false
        receivedAny = false
        peerClosed = false
        transport.checkout(for: self, fresh: true)
    }

    /// The head went with `Expect: 100-continue` and none of the body has gone yet.
    var awaitsContinue: Bool {
        if case .awaitingContinue = sending { return true }
        return false
    }

    /// The origin answered the expectation with 417 before any of the body went (RFC 9110
    /// §10.1.1: a client repeats the request without it): the same request goes again on a new
    /// connection, its head without `Expect`, its body with it (the task did not pass the 417 on).
    func repeatWithoutExpectation() {
        guard connection != nil, case .awaitingContinue = sending, let request = task?.currentRequest else {
            return stop(nil)
        }
        expectsContinue = false
        head = RequestHeadWriter.head(request)  // the task's request has no expectation now
        retry()
    }

    // MARK: - Ending

    /// A body that may be large is read a socket's worth per readable event (one system call and
    /// one piece to pass on), a head a small piece at a time.
    func readLargePieces(_ large: Bool) {
        connection?.socket?.readPiece = large ? NativeTransfer.bodyReadPiece : Connection.smallReadPiece
    }

    /// The response ended by its framing: the connection goes back when nothing is in doubt
    /// (`beyondTheEnd`: bytes arrived after the body's end that the input buffer does not show).
    func responseEnded(beyondTheEnd: Bool = false) {
        readLargePieces(false)
        guard let connection else { return }
        var clean = !beyondTheEnd && (framing?.keepAlive ?? false)
        if case .sent = sending {} else { clean = false }  // the origin answered before the whole request
        if peerClosed || (connection.stream?.inputCount ?? 1) > 0 { clean = false }  // bytes beyond the end
        if (connection.stream as? TLSStream)?.inputEnded == true { clean = false }  // the origin's close_notify
        self.connection = nil
        reading = .done
        transport.release(connection, reusable: clean)
        finish(nil)
    }

    /// Stops with the connection closed; `failure` (`nil`: the task's own error stands).
    func stop(_ failure: TransferFailure?) {
        if let connection {
            self.connection = nil
            transport.release(connection, reusable: false)
        }
        finish(failure)
    }

    /// Tells the task, once (at the next loop turn when inside its own call).
    func finish(_ failure: TransferFailure?) {
        if case .spliced(let splice) = reading { splice.cancel() }
        continueTimer?.cancel()
        reading = .done
        guard let task else { return }
        if inTaskCall {
            transport.loop.callSoon { [weak task] in task?.transferDidComplete(failure: failure) }
        } else {
            task.transferDidComplete(failure: failure)
        }
    }
}
