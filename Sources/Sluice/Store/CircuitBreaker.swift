/// The shared tier's circuit breaker as a value: three failures in a row (or a lost connection)
/// take the tier out; it is tried again after 1 s, then 2, 4… up to 30 s between attempts; a
/// connection that answers puts it back, and a lookup answered in time starts the pauses over. Decisions are pure functions of what happened and `now` (seconds on
/// any monotonic clock); ``SharedTier`` carries them out (logs, timers, connections).
struct CircuitBreaker: Equatable {
    private(set) var health = SharedTier.Health.connecting
    /// When the next connection attempt is due, while one is waited for.
    private(set) var retryAt: Double?
    /// The pause before the next attempt, in seconds.
    private(set) var backoff = CircuitBreaker.firstBackoff
    private(set) var consecutiveFailures = 0
    /// Connection attempts made (the first included).
    private(set) var attempts = 1

    static let firstBackoff = 1.0
    static let maxBackoff = 30.0
    static let failuresToTrip = 3

    /// What a failure means for the tier.
    enum Decision: Equatable {
        /// Under the threshold: the tier stays in.
        case stays
        /// Out: say so when `announce` (it was not down already), and try again in `retryIn`
        /// seconds (`nil`: an attempt is already waited for).
        case out(announce: Bool, retryIn: Double?)
    }

    mutating func failed(_ reason: String, connectionLost: Bool, now: Double) -> Decision {
        consecutiveFailures += 1
        guard connectionLost || consecutiveFailures >= CircuitBreaker.failuresToTrip else { return .stays }
        var announce = true
        if case .down = health { announce = false }
        health = .down(reason: reason)
        if let retryAt, retryAt > now { return .out(announce: announce, retryIn: nil) }
        retryAt = now + backoff
        return .out(announce: announce, retryIn: backoff)
    }

    /// A lookup was answered in time: the failures before it were not in a row, and the tier
    /// works (the pauses start over).
    mutating func succeeded() {
        consecutiveFailures = 0
        backoff = CircuitBreaker.firstBackoff
    }

    /// The attempt that was due starts: the next pause is twice as long (at most ``maxBackoff``).
    mutating func retrying() {
        retryAt = nil
        attempts += 1
        backoff = min(CircuitBreaker.maxBackoff, backoff * 2)
    }

    /// A connection is up (it answered); what changed: whether it came back from being out, and
    /// whether it was not up before (the tier's users are told). The pauses start over only
    /// once a lookup is answered in time (``succeeded()``): a server that answers a PING and
    /// then times every lookup out is tried again less and less often, not every second.
    mutating func connected() -> (cameBack: Bool, becameUp: Bool) {
        consecutiveFailures = 0
        retryAt = nil
        var cameBack = false
        if case .down = health { cameBack = true }
        let becameUp = health != .up
        health = .up
        return (cameBack, becameUp)
    }
}
