import EventIO

/// Reading: the response's header sections line by line through the task, then its body by
/// its framing (RFC 9112 §6), with backpressure from the client.
extension NativeTransfer {
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
    func readResponse() {
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
    func readHead(_ stream: any ClientStream) -> Bool {
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
                // A 100 ends the pass too: the body goes once the buffer is let go.
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
        case .continued:
            bodyMayGo()  // the origin asked for the body; its answer is read next
            return !isDone
        case .expectationRefused:
            repeatWithoutExpectation()
            return false
        case .final(let head):
            // A final answer before the origin asked for the body: the body is not sent (the
            // connection closes after this response, as the request was never whole).
            if case .awaitingContinue = sending {
                continueTimer?.cancel()
                sending = .withheld
                connection?.readTimeout(true)  // off while a body was to go: the answer's body may stall
            }
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
                reading = .body(.chunked(ChunkedDecoder(maxMetadataBytes: 16 * 1024, allowsBlankAfterSize: true)))
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
    func readBody(_ left: BodyLeft, _ stream: any ClientStream) -> Bool {
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
    func readRaw(_ left: BodyLeft, upTo remaining: Int64, _ stream: any ClientStream) -> Bool {
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
    func hold(_ left: BodyLeft, pending: [UInt8]) -> Bool {
        reading = .held(left, pending: pending)
        connection?.socket?.pauseReading()
        return false
    }

    /// Each trailer line to the task (it keeps them for the client).
    func passTrailers(_ lines: [UInt8]) {
        guard !lines.isEmpty, let task else { return }
        lines.withUnsafeBytes { bytes in
            var start = 0
            while let newline = bytes[start...].firstIndex(of: 0x0A) {
                _ = task.receiveHeadLine(UnsafeRawBufferPointer(rebasing: bytes[start...newline]))
                start = newline + 1
            }
        }
    }

    /// Why a close before the end of the head failed the transfer: nothing came, a head was cut,
    /// or what came is no HTTP/1.x answer at all (an HTTP/0.9 body, another protocol).
    func closedInHeadDetail() -> String {
        if let tls = connection?.stream as? TLSStream, let failure = tls.failure {
            // An alert in place of an answer: said, with what to do about the usual one.
            let asksCertificate = failure.contains("certificate required") || failure.contains("handshake failure")
            return "The origin ended the TLS connection instead of answering (\(failure))."
                + (asksCertificate ? UpstreamTrust.clientCertificateHint : "")
        }
        guard let stream = connection?.stream, stream.inputCount > 0 else {
            let mayWantCertificate = connection?.stream is TLSStream && key.trust?.clientCertificate == nil
            return "The origin closed the connection without a response."
                + (mayWantCertificate ? UpstreamTrust.clientCertificateHint : "")
        }
        let prefix = Array("HTTP/".utf8)
        let startsAsHTTP = stream.withInput(upTo: prefix.count) { bytes in
            zip(bytes, prefix).allSatisfy { $0 == $1 }
        }
        return startsAsHTTP
            ? "The origin closed the connection in the middle of its response head."
            : "The origin's answer does not start with an HTTP status line (HTTP/0.9 or another protocol)."
    }

    /// No input buffered: wait, or (after the origin's close) end by the framing.
    func endOfInput() -> Bool {
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
            stop(.native(.upstreamFailed(reason: .badResponse(detail: closedInHeadDetail()))))
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
}
