import Contract
import Logging

/// Writes one log line per exchange: the access log, and the one line every error gets.
final class AccessLog: EventMonitor {
    let logger: Logger
    let accessEnabled: Bool
    unowned let stats: Stats

    /// The handler to write access lines straight into, when the logger writes through a
    /// ``LogOutput`` (`sluice serve`): a line is then one copy into its buffer.
    private let buffered: BufferedLogHandler?

    init(logger: Logger, accessEnabled: Bool, stats: Stats) {
        self.logger = logger
        self.accessEnabled = accessEnabled && logger.logLevel <= .info
        self.stats = stats
        buffered = logger.handler as? BufferedLogHandler
    }

    func taskDidStart(_ task: UpstreamTask) { stats.upstreamTasks += 1 }

    func task(_ task: UpstreamTask, didCompleteWith error: SluiceError?) {
        stats.upstreamConnections += task.openedConnections
        switch task.engine {
        case .native?: stats.upstreamNativeTransfers += 1
        case .curl?: stats.upstreamCurlTransfers += 1
        case nil: break
        }
    }

    func exchangeDidComplete(_ record: ExchangeRecord) {
        stats.responses += 1
        if record.error != nil || record.aborted { stats.errors += 1 }
        if case .validationFailed = record.error { stats.validationRejected += 1 }
        if let rule = record.rule, let outcome = record.contract {
            var tally = stats.contractsByRule[rule] ?? Stats.ContractTally()
            tally.checked += 1
            if outcome == .failed { tally.failed += 1 }
            if case .contractViolation = record.error {
                tally.rejected += 1
                stats.contractRejected += 1
            }
            stats.contractsByRule[rule] = tally
        }
        let problem = record.error != nil || record.aborted || record.validationFailure != nil
        if problem {
            logger.warning("\(AccessLog.line(record))")
        } else if accessEnabled {
            guard let buffered else { return logger.info("\(AccessLog.line(record))") }
            buffered.info(source: "Sluice") { AccessLog.write(record, into: &$0) }
        }
    }

    /// `client "METHOD url" status bytes duration upstream=… [problem=… detail="…"] [aborted]`.
    static func line(_ record: ExchangeRecord) -> String {
        var bytes: [UInt8] = []
        write(record, into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// ``line(_:)``'s text, appended to `out` byte by byte (an access line per request is on the
    /// hit path: no intermediate strings).
    static func write(_ record: ExchangeRecord, into out: inout [UInt8]) {
        out.append(utf8: record.client)
        out.append(" \"")
        out.append(utf8: record.method)
        out.append(0x20)
        out.append(utf8: record.url)
        out.append("\" ")
        out.appendDecimal(Int64(record.status))
        out.append(0x20)
        out.appendDecimal(record.bytesSent)
        out.append(0x20)
        milliseconds(record.duration, into: &out)
        if let upstream = record.upstreamTime {
            out.append(" upstream=")
            milliseconds(upstream, into: &out)
        }
        if let timeline = record.timeline {
            func phase(_ name: StaticString, _ seconds: Double) {
                out.append(name)
                milliseconds(seconds, into: &out)
            }
            phase(" timeline=queued:", timeline.queued)
            phase(",dns:", timeline.dns)
            phase(",connect:", timeline.connect)
            phase(",tls:", timeline.tls)
            phase(",ttfb:", timeline.firstByte)
        }
        var text = ""
        if let error = record.error {
            let problem = Problem(error)
            text += " problem=\(problem.slug) detail=\(JSONText.quote(problem.detail))"
        }
        if record.aborted { text += " aborted" }
        if let rule = record.rule { text += " rule=" + JSONText.quote(rule) }
        if let failure = record.validationFailure { text += " validation=" + JSONText.quote(failure) }
        if let transform = record.transform { text += " transform=" + JSONText.quote(transform) }
        if let mapping = record.mapping { text += " mapped=" + JSONText.quote(mapping) }
        if let fault = record.fault { text += " fault=" + JSONText.quote(fault) }
        if let breakpoint = record.breakpoint { text += " breakpoint=" + JSONText.quote(breakpoint) }
        if let replayed = record.replayed { text += " replayed=" + String(replayed) }
        if let failure = record.contractFailure {
            text += " contract=" + JSONText.quote(failure.logField)
        } else if let contract = record.contract, contract != .passed {
            text += " contract=" + JSONText.quote(contract.text)
        }
        if !text.isEmpty { out.append(contentsOf: text.utf8) }
    }

    /// `12.345ms` for seconds.
    private static func milliseconds(_ seconds: Double, into out: inout [UInt8]) {
        let micros = Int64((seconds * 1_000_000).rounded())
        out.appendDecimal(micros / 1000)
        out.append(0x2E)
        let fraction = abs(micros % 1000)
        out.append(UInt8(0x30 + fraction / 100))
        out.append(UInt8(0x30 + fraction / 10 % 10))
        out.append(UInt8(0x30 + fraction % 10))
        out.append("ms")
    }
}
