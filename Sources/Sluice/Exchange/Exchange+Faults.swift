import EventIO

/// Failures on demand: what a rule's `faults:` drew for this request, carried out. A reset and a
/// bandwidth are wire stages (``ResetStage``, ``ShapeStage``, composed at the start); the delay,
/// the injected status and the hold happen here, on the exchange's timer.
extension Exchange {
    func inject(_ plan: FaultPlan) {
        env.stats.countFaults(plan.kinds, rule: route.rule.name)
        if let rate = plan.bytesPerSecond {
            if !body.isComplete { outgoing.pace = Pace(bytesPerSecond: rate, now: EventLoop.monotonicNanoseconds()) }
            notes.noteFault("bandwidth \(rate) B/s")
        }
        guard plan.delayMilliseconds > 0 || plan.holds || plan.status != nil else { return proceed() }
        if plan.delayMilliseconds == 0 { return afterDelay(plan) }
        notes.noteFault("latency \(plan.delayMilliseconds)ms")
        waiting.start(.faultDelay(plan), milliseconds: plan.delayMilliseconds)
    }

    /// The exchange's timer fired: what it waited for is over.
    func waited(_ reason: ExchangeWait.Reason) {
        switch reason {
        case .faultDelay(let plan): afterDelay(plan)
        case .faultHold:
            guard !hasFinished else { return }
            let limit = env.session.settings.responseTimeoutMilliseconds
            proceed(
                .refused(
                    .upstreamFailed(
                        reason: .timedOut(
                            detail:
                                "No response within \(limit) ms: the rule's faults.timeout held the request (injected)."
                        ))))
        case .collapse(let key):
            env.collapser.leave(key, self)
            collapseReleased()
        case .upload:
            task?.resume()
        }
    }

    private func afterDelay(_ plan: FaultPlan) {
        guard !hasFinished else { return }
        if let status = plan.status {
            notes.noteFault("status \(status.code)")
            return proceed(
                .refused(.injected(rule: route.rule.name, status: status.code, retryAfter: status.retryAfter)))
        }
        guard plan.holds else { return proceed() }
        // Held as by an origin that never answers: the client gives up first, or Sluice's own
        // upstream timeout answers 504 as it would for a silent origin.
        notes.noteFault("timeout")
        waiting.start(.faultHold, milliseconds: max(env.session.settings.responseTimeoutMilliseconds, 1))
    }
}
