import Contract
import Logging

/// Writes one log line per exchange: the access log, and the one line every error gets.
final class AccessLog: EventMonitor {
    let logger: Logger
    let accessEnabled: Bool
    let stats: Stats

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
        // A request that breaks its contract (reported) is a warning as a response's is.
        let problem =
            record.error != nil || record.aborted || record.validationFailure != nil
            || record.requestContractFailure != nil
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
        // Three strings, then at most 9 numbers of 26 bytes and 80 bytes of labels and separators.
        let bound = record.client.utf8.count + record.method.utf8.count + record.url.utf8.count + 320
        out.append(atMost: bound) { out in
            out.put(record.client)
            out.put(" \"")
            out.put(record.method)
            out.put(0x20)
            out.put(record.url)
            out.put("\" ")
            out.putDecimal(Int64(record.status))
            out.put(0x20)
            out.putDecimal(record.bytesSent)
            out.put(0x20)
            out.putMilliseconds(record.duration)
            if let upstream = record.upstreamTime {
                out.put(" upstream=")
                out.putMilliseconds(upstream)
            }
            if let timeline = record.timeline {
                out.put(" timeline=queued:")
                out.putMilliseconds(timeline.queued)
                out.put(",dns:")
                out.putMilliseconds(timeline.dns)
                out.put(",connect:")
                out.putMilliseconds(timeline.connect)
                out.put(",tls:")
                out.putMilliseconds(timeline.tls)
                out.put(",ttfb:")
                out.putMilliseconds(timeline.firstByte)
            }
        }
        var text = ""
        if let error = record.error {
            let problem = Problem(error)
            text += " problem=\(problem.slug) detail=\(JSONText.quote(problem.detail))"
        }
        if record.aborted { text += " aborted" }
        if let rule = record.rule { text += " rule=" + JSONText.quote(rule) }
        if let failure = record.validationFailure ?? record.requestContractFailure?.detail {
            text += " validation=" + JSONText.quote(failure)
        }
        if let transform = record.transform { text += " transform=" + JSONText.quote(transform) }
        if let mapping = record.mapping { text += " mapped=" + JSONText.quote(mapping) }
        if let fault = record.fault { text += " fault=" + JSONText.quote(fault) }
        if let breakpoint = record.breakpoint { text += " breakpoint=" + JSONText.quote(breakpoint) }
        if let replayed = record.replayed { text += " replayed=" + String(replayed) }
        if let failure = record.contractFailure ?? record.requestContractFailure {
            text += " contract=" + JSONText.quote(failure.logField)
        } else if let contract = record.contract, contract != .passed {
            text += " contract=" + JSONText.quote(contract.text)
        }
        if !text.isEmpty { out.append(contentsOf: text.utf8) }
    }
}
