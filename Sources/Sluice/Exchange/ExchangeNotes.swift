/// What one exchange has to say about itself: in its response head (`Cache-Status`,
/// `Sluice-Validation`) and in its record for the monitors and the access log.
struct ExchangeNotes {
    /// `Cache-Status` for the response (RFC 9211).
    var cacheStatus: CacheStatus?
    /// `Sluice-Validation` members for the response head.
    var marks: [String] = []
    /// Why validation failed in report mode.
    var validationFailure: String?
    /// The contract's verdict on the response (or request).
    var contract: ContractRun.Outcome?
    /// The request's broken contract in report mode, kept when the response's verdict follows
    /// (both reach the record: coverage and reports count each).
    var requestContractFailure: ContractFailure?
    /// What null stripping did.
    var transformNote: String?
    /// The failure the client got (or that cut its connection).
    var error: SluiceError?
    /// Interim (1xx) responses passed on to the client.
    var interimSent = 0
    /// `local` (a rule's `respond:` answered) or the origin a rule's `upstream:` sent the request to.
    var mapping: String?
    /// The recorded exchange that answered (`--replay`).
    var replayed: Int64?
    /// What a rule's `faults:` did to this exchange (`latency 250ms`, `status 503`, `timeout`, `reset after N bytes`).
    private(set) var fault: String?

    /// What breakpoints did to this exchange (`request paused at login: edited`).
    private(set) var breakpoint: String?
    /// Whether a person changed the request at a breakpoint: its response is not stored (the
    /// cache key is the client's request, not the edited one).
    var requestEdited = false
    /// The request as sent after a person edited it at a breakpoint (the recording keeps it).
    var breakpointSent: PausedMessage?
    /// The origin's response as received before a person edited or replaced it at a breakpoint.
    var breakpointReceived: PausedMessage?
    /// Seconds the request and the response were held at breakpoints (the page's HAR counts
    /// them apart from the origin's time).
    var paused = PausedTime()

    mutating func noteBreakpoint(_ what: String) { breakpoint = breakpoint.map { $0 + "; " + what } ?? what }

    /// Adds what a fault did to ``fault``.
    mutating func noteFault(_ what: String) { fault = fault.map { $0 + ", " + what } ?? what }
}
