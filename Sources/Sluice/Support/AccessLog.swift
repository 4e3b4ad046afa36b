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
        guard accessEnabled || record.error != nil || record.aborted else { return }
        logger.log(level: record.error == nil && !record.aborted ? .info : .warning, "\(AccessLog.line(record))")
    }

    /// `client "METHOD url" status bytes duration upstream=… [problem=… detail="…"] [aborted]`.
    static func line(_ record: ExchangeRecord) -> String {
        var text = "\(record.client) \"\(record.method) \(record.url)\" \(record.status) \(record.bytesSent) "
        text += milliseconds(record.duration)
        if let upstream = record.upstreamTime { text += " upstream=" + milliseconds(upstream) }
        if let error = record.error {
            let problem = Problem(error)
            text += " problem=\(problem.slug) detail=\(JSONText.quote(problem.detail))"
        }
        if record.aborted { text += " aborted" }
        return text
    }

    private static func milliseconds(_ seconds: Double) -> String {
        let micros = Int((seconds * 1_000_000).rounded())
        return "\(micros / 1000).\(String(micros % 1000 + 1000).dropFirst())ms"
    }
}
