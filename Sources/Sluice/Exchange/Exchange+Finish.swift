import Contract
import EventIO

/// The driver's end of an exchange: one record for the monitors and the connection's turn, or,
/// for a collapse leader whose client left, the client side ended while the fetch goes on.
extension Exchange {
    func finishIfDone() {
        guard output.isComplete else { return }
        // The next request on the connection starts after this body: unread bytes mean close.
        finish(closeConnection: !output.keepAlive || !body.isComplete)
    }

    func finish(closeConnection: Bool) {
        guard !hasFinished, !machine.isOrphaned else { return }
        let aborted = output.headSent && !output.isComplete
        run(.finished(notes.error == nil && !aborted ? .completed : .failed))
        endClientSide(closeConnection: closeConnection, aborted: aborted)
    }

    /// The client left while this leader's waiters depend on its fetch: the client's side is
    /// recorded and its connection closed now; the fetch goes on, kept alive by the collapser,
    /// and never touches the client again.
    func detachClient() {
        stages.response?.abandon()
        stages.wire?.abandon()
        env.collapser.adopt(self)
        // A request paused at a breakpoint goes on now, for the waiters (nobody edits it any more).
        for item in env.breakpoints.paused where item.exchange == id && item.stage == .request {
            env.breakpoints.decide(item.id, .resume(nil))
        }
        endClientSide(closeConnection: true, aborted: output.headSent && !output.isComplete)
        // A transfer paused for the slow client would never be resumed by it: resume it (at the
        // next loop turn, never inside a libcurl callback).
        env.loop.callSoon { [weak self] in self?.task?.resume() }
    }

    /// One record for the monitors, then the connection decides keep-alive (the last use of `client`).
    private func endClientSide(closeConnection: Bool, aborted: Bool) {
        // A body cut short (the client left an endless stream, the origin broke off): what the
        // contract found of it so far is still its verdict.
        // (Not for a leader whose fetch goes on for the cache: its body still ends, and is judged.)
        if aborted, !machine.isOrphaned, notes.contract == nil, let run = stages.contract,
            let outcome = run.unfinishedOutcome
        {
            noted(.verdict(outcome, run))
        }
        let duration = Double(EventLoop.monotonicNanoseconds() - startTime) / 1e9
        var record = ExchangeRecord(
            client: client.peerText, method: request.method, url: machine.context.url, status: output.status,
            bytesSent: output.bytesSent, duration: duration, upstreamTime: task?.timeToHead, error: notes.error,
            aborted: aborted, rule: route.matchedName, validationFailure: notes.validationFailure,
            transform: notes.transformNote, cacheStatus: notes.cacheStatus,
            timeline: task?.timeline(exchangeStart: startTime, complete: duration), id: id,
            mapping: notes.mapping, fault: notes.fault, replayed: notes.replayed, capture: capture)
        if let outcome = notes.contract {
            switch outcome {
            case .passed: record.contract = .passed
            case .failed(let failure):
                record.contract = .failed
                record.contractFailure = failure
            case .notValidated(let why): record.contract = .notValidated(why)
            }
        } else if case .contractViolation(let failure) = notes.error {
            record.contract = .failed
            record.contractFailure = failure
        }
        record.contractCheck = stages.contract?.record
        record.requestContractCheck = outgoing.contract?.record
        record.breakpoint = notes.breakpoint
        record.paused = notes.paused
        record.clientProtocol = request.receivedProtocol
        if notes.breakpoint != nil {
            env.breakpoints.forget(exchange: id)
            if notes.requestEdited, var sent = notes.breakpointSent {
                capture?.sentBodySize = sent.body?.count ?? 0
                sent.body = nil
                capture?.sentRequest = sent
            }
        }
        if let failure = notes.requestContractFailure, record.contractFailure?.direction != .request {
            record.requestContractFailure = failure
            record.contract = .failed
        }
        if capture?.requestTap != nil { capture?.recording = recordingEntry(aborted: aborted, duration: duration) }
        env.session.eventMonitor.exchangeDidComplete(record)
        client.exchangeDidFinish(
            self, closeConnection: closeConnection,
            abort: aborted && (output.framing == .close || notes.error?.isInjectedReset == true))
    }
}

extension Exchange {
    /// How far the transfer got: request body bytes sent upstream of those announced, response
    /// body bytes sent to the client of those announced (`nil`: not known), the kernel's part of a
    /// body moved socket to socket included.
    var progress: (up: Int64, upTotal: Int64?, down: Int64, downTotal: Int64?) {
        let down = output.bytesSent + (task?.splicedSoFar ?? 0)
        return (body.received, body.expected, down, output.bodyLength > 0 ? output.bodyLength : nil)
    }

    /// When it started, in seconds since the epoch.
    var startedAt: Double { env.clock() - Double(EventLoop.monotonicNanoseconds() - startTime) / 1e9 }
}
