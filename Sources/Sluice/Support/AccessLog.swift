import Logging

/// Writes one log line per exchange: the access log, and the one line every error gets.
final class AccessLog: EventMonitor {
    let logger: Logger
    let accessEnabled: Bool
    unowned let stats: Stats

    init(logger: Logger, accessEnabled: Bool, stats: Stats) {
        self.logger = logger
        self.accessEnabled = accessEnabled
        self.stats = stats
    }

    func taskDidStart(_ task: UpstreamTask) { stats.upstreamTasks += 1 }

    func task(_ task: UpstreamTask, didCompleteWith error: SluiceError?) {
        stats.upstreamConnections += task.openedConnections
    }

    func exchangeDidComplete(_ record: ExchangeRecord) {
        stats.responses += 1
        if record.error != nil || record.aborted { stats.errors += 1 }
        if case .validationFailed = record.error { stats.validationRejected += 1 }
        let problem = record.error != nil || record.aborted || record.validationFailure != nil
        guard accessEnabled || problem else { return }
        logger.log(level: problem ? .warning : .info, "\(AccessLog.line(record))")
    }

    /// `client "METHOD url" status bytes duration upstream=… [problem=… detail="…"] [aborted]`.
    static func line(_ record: ExchangeRecord) -> String {
        var text = "\(record.client) \"\(record.method) \(record.url)\" \(record.status) \(record.bytesSent) "
        text += milliseconds(record.duration)
        if let upstream = record.upstreamTime { text += " upstream=" + milliseconds(upstream) }
        if let timeline = record.timeline {
            text += " timeline=queued:" + milliseconds(timeline.queued) + ",dns:" + milliseconds(timeline.dns)
            text += ",connect:" + milliseconds(timeline.connect) + ",tls:" + milliseconds(timeline.tls)
            text += ",ttfb:" + milliseconds(timeline.firstByte)
        }
        if let error = record.error {
            let problem = Problem(error)
            text += " problem=\(problem.slug) detail=\(JSONText.quote(problem.detail))"
        }
        if record.aborted { text += " aborted" }
        if let rule = record.rule { text += " rule=" + JSONText.quote(rule) }
        if let failure = record.validationFailure { text += " validation=" + JSONText.quote(failure) }
        if let transform = record.transform { text += " transform=" + JSONText.quote(transform) }
        return text
    }

    private static func milliseconds(_ seconds: Double) -> String {
        let micros = Int((seconds * 1_000_000).rounded())
        return "\(micros / 1000).\(String(micros % 1000 + 1000).dropFirst())ms"
    }
}
