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
    private let head: [UInt8]
    let key: OriginKey
    /// The task it works for. Unowned, not weak (a weak reference gives the task a side table,
    /// and every retain of it the slow path): the task clears it when it goes (its `deinit`).
    unowned var task: UpstreamTask?
    /// The session's transport, which outlives every transfer it carries (it goes with the
    /// session, after the tasks and their transfers): held without reference counting, as it is
    /// read several times a transfer.
    unowned(unsafe) let transport: NativeTransport
    private var connection: OriginConnection?
    private var sending = Sending.notYet
    private var reading = Reading.notYet
    private var framing: ResponseBodyFraming?
    /// The connection carried requests before this one (a failure before any answer may be its
    /// close racing this request: tried again once on a new connection when nothing was consumed).
    private var reused = false
    private var receivedAny = false
    /// The origin's end of stream was seen.
    private var peerClosed = false
    /// Inside a call from the task (``resume()``): the completion waits for the next loop turn.
    private var inTaskCall = false
    private var startedAt: UInt64 = 0
    /// New connections opened for this transfer (0: a pooled one was reused).
    private(set) var openedConnections = 0
    private(set) var timings = TransferTimings()
    /// Why the target guard refused every address, for the error.
    private(set) var refusal: SluiceError?
    private var scratch: [UInt8] = []

    init(request: UpstreamRequest, task: UpstreamTask, transport: NativeTransport) {
        method = request.method
        body = request.body
        head = RequestHeadWriter.head(request)
        key = OriginKey(request)
        self.task = task
        self.transport = transport
    }

    /// A connection it still holds (a net: every end releases it) stops pointing back at it.
    deinit { connection?.user = nil }

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

    private var isDone: Bool {
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

    // MARK: - Sending

    /// The request head, with the first body piece when one is ready (one write).
    private func sendHead(on stream: any ClientStream) {
        switch body {
        case .none:
            sending = .sent
            head.withUnsafeBytes { stream.write($0, more: false) }
        case .length(let count):
            sending = .body(.length(remaining: count))
            sendBody(after: head)
        case .streamed:
            sending = .body(.chunked)
            sendBody(after: head)
        }
    }

    /// Sends request-body pieces while the client has them and the origin takes them; `head`
    /// (not sent yet) goes out with the first piece.
    private func sendBody(after head: [UInt8] = []) {
        var head = head
        defer {
            if !head.isEmpty, let stream = connection?.stream { head.withUnsafeBytes { stream.write($0, more: false) } }
        }
        while case .body(let framing) = sending, let stream = connection?.stream {
            if stream.outputCount >= NativeTransfer.writeHighWater { return }  // writable() goes on
            if scratch.isEmpty { scratch = [UInt8](repeating: 0, count: 64 * 1024) }
            let chunk = scratch.withUnsafeMutableBytes { task?.fillUpload($0) ?? .failed }
            switch chunk {
            case .bytes(let count) where count > 0:
                switch framing {
                case .length(let remaining):
                    guard Int64(count) <= remaining else {
                        return stop(
                            .native(.badRequest(reason: .malformed("the request body is longer than announced"))))
                    }
                    sending = .body(.length(remaining: remaining - Int64(count)))
                    scratch.withUnsafeBytes { piece in
                        let body = UnsafeRawBufferPointer(rebasing: piece[0..<count])
                        head.withUnsafeBytes { stream.write($0, body, more: false) }
                    }
                case .chunked:
                    let size = Array((String(count, radix: 16) + "\r\n").utf8)
                    scratch.withUnsafeBytes { piece in
                        let body = UnsafeRawBufferPointer(rebasing: piece[0..<count])
                        head.withUnsafeBytes { head in
                            size.withUnsafeBytes { size in
                                RequestHeadWriter.crlf.withUnsafeBytes { crlf in
                                    stream.write(head, size, body, crlf, more: false)
                                }
                            }
                        }
                    }
                }
                head = []
            case .bytes, .wait:
                sending = .waiting(framing)
                return
            case .end:
                if case .length(let remaining) = framing, remaining > 0 {
                    return stop(.native(.badRequest(reason: .malformed("the request body ended before its length"))))
                }
                if case .chunked = framing {
                    head.append(contentsOf: "0\r\n\r\n".utf8)
                }
                sending = .sent
                connection?.readTimeout(true)  // now the origin has everything: it must answer
            case .failed:
                return stop(nil)  // the task has failed: its error is reported
            }
        }
    }

    /// The origin took what was queued.
    func writable() {
        if case .body = sending { sendBody() }
    }

    // MARK: - Reading

    /// Bytes from the origin.
    func readable() {
        guard let stream = connection?.stream else { return }
        // A body: what the socket holds now, in one buffer (libevent reads 4 KiB per event, and
        // each piece would be a delivery and a client write of its own).
        if case .body = reading { connection?.socket?.readAvailable(upTo: NativeTransfer.readHighWater) }
        if stream.inputCount > 0 { receivedAny = true }
        if timings.firstByte == 0 { timings.firstByte = Double(EventLoop.monotonicNanoseconds() &- startedAt) / 1e9 }
        readResponse()
        // TLS: the origin's close_notify ends its side as a close would.
        if !isDone, let tls = stream as? TLSStream, tls.inputEnded, tls.inputCount == 0 { ended(.endOfStream) }
    }

    /// Reads what is buffered: header lines, then body pieces by the framing.
    private func readResponse() {
        while let stream = connection?.stream {
            switch reading {
            case .notYet, .held, .spliced, .done:
                return
            case .head:
                guard readHead(stream) else { return }
            case .body(let left):
                guard readBody(left, stream) else { return }
            }
        }
    }

    /// What one pass over the buffered head found.
    private enum HeadRead {
        /// The buffer ends inside a line.
        case partial
        /// A line longer than the head may be.
        case tooLong
        /// The step of the last line the task took.
        case line(UpstreamTask.HeadLine)
    }

    /// Header lines while whole ones are buffered, handed to the task in one pass over the
    /// buffer; `false` when more input is needed (or the transfer stopped).
    private func readHead(_ stream: any ClientStream) -> Bool {
        guard stream.inputCount > 0 else { return endOfInput() }
        let limit = transport.settings.maxHeaderBytes + 4
        var consumed = 0
        func lines(_ bytes: UnsafeRawBufferPointer) -> HeadRead {
            guard let task else { return .line(.abort) }
            while true {
                guard let step = task.receiveHeadLines(bytes, consumed: &consumed) else {
                    return consumed == 0 && bytes.count >= limit ? .tooLong : .partial
                }
                // The task may have stopped this transfer (its connection, and this buffer, gone).
                guard case .more = step, !isDone, connection != nil else { return .line(step) }
            }
        }
        // The head is nearly always in the first piece of the buffer: read there, and make the
        // buffer contiguous (a copy) only for a line that crosses pieces.
        var segment = 0
        var found = stream.withFirstInputSegment { bytes in
            segment = bytes.count
            return lines(bytes)
        }
        if case .partial = found, consumed == 0, !isDone, stream.inputCount > segment {
            found = stream.withInput(upTo: limit) { lines($0) }
        }
        stream.drainInput(consumed)
        let step: UpstreamTask.HeadLine
        switch found {
        case .partial where consumed > 0:
            return true  // lines were taken: the rest of the buffer is looked at again
        case .partial:
            return peerClosed ? endOfInput() : false
        case .tooLong:
            stop(
                .native(
                    .upstreamFailed(
                        reason: .badResponse(
                            detail:
                                "The origin's response header section exceeds \(transport.settings.maxHeaderBytes) bytes."
                        ))))
            return false
        case .line(let last):
            step = last
        }
        // The task may have stopped the transfer while it took the head (a hook cancelled it).
        guard !isDone, connection != nil else { return false }
        switch step {
        case .more:
            return false  // the task stopped the transfer
        case .final(let head):
            let framing = ResponseBodyFraming.of(method: method, head: head)
            self.framing = framing
            switch framing.length {
            case .none:
                responseEnded()
                return false
            case .exactly(let count):
                if count == 0 {
                    responseEnded()
                    return false
                }
                reading = .body(.exactly(count))
                if count > Int64(Connection.smallReadPiece) { readLargePieces(true) }
            case .chunked:
                reading = .body(.chunked(ChunkedDecoder(maxMetadataBytes: 16 * 1024)))
                readLargePieces(true)
            case .untilClose:
                reading = .body(.untilClose)
                readLargePieces(true)
            }
            return true
        case .abort:
            stop(nil)
            return false
        }
    }

    /// Body bytes by the framing; `false` when more input is needed (or the transfer ended).
    private func readBody(_ left: BodyLeft, _ stream: any ClientStream) -> Bool {
        guard stream.inputCount > 0 else {
            if case .exactly(let remaining) = left, !peerClosed, splice(remaining) { return false }
            return endOfInput()
        }
        switch left {
        case .exactly(let remaining):
            return readRaw(left, upTo: remaining, stream)
        case .chunked(var decoder):
            if scratch.isEmpty { scratch = [UInt8](repeating: 0, count: 64 * 1024) }
            let decoded: Result<ChunkedDecoder.Step, SluiceError> = stream.withFirstInputSegment { segment in
                scratch.withUnsafeMutableBytes { output in
                    do throws(SluiceError) {
                        return .success(try decoder.decode(segment, into: output))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            guard case .success(let step) = decoded else {
                var detail = "The origin's chunked body is malformed."
                if case .failure(.badRequest(reason: .malformed(let what))) = decoded {
                    detail = "The origin's chunked body is malformed (\(what))."
                }
                stop(.native(.upstreamFailed(reason: .badResponse(detail: detail))))
                return false
            }
            stream.drainInput(step.consumed)
            var outcome = TransferStep.proceed
            if step.produced > 0 {
                outcome = scratch.withUnsafeBytes {
                    task?.receiveBody(UnsafeRawBufferPointer(rebasing: $0[0..<step.produced])) ?? .abort
                }
            }
            switch outcome {
            case .proceed:
                if step.finished {
                    passTrailers(decoder.trailerLines)
                    responseEnded()
                    return false
                }
                reading = .body(.chunked(decoder))
                return true
            case .pause:
                // The decoded piece is out of the input: kept, even with the body's end (then
                // the transfer ends once the client takes it).
                return hold(.chunked(decoder), pending: Array(scratch[0..<step.produced]))
            case .abort:
                stop(nil)
                return false
            }
        case .untilClose:
            return readRaw(left, upTo: .max, stream)
        }
    }

    /// A body piece as it is in the buffer (by a length, or until the close), at most `remaining`
    /// bytes of it; `false` when the body ended, the transfer stopped or it waits for the client.
    private func readRaw(_ left: BodyLeft, upTo remaining: Int64, _ stream: any ClientStream) -> Bool {
        let (step, taken) = stream.withFirstInputSegment { segment -> (TransferStep, Int) in
            let count = Int(min(Int64(segment.count), remaining))
            return (task?.receiveBody(UnsafeRawBufferPointer(rebasing: segment[0..<count])) ?? .abort, count)
        }
        switch step {
        case .proceed:
            stream.drainInput(taken)
            guard case .exactly = left else { return true }
            if remaining == Int64(taken) {
                responseEnded()
                return false
            }
            reading = .body(.exactly(remaining - Int64(taken)))
            return true
        case .pause:
            return hold(left, pending: [])
        case .abort:
            stop(nil)
            return false
        }
    }

    /// The task refused a piece: reading pauses until ``resume()`` (`pending`: decoded bytes
    /// already taken from the input, offered first then).
    private func hold(_ left: BodyLeft, pending: [UInt8]) -> Bool {
        reading = .held(left, pending: pending)
        connection?.socket?.pauseReading()
        return false
    }

    /// Each trailer line to the task (it keeps them for the client).
    private func passTrailers(_ lines: [UInt8]) {
        guard !lines.isEmpty, let task else { return }
        lines.withUnsafeBytes { bytes in
            var start = 0
            while let newline = bytes[start...].firstIndex(of: 0x0A) {
                _ = task.receiveHeadLine(UnsafeRawBufferPointer(rebasing: bytes[start...newline]))
                start = newline + 1
            }
        }
    }

    /// No input buffered: wait, or (after the origin's close) end by the framing.
    private func endOfInput() -> Bool {
        guard peerClosed else { return false }
        switch reading {
        case .body(.untilClose):
            // Over TLS a close-delimited body is whole only after the origin's close_notify
            // (RFC 9112 §9.8): a bare close may be a truncation.
            if let tls = connection?.stream as? TLSStream, !tls.inputEnded {
                stop(
                    .native(
                        .upstreamFailed(
                            reason: .badResponse(
                                detail:
                                    "The origin closed the TLS connection without close_notify before a close-delimited body was known to be whole."
                            ))))
            } else {
                responseEnded()
            }
        case .head where mayRetry:
            retry()
        case .head:
            stop(
                .native(
                    .upstreamFailed(
                        reason: .badResponse(detail: "The origin closed the connection without a response."))))
        case .body:
            stop(
                .native(
                    .upstreamFailed(
                        reason: .badResponse(detail: "The origin closed the connection before the end of the body."))))
        case .notYet, .held, .spliced, .done:
            break
        }
        return false
    }

    // MARK: - Splicing

    /// The rest of a body of known length, none of it buffered here, moves in the kernel from the
    /// origin's plain socket to the client's when it is large and the task lets it go unseen
    /// (nothing stores, checks, transforms, captures or shapes it); `false` leaves it to reading.
    private func splice(_ remaining: Int64) -> Bool {
        guard remaining >= NativeTransfer.spliceMinimum, let socket = connection?.stream as? Connection,
            let sink = task?.spliceSink(for: remaining),
            let splice = SocketSplice(
                loop: transport.loop, from: socket, to: sink, count: remaining,
                timeoutMilliseconds: transport.settings.idleTimeoutMilliseconds,
                done: { [weak self] outcome in self?.spliceEnded(outcome) })
        else { return false }
        reading = .spliced(splice)
        splice.start()
        return true
    }

    /// Bytes moved by a splice still running.
    var splicedSoFar: Int64 {
        if case .spliced(let splice) = reading { return splice.moved }
        return 0
    }

    /// The splice ended: the body is whole, or the transfer fails as reading it would have.
    private func spliceEnded(_ outcome: SocketSplice.Outcome) {
        guard case .spliced(let splice) = reading else { return }
        reading = .body(.exactly(0))
        if splice.moved > 0 { task?.receiveSpliced(splice.moved, whole: outcome == .moved) }
        guard !isDone, connection != nil else { return }
        switch outcome {
        case .moved:
            // Bytes beyond the end stayed in the socket, unseen: the connection is not reused.
            let stray = connection?.socket?.hasWaitingInput ?? true
            connection?.socket?.resumeReading()  // an idle connection's close is seen by reading
            responseEnded(beyondTheEnd: stray)
        case .sourceEnded:
            peerClosed = true
            stop(
                .native(
                    .upstreamFailed(
                        reason: .badResponse(detail: "The origin closed the connection before the end of the body."))))
        case .sourceFailed(let code?):
            let detail = String(cString: strerror(code))
            stop(
                .native(
                    .upstreamFailed(reason: .badResponse(detail: "The connection to the origin failed (\(detail))."))))
        case .sourceFailed(nil):
            stop(
                .native(
                    .upstreamFailed(
                        reason: .timedOut(
                            detail: "The origin sent nothing for \(transport.settings.idleTimeoutMilliseconds) ms."))))
        case .sinkFailed:
            // The client is gone or stalled: its connection tells the exchange, which cancels
            // this transfer. The origin's connection closes now, mid-body; should nobody cancel,
            // the transfer fails at the next turn.
            if let connection {
                self.connection = nil
                transport.release(connection, reusable: false)
            }
            transport.loop.callSoon { [weak self] in
                guard let self, !self.isDone else { return }
                self.finish(
                    .native(.upstreamFailed(reason: .cancelled(detail: "The client stopped taking the response."))))
            }
        }
    }

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
            // A reset is never a close-delimited body's end: the body may be cut.
            if case .head = reading, mayRetry { return retry() }
            let detail = String(cString: strerror(code))
            stop(
                .native(
                    .upstreamFailed(reason: .badResponse(detail: "The connection to the origin failed (\(detail))."))))
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
    /// request sent no body, and its method is idempotent (RFC 9110 §9.2.2).
    private var mayRetry: Bool {
        guard !receivedAny, reused, body == .none else { return false }
        switch method {
        case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE": return true
        default: return false
        }
    }

    /// A reused connection closed before any answer (the origin's idle close raced this
    /// request): the request, which sent no body, goes again on a new connection.
    private func retry() {
        guard let connection else { return }
        self.connection = nil
        transport.release(connection, reusable: false)
        reading = .notYet
        sending = .notYet
        reused = false
        receivedAny = false
        peerClosed = false
        transport.checkout(for: self, fresh: true)
    }

    // MARK: - Ending

    /// A body that may be large is read a socket's worth per readable event (one system call and
    /// one piece to pass on), a head a small piece at a time.
    private func readLargePieces(_ large: Bool) {
        connection?.socket?.readPiece = large ? NativeTransfer.bodyReadPiece : Connection.smallReadPiece
    }

    /// The response ended by its framing: the connection goes back when nothing is in doubt
    /// (`beyondTheEnd`: bytes arrived after the body's end that the input buffer does not show).
    private func responseEnded(beyondTheEnd: Bool = false) {
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
    private func stop(_ failure: TransferFailure?) {
        if let connection {
            self.connection = nil
            transport.release(connection, reusable: false)
        }
        finish(failure)
    }

    /// Tells the task, once (at the next loop turn when inside its own call).
    private func finish(_ failure: TransferFailure?) {
        if case .spliced(let splice) = reading { splice.cancel() }
        reading = .done
        guard let task else { return }
        if inTaskCall {
            transport.loop.callSoon { [weak task] in task?.transferDidComplete(failure: failure) }
        } else {
            task.transferDidComplete(failure: failure)
        }
    }
}
