import Contract

/// Sees every moment of an upstream task's life; logs, counters and tests observe here.
/// Every method has an empty default, so a monitor implements only what it needs.
public protocol EventMonitor: AnyObject {
    /// A task was created and its first transfer started.
    func taskDidStart(_ task: UpstreamTask)
    /// A final response head arrived (before any hook decided about it).
    func task(_ task: UpstreamTask, didReceive response: ResponseHead)
    /// The redirect hook decided.
    func task(_ task: UpstreamTask, didDecideRedirect decision: RedirectDecision, for response: ResponseHead)
    /// The will-cache hook decided (`nil`: nothing is stored).
    func task(_ task: UpstreamTask, didDecideCaching proposal: CachedResponseProposal?)
    /// The task finished: `error` is `nil` when the whole response was received.
    func task(_ task: UpstreamTask, didCompleteWith error: SluiceError?)
    /// An exchange (client request to final byte) finished; the access-log moment.
    func exchangeDidComplete(_ record: ExchangeRecord)
}

extension EventMonitor {
    public func taskDidStart(_ task: UpstreamTask) {}
    public func task(_ task: UpstreamTask, didReceive response: ResponseHead) {}
    public func task(_ task: UpstreamTask, didDecideRedirect decision: RedirectDecision, for response: ResponseHead) {}
    public func task(_ task: UpstreamTask, didDecideCaching proposal: CachedResponseProposal?) {}
    public func task(_ task: UpstreamTask, didCompleteWith error: SluiceError?) {}
    public func exchangeDidComplete(_ record: ExchangeRecord) {}
}

/// Fans every event out to several monitors, in order.
public final class CompositeEventMonitor: EventMonitor {
    /// The monitors.
    public private(set) var monitors: [any EventMonitor]

    public init(_ monitors: [any EventMonitor] = []) { self.monitors = monitors }

    /// Adds a monitor at the end.
    public func add(_ monitor: any EventMonitor) { monitors.append(monitor) }

    public func taskDidStart(_ task: UpstreamTask) { for monitor in monitors { monitor.taskDidStart(task) } }
    public func task(_ task: UpstreamTask, didReceive response: ResponseHead) {
        for monitor in monitors { monitor.task(task, didReceive: response) }
    }
    public func task(_ task: UpstreamTask, didDecideRedirect decision: RedirectDecision, for response: ResponseHead) {
        for monitor in monitors { monitor.task(task, didDecideRedirect: decision, for: response) }
    }
    public func task(_ task: UpstreamTask, didDecideCaching proposal: CachedResponseProposal?) {
        for monitor in monitors { monitor.task(task, didDecideCaching: proposal) }
    }
    public func task(_ task: UpstreamTask, didCompleteWith error: SluiceError?) {
        for monitor in monitors { monitor.task(task, didCompleteWith: error) }
    }
    public func exchangeDidComplete(_ record: ExchangeRecord) {
        for monitor in monitors { monitor.exchangeDidComplete(record) }
    }
}

/// A contract's verdict on one exchange.
public enum ContractVerdict: Sendable, Equatable {
    case passed
    case failed
    /// The body could not be validated (too large to decode, say); why.
    case notValidated(String)

    /// As the log and `/events` write it: `passed`, `failed`, `not-validated: why`.
    public var text: String {
        switch self {
        case .passed: "passed"
        case .failed: "failed"
        case .notValidated(let why): "not-validated: " + why
        }
    }

    /// The verdict without its reason (a metric's label).
    public var kind: String {
        if case .notValidated = self { return "not-validated" }
        return text
    }
}

/// One finished exchange, as the access log and the stats see it.
public struct ExchangeRecord: Sendable {
    /// The client's address.
    public var client: String
    /// The method.
    public var method: String
    /// The URL (or `host:port` for CONNECT).
    public var url: String
    /// The status sent to the client (0 if none was sent).
    public var status: Int
    /// Response body bytes sent to the client.
    public var bytesSent: Int64
    /// Seconds from request head to last byte.
    public var duration: Double
    /// Seconds spent waiting on the origin (to first byte), if it was contacted.
    public var upstreamTime: Double?
    /// The failure, if any (its problem type is logged).
    public var error: SluiceError?
    /// Whether the connection was closed abnormally after the head was sent (a truncated response).
    public var aborted: Bool
    /// The rule that applied, when one did (not the defaults).
    public var rule: String? = nil
    /// A report-mode validation failure (the response passed, marked).
    public var validationFailure: String? = nil
    /// The contract's verdict (failed: with ``contractFailure``).
    public var contract: ContractVerdict? = nil
    /// The broken contract (report and enforce modes).
    public var contractFailure: ContractFailure? = nil
    /// What the rule's contract checked of the response (operation, status), when it checked it.
    public var contractCheck: ContractCheck? = nil
    /// What the rule's contract checked of the request (its operation, whether a body schema
    /// applied), when `requests:` checks it.
    public var requestContractCheck: ContractCheck? = nil
    /// The request's broken contract under `requests: report` (``contract`` is then `failed`,
    /// and ``contractFailure`` is the response's, if it broke its contract too).
    public var requestContractFailure: ContractFailure? = nil

    /// The broken contracts: the response's (or an enforced request's), then a reported request's.
    public var contractFailures: [ContractFailure] { [contractFailure, requestContractFailure].compactMap { $0 } }
    /// What the null stripper did: `stripped N`, or why the body was left untouched.
    public var transform: String? = nil
    /// The response's `Cache-Status`.
    public var cacheStatus: CacheStatus? = nil
    /// Where the time went, when the origin was contacted.
    public var timeline: Timeline? = nil
    /// The exchange's number (from 1, in the order exchanges start).
    public var id: Int = 0
    /// `local` when a rule's `respond:` answered, or the origin a rule's `upstream:` mapped the
    /// request to.
    public var mapping: String? = nil
    /// What a rule's `faults:` injected (`latency 250ms`, `status 503`, `timeout`, `reset after N bytes`).
    public var fault: String? = nil
    /// What a breakpoint did (`request paused at login: edited; response paused at login: resumed`).
    public var breakpoint: String? = nil
    /// The recorded exchange that answered (`--replay`).
    public var replayed: Int64? = nil
    /// How long breakpoints held the request and the response.
    public var paused = PausedTime()
    /// The HTTP version between the client and Sluice (`1.1`, `1.0`, `2`).
    public var clientProtocol = "1.1"
    /// What was kept for a watcher (the admin page), when one looked.
    var capture: ExchangeCapture? = nil
}

/// Seconds an exchange's request and response were held at breakpoints.
public struct PausedTime: Sendable, Equatable {
    public var request: Double = 0
    public var response: Double = 0
    public init() {}
}

/// An exchange's phases in seconds (Alamofire's `Timeline`): waiting before the upstream
/// transfer began (lookup, a collapsed fetch), then libcurl's DNS, TCP connect and TLS phases
/// (0 on a reused connection), the first response byte counted from the transfer's start, and
/// the whole exchange.
public struct Timeline: Sendable, Equatable {
    public var queued: Double
    public var dns: Double
    public var connect: Double
    public var tls: Double
    public var firstByte: Double
    public var complete: Double

    public init(queued: Double, dns: Double, connect: Double, tls: Double, firstByte: Double, complete: Double) {
        self.queued = queued
        self.dns = dns
        self.connect = connect
        self.tls = tls
        self.firstByte = firstByte
        self.complete = complete
    }
}
