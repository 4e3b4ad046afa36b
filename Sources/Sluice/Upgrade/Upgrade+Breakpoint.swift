/// Request breakpoints on an upgrade's handshake (a WebSocket's): it waits in the Paused list
/// before anything goes to the origin, and goes on as a person decides: unchanged, edited (method,
/// URL, fields; a handshake has no body), answered with their response instead, or aborted. Its
/// response (the `101`, or a refusal) is not paused; its messages are (message breakpoints).
extension Upgrade: PauseTarget {
    /// Pauses the handshake when a request breakpoint fits it; `false` when none does (or the
    /// Paused list is full).
    func pauseAtBreakpoint() -> Bool {
        let points = env.breakpoints.candidates(
            for: .request, method: request.method, host: url.host, path: url.pathAndQuery, fields: request.headers)
        guard let point = points.first(where: { !$0.readsBody || $0.matchesBody([]) }) else { return false }
        let shown = PausedMessage(
            method: request.method, url: target.description, headers: request.headers.map { ($0.name, $0.value) },
            body: [])
        guard
            env.breakpoints.pause(
                exchange: id, stage: .request, breakpoint: point.name, request: shown, response: nil,
                contractRule: nil, target: self) != nil
        else { return false }
        note("request paused at \(point.name)")
        return true
    }

    func resolve(_ decision: PauseDecision, of item: PausedItem) {
        guard case .paused = phase else { return }
        switch decision {
        case .timedOut where client.inputClosed:
            note("timed out; the client had left, not sent")
            finish(error: .breakpointAborted(breakpoint: item.breakpoint), aborted: true)
        case .resume(nil), .timedOut:
            note(decision.isTimeout ? "timed out, resumed unchanged" : "resumed")
            dial()
        case .resume(let edit?):
            if let failure = apply(edit) { return failBeforeSwitch(failure) }
            note("edited, resumed")
            dial()
        case .abort(let closing):
            note(closing ? "aborted, connection closed" : "aborted")
            guard closing else { return failBeforeSwitch(.breakpointAborted(breakpoint: item.breakpoint)) }
            finish(error: .breakpointAborted(breakpoint: item.breakpoint), aborted: true)
        case .answer(let answer):
            note("answered")
            let (head, body) = Exchange.answerHead(answer, date: env.date.now, keepAlive: false)
            let bytes = ResponseWriter.head(head) + (request.method == "HEAD" ? [] : body)
            status = head.status
            client.stream.write(bytes)
            bytesDown += Int64(bytes.count)
            finish()
        }
    }

    /// A person's edit of the handshake; the failure when it cannot be sent. The offer (`Upgrade`,
    /// and a WebSocket's `Sec-WebSocket-Key` and `-Version`, without which no origin switches)
    /// is kept when the edited fields leave it out.
    private func apply(_ edit: PausedMessage) -> SluiceError? {
        switch edit.editedTarget() {
        case .failure(let failure): return failure
        case .success(let (method, url)):
            if let method { request.method = method }
            if let url {
                target = url
                host = url.authority
            }
        }
        if let fields = edit.headers {
            let before = request.headers
            request.headers = PausedMessage.sentFields(fields)
            for name in ["Upgrade", "Sec-WebSocket-Key", "Sec-WebSocket-Version"] {
                if let value = before[name], request.headers[name] == nil {
                    request.headers.append(name: name, value: value)
                }
            }
        }
        return nil
    }

    /// What breakpoints did, for the log line (one line, kept short).
    private func note(_ what: String) {
        guard let notes = breakpointNotes else { return breakpointNotes = what }
        breakpointNotes = notes + "; " + what
    }
}
