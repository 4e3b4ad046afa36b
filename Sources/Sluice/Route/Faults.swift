/// A rule's `faults:` block: failures on demand, to rehearse a bad network against the same rules
/// (Dev Proxy's latency and random-error plugins, Charles's throttling).
public struct Faults: Sendable, Equatable {
    /// An injected status: a real response with a problem body that says it was injected.
    public struct Status: Sendable, Equatable {
        public var code: Int
        /// `Retry-After` seconds, when given.
        public var retryAfter: Int?
        public var rate: Double
        public init(code: Int, retryAfter: Int? = nil, rate: Double = 1) {
            self.code = code
            self.retryAfter = retryAfter
            self.rate = rate
        }
    }

    /// Connections reset after this many response body bytes.
    public struct Reset: Sendable, Equatable {
        public var rate: Double
        public var afterBytes: Int64
        public init(rate: Double = 1, afterBytes: Int64 = 0) {
            self.rate = rate
            self.afterBytes = afterBytes
        }
    }

    /// Milliseconds added before the request is served, drawn evenly from the range.
    public var latency: ClosedRange<Int>?
    public var status: Status?
    public var reset: Reset?
    /// The share of requests held unanswered (as by an origin that never answers) until the
    /// client gives up or `timeouts.upstream_response` passes (then the usual 504).
    public var timeout: Double?
    /// Makes the draws reproducible: the same requests in the same order get the same faults.
    public var seed: UInt64?
    /// Responses go to the client at this many bytes a second.
    public var bandwidth: Int?

    public init() {}

}

/// What a rule's `faults:` can inject, as counted (`/stats`, `sluice_faults_injected_total`).
public enum FaultKind: String, CaseIterable, Sendable {
    case latency, status, reset, timeout, bandwidth
}

/// What one request gets of its rule's faults.
struct FaultPlan: Equatable {
    /// The kinds it injects.
    var kinds: [FaultKind] {
        var kinds: [FaultKind] = []
        if delayMilliseconds > 0 { kinds.append(.latency) }
        if holds { kinds.append(.timeout) }
        if status != nil { kinds.append(.status) }
        if resetAfter != nil { kinds.append(.reset) }
        if bytesPerSecond != nil { kinds.append(.bandwidth) }
        return kinds
    }

    var delayMilliseconds = 0
    var status: Faults.Status?
    var resetAfter: Int64?
    var holds = false
    var bytesPerSecond: Int?

    /// Nothing injected.
    var isEmpty: Bool {
        delayMilliseconds == 0 && status == nil && resetAfter == nil && !holds && bytesPerSecond == nil
    }

    /// Draws a request's faults: always four numbers in the same order (timeout, status, reset,
    /// latency), so a seeded rule's requests get the same faults run after run. A held request
    /// gets nothing else; an injected status is not reset.
    static func draw(_ faults: Faults, using dice: inout FaultDice) -> FaultPlan {
        let (holdDraw, statusDraw, resetDraw, latencyDraw) = (dice.next(), dice.next(), dice.next(), dice.next())
        var plan = FaultPlan()
        plan.bytesPerSecond = faults.bandwidth
        if let range = faults.latency {
            plan.delayMilliseconds = range.lowerBound + Int(latencyDraw * Double(range.count))
            plan.delayMilliseconds = min(plan.delayMilliseconds, range.upperBound)
        }
        if let rate = faults.timeout, holdDraw < rate {
            plan.holds = true
            return plan
        }
        if let status = faults.status, statusDraw < status.rate {
            plan.status = status
            return plan
        }
        if let reset = faults.reset, resetDraw < reset.rate { plan.resetAfter = reset.afterBytes }
        return plan
    }
}

/// SplitMix64 (Steele, Lea and Flood): small, fast and good enough to decide faults; numbers in
/// [0, 1).
struct FaultDice: Equatable {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}

/// The faults' run-time state, on the loop thread: each rule's dice, whether its faults are
/// switched on, and what was injected. A reload starts it over (the file's settings again).
final class FaultBook {
    private var dice: [String: FaultDice] = [:]
    /// Rules whose faults were switched off at run time.
    private(set) var switchedOff: Set<String> = []
    /// The plan for a request under `entry`'s rule (`nil`: the rule has no faults, or they are off).
    func plan(for entry: RuleBook.Entry) -> FaultPlan? {
        // Read through the shared entry: a `Rule` bound to a name would be a copy of all its fields.
        guard let faults = entry.rule.faults, !switchedOff.contains(entry.rule.name) else { return nil }
        let name = entry.rule.name
        var rolled = dice[name] ?? FaultDice(seed: faults.seed ?? UInt64.random(in: .min ... .max))
        let plan = FaultPlan.draw(faults, using: &rolled)
        dice[name] = rolled
        return plan.isEmpty ? nil : plan
    }

    /// Switches a rule's faults on or off until the next reload.
    func setEnabled(_ enabled: Bool, rule: String) {
        if enabled { switchedOff.remove(rule) } else { switchedOff.insert(rule) }
    }

    /// Back to the file's settings: dice from their seeds, every rule's faults on (counts stay).
    func restart() {
        dice = [:]
        switchedOff = []
    }
}
