import EventIO

/// The one timer an exchange waits on, and what for: a fault's delay or hold, a collapse leader's
/// fetch, the paced upload. Re-armed for each wait; never two at once.
final class ExchangeWait {
    enum Reason {
        /// A rule's `faults:` delay, then the rest of its plan.
        case faultDelay(FaultPlan)
        /// A rule's `faults.timeout`: held as by an origin that never answers.
        case faultHold
        /// A collapse leader's fetch of `key` (`cache.collapse_timeout`).
        case collapse(key: String)
        /// `faults.bandwidth` for the request body: the upload resumes.
        case upload
    }

    private(set) var reason: Reason?
    private var timer: Timer?

    init(loop: EventLoop, fired: @escaping (Reason) -> Void) {
        timer = Timer(loop: loop) { [unowned self] in
            guard let reason = self.reason.take() else { return }
            fired(reason)
        }
    }

    func start(_ reason: Reason, milliseconds: Int) {
        self.reason = reason
        timer?.schedule(milliseconds: milliseconds)
    }

    func cancel() {
        reason = nil
        timer?.cancel()
    }
}
