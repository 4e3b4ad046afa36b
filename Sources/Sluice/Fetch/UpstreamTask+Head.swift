import Curl
import EventIO

/// The response head, line by line, from either transport (libcurl's header callback, the native
/// transfer's reader): interim heads, the final one, trailers.
extension UpstreamTask {
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
        if response != nil { return trailerLine(line) }
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
            if case .curl = transfer.carrier, transfer.head.isBetweenSections, line.contains(UInt8(ascii: ":")) {
                return trailerLine(line)
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

    /// One trailer line, kept for the delegate (told at completion, before the end). A section
    /// over `limits.max_header_bytes` fails the transfer: the client sees it cut, not a status
    /// (gRPC's) that lost its details on the way.
    private func trailerLine(_ line: UnsafeRawBufferPointer) -> HeadLine {
        var end = line.count
        while end > 0, line[end - 1] == 0x0A || line[end - 1] == 0x0D { end -= 1 }
        guard end > 0 else { return .more }  // the section's end: handed over at completion
        trailerBytes += line.count
        let limit = session.settings.maxHeaderBytes
        guard trailerBytes <= limit else {
            return abortLine(
                .upstreamFailed(
                    reason: .badResponse(detail: "The origin's trailer section exceeds \(limit) bytes.")))
        }
        guard let colon = line[..<end].firstIndex(of: UInt8(ascii: ":")) else { return .more }  // not a field
        let name = UnsafeRawBufferPointer(rebasing: line[..<colon])
        let value = UnsafeRawBufferPointer(rebasing: line[(colon + 1)..<end])
        guard ResponseFraming.nameViolation(name) == nil, ResponseFraming.valueViolation(value) == nil else {
            return .more
        }
        var start = 0
        var stop = value.count
        while start < stop, value[start] == 0x20 || value[start] == 0x09 { start += 1 }
        while stop > start, value[stop - 1] == 0x20 || value[stop - 1] == 0x09 { stop -= 1 }
        trailers.append(
            name: String(decoding: name, as: UTF8.self),
            wireValue: UnsafeRawBufferPointer(rebasing: value[start..<stop]), code: FieldCode(bytes: name))
        return .more
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
