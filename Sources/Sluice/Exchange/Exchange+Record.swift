import EventIO

/// `record:`: what an exchange keeps for the recording, and the entry it becomes at its end.
extension Exchange {
    /// Starts keeping the request body and the response as sent, when the recorder takes this request.
    func tapForRecording() {
        guard let recorder = env.recorder, let url = route.url, recorder.wants(host: url.host, path: url.path) else {
            return
        }
        let limit = Int(recorder.settings.maxBody)
        recordTap = RecordingTap(limit: limit)
        let watching = env.watcher?.isWatching == true ? env.watcher?.bodyRoom ?? 0 : 0
        let capture = ExchangeCapture(
            request: request.headers, bodyRoom: max(limit, watching), bodyLimit: max(limit, ExchangeCapture.bodyLimit))
        self.capture = capture
        output.capture = capture
    }

    /// The exchange as the recording keeps it, handed to the recorder; nothing for an exchange
    /// that failed, was cut, or was itself answered from a recording.
    func recordIfDue(aborted: Bool, duration: Double) {
        guard let tap = recordTap, let capture, let recorder = env.recorder, notes.error == nil, !aborted,
            notes.replayed == nil, output.status >= 200, !capture.responseHead.isEmpty
        else { return }
        let keepCredentials = recorder.settings.keepCredentials
        var sent = request.headers
        HopByHop.strip(&sent)
        var requestFields = sent.map { $0 }
        var responseFields = capture.responseFields.map { HTTPFields.Field(name: $0.0, value: $0.1) }
        responseFields = RecordedExchange.ownFieldsRemoved(
            responseFields, servedFromCache: notes.cacheStatus?.isHit == true)
        if !keepCredentials {
            requestFields = RecordedExchange.redacting(requestFields)
            responseFields = RecordedExchange.redacting(responseFields)
        }
        let exchange = RecordedExchange(
            started: startedAt,
            duration: duration, wait: task?.timeToHead, method: request.method, url: machine.context.url,
            requestHeaders: requestFields, requestBody: tap.body, requestBodySize: tap.size,
            requestBodyDigest: tap.finishDigest(), status: output.status,
            reason: RecordedExchange.reason(ofStatusLine: capture.responseHead), responseHeaders: responseFields,
            responseBody: capture.body, responseBodySize: capture.bodyTotal, source: "proxy",
            rule: route.matchedName)
        recorder.add(exchange)
    }
}

extension RecordedExchange {
    /// A response head's fields without what Sluice added: framing and connection fields,
    /// `Cache-Status` and `Sluice-*`, its own `Via` element, and `Age` when a stored response answered.
    static func ownFieldsRemoved(_ fields: [HTTPFields.Field], servedFromCache: Bool) -> [HTTPFields.Field] {
        var kept: [HTTPFields.Field] = []
        for field in fields where keepsResponseField(field.name) {
            if servedFromCache, field.hasName("age") { continue }
            if field.hasName("via") {
                let others = field.value.split(separator: ",").map { $0.trimmingOWS() }.filter {
                    $0.split(separator: " ").dropFirst().first != "sluice"
                }
                if !others.isEmpty {
                    kept.append(HTTPFields.Field(name: field.name, value: others.joined(separator: ", ")))
                }
                continue
            }
            kept.append(field)
        }
        return kept
    }

    /// The reason phrase of a status line (`HTTP/1.1 404 Not Found` → `Not Found`).
    static func reason(ofStatusLine head: [UInt8]) -> String {
        let line = head.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
        let parts = line.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
        return parts.count == 3 ? String(decoding: parts[2], as: UTF8.self) : ""
    }
}
