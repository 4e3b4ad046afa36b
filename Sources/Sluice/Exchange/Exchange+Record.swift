/// `record:`: what an exchange keeps for the recording, and the entry it becomes at its end.
extension Exchange {
    /// Starts keeping the request body and the response as sent, when the recorder takes this request.
    func tapForRecording() {
        guard let recorder = env.recorder, let url = route.url, recorder.wants(url) else {
            return
        }
        let limit = Int(recorder.settings.maxBody)
        let watched = env.watcher?.isWatching == true
        let capture = ExchangeCapture(
            request: request.headers, bodyRoom: max(limit, watched ? env.watcher?.bodyRoom ?? 0 : 0),
            bodyLimit: max(limit, ExchangeCapture.bodyLimit), keepsRequest: watched)
        capture.requestTap = RecordingTap(limit: limit)
        self.capture = capture
    }

    /// The exchange as the recording keeps it (the recorder takes it from the exchange's record,
    /// as an event monitor); nothing for an exchange that failed, was cut, or was itself
    /// answered from a recording. A response an enforced contract refused is the exception: it
    /// is kept as the origin sent it (not the problem the client got), so that a report from
    /// the recording finds the violation again and a replay is refused again.
    func recordingEntry(aborted: Bool, duration: Double) -> PendingRecord? {
        guard let capture, let tap = capture.requestTap, notes.replayed == nil else { return nil }
        let response: (status: Int, head: [UInt8], body: [UInt8], size: Int64)
        if case .contractViolation = notes.error, let rejected = capture.rejected {
            let size = Int64(rejected.body.count)
            response = (rejected.status, rejected.head, Array(rejected.body.prefix(capture.bodyRoom)), size)
        } else {
            guard notes.error == nil, !aborted, output.isComplete, output.status >= 200, !capture.responseHead.isEmpty
            else { return nil }
            response = (output.status, capture.responseHead, capture.body, capture.bodyTotal)
        }
        return PendingRecord(
            started: startedAt, duration: duration, wait: task?.timeToHead, method: request.method,
            url: machine.context.url, requestFields: request.headers, requestBody: tap.body,
            requestBodySize: tap.size, requestBodyDigest: tap.finishDigest(), status: response.status,
            responseHead: response.head, servedFromCache: notes.cacheStatus?.isHit == true,
            responseBody: response.body, responseBodySize: response.size, rule: route.matchedName,
            breakpoint: breakpointRecord(bodyLimit: Int(env.recorder?.settings.maxBody ?? 0)),
            responseTrailers: capture.rejected == nil ? capture.trailers : nil)
    }

    /// What breakpoints did, as the recording keeps it (JSON): the note, and when a person edited
    /// the request or the response, the request as sent and the response as received.
    func breakpointRecord(bodyLimit: Int) -> String? {
        guard let note = notes.breakpoint else { return nil }
        var fields: [(String, JSONValue)] = [("note", .string(note))]
        if let sent = notes.breakpointSent { fields.append(("sent", sent.json(bodyLimit: bodyLimit))) }
        if let received = notes.breakpointReceived { fields.append(("received", received.json(bodyLimit: bodyLimit))) }
        return JSONValue.object(fields).json
    }
}
