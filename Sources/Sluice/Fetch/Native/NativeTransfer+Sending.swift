import EventIO

/// Sending: the request head (alone when the body waits for the origin's `100 Continue`), then
/// the body's pieces as the client gives them and the origin takes them.
extension NativeTransfer {
    /// The request head, with the first body piece when one is ready (one write); alone when
    /// the body waits for the origin's `100 Continue`.
    func sendHead(on stream: any ClientStream) {
        let framing: UploadFraming
        switch body {
        case .none:
            sending = .sent
            return head.withUnsafeBytes { stream.write($0, more: false) }
        case .length(let count): framing = .length(remaining: count)
        case .streamed: framing = .chunked
        }
        guard expectsContinue else {
            sending = .body(framing)
            return sendBody(after: head)
        }
        sending = .awaitingContinue(framing)
        head.withUnsafeBytes { stream.write($0, more: false) }
        if continueTimer == nil {
            continueTimer = Timer(loop: transport.loop) { [weak self] in self?.bodyMayGo() }
        }
        continueTimer?.schedule(milliseconds: transport.settings.continueTimeoutMilliseconds)
    }

    /// The origin asked for the body (`100 Continue`), or said nothing for
    /// `timeouts.upstream_continue`: it goes now.
    func bodyMayGo() {
        continueTimer?.cancel()
        guard !isDone, case .awaitingContinue(let framing) = sending else { return }
        sending = .body(framing)
        sendBody()
    }

    /// Sends request-body pieces while the client has them and the origin takes them; `head`
    /// (not sent yet) goes out with the first piece.
    func sendBody(after head: [UInt8] = []) {
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
}
