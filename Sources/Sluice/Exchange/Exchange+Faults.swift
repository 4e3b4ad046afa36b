import EventIO

/// Failures on demand: what a rule's `faults:` drew for this request, carried out.
extension Exchange {
    func inject(_ plan: FaultPlan) {
        env.stats.countFaults(plan.kinds, rule: route.rule.name)
        if let after = plan.resetAfter { output.resetAfter = after }
        if let rate = plan.bytesPerSecond {
            let shaper = Shaper(loop: env.loop, bytesPerSecond: rate, stream: client.stream)
            // Each slice may let the source go on, and the last one completes the response.
            shaper.onProgress = { [weak self] in
                guard let self, !self.hasFinished else { return }
                self.clientDrained()
                self.finishIfDone()
            }
            output.shaper = shaper
            if !body.isComplete { uploadPace = Pace(bytesPerSecond: rate, now: EventLoop.monotonicNanoseconds()) }
            notes.noteFault("bandwidth \(rate) B/s")
        }
        guard plan.delayMilliseconds > 0 || plan.holds || plan.status != nil else { return proceed() }
        if plan.delayMilliseconds == 0 { return afterDelay(plan) }
        notes.noteFault("latency \(plan.delayMilliseconds)ms")
        let timer = Timer(loop: env.loop) { [weak self] in self?.afterDelay(plan) }
        faultTimer = timer
        timer.schedule(milliseconds: plan.delayMilliseconds)
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
        let limit = env.session.settings.responseTimeoutMilliseconds
        let timer = Timer(loop: env.loop) { [weak self] in
            guard let self, !self.hasFinished else { return }
            self.proceed(
                .refused(
                    .upstreamFailed(
                        reason: .timedOut(
                            detail:
                                "No response within \(limit) ms: the rule's faults.timeout held the request (injected)."
                        ))))
        }
        faultTimer = timer
        timer.schedule(milliseconds: max(limit, 1))
    }
}
