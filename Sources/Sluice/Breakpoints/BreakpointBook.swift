import EventIO
import Logging

/// What a person decided about a paused exchange (``PausedItem``).
enum PauseDecision {
    /// Go on, with what was edited (`nil`: unchanged).
    case resume(PausedMessage?)
    /// The client gets `502 breakpoint-aborted`, or (`closing`) its connection closed.
    case abort(closing: Bool)
    /// A response written by the person answers, without (or instead of) the origin's.
    case answer(PausedMessage)
    /// `breakpoints.timeout` passed: it goes on unchanged.
    case timedOut
}

/// A request or response as the Paused list shows it and the editor sends it back. Every part
/// is optional in an edit (what is left out stays); framing fields are Sluice's to recompute.
struct PausedMessage: Equatable, Sendable {
    var method: String?
    var url: String?
    var status: Int?
    var headers: [(String, String)]?
    var body: [UInt8]?
    /// A WebSocket message's type (text or binary).
    var opcode: WebSocketFrames.Opcode?

    static func == (a: PausedMessage, b: PausedMessage) -> Bool {
        a.method == b.method && a.url == b.url && a.status == b.status && a.body == b.body && a.opcode == b.opcode
            && (a.headers ?? []).elementsEqual(b.headers ?? []) { $0 == $1 }
            && (a.headers == nil) == (b.headers == nil)
    }

    /// The content coding the shown body was decoded from (a paused response's `gzip`, say): an
    /// edited body goes out decoded, without `Content-Encoding`.
    var decodedFrom: String?

    /// Fields the sender never chooses: the framing is made from the body as it is.
    static let framingFields: Set<String> = ["content-length", "transfer-encoding", "connection", "keep-alive"]

    /// Whether a field may be sent as written: its name a token, its value without CR, LF or NUL.
    static func isValidField(name: String, value: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { RequestParser.isTokenByte($0) }
            && !value.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
    }

    /// Edited fields as they are sent: framing fields left out (Sluice makes them from the body).
    static func sentFields(_ pairs: [(String, String)]) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs
        where !framingFields.contains(name.lowercased()) && isValidField(name: name, value: value) {
            fields.append(name: name, value: value)
        }
        return fields
    }
}

/// Who waits for a decision: the exchange (request stage) or its response's stage.
protocol PauseTarget: AnyObject {
    func resolve(_ decision: PauseDecision, of item: PausedItem)
}

/// One paused request or response.
final class PausedItem {
    enum Stage: String {
        case request
        case response
        /// A WebSocket message (its direction in ``direction``).
        case message
    }

    let id: Int
    let exchange: Int
    let stage: Stage
    let breakpoint: String
    /// When it paused, and when it goes on by itself (seconds since the epoch).
    let since: Double
    let deadline: Double
    /// The request as it would be sent (at the request stage) or was sent.
    let request: PausedMessage
    /// The response as the client would get it (response stage).
    let response: PausedMessage?
    /// The contract rule that judges the body, for the editor's live check.
    let contractRule: String?
    /// A paused WebSocket message: its direction, and the message (type and payload).
    var direction: WebSocketFrames.Direction?
    var message: PausedMessage?
    weak var target: (any PauseTarget)?
    /// What the target lives in (the exchange of a response stage): kept alive while a decision
    /// is carried out, which may end it.
    weak var owner: AnyObject?
    /// How long it was held, in seconds: set when it is decided (a person, its deadline, a stop).
    var held: Double = 0

    init(
        id: Int, exchange: Int, stage: Stage, breakpoint: String, since: Double, deadline: Double,
        request: PausedMessage, response: PausedMessage?, contractRule: String?, target: any PauseTarget
    ) {
        self.id = id
        self.exchange = exchange
        self.stage = stage
        self.breakpoint = breakpoint
        self.since = since
        self.deadline = deadline
        self.request = request
        self.response = response
        self.contractRule = contractRule
        self.target = target
    }
}

/// The breakpoints in force and what they hold paused. Loop-confined: the exchanges ask it at
/// their request and response stages; the admin API changes it and decides paused items; a timer
/// lets items go on once `breakpoints.timeout` passed.
final class BreakpointBook {
    /// The most items paused at once; more matches go on unpaused (and say so in the log).
    static let pausedLimit = 100

    private(set) var points: [Breakpoint]
    /// `breakpoints.timeout` (items paused before a change keep their deadline).
    var timeoutMilliseconds: Int
    private(set) var paused: [PausedItem] = []
    private var nextID = 1
    private let clock: () -> Double
    private let logger: Logger?
    private var sweeper: Timer?

    init(
        _ points: [Breakpoint], timeoutMilliseconds: Int, loop: EventLoop?, clock: @escaping () -> Double,
        logger: Logger?
    ) {
        self.points = points
        fromFile = Set(points.map(\.name))
        self.timeoutMilliseconds = timeoutMilliseconds
        self.clock = clock
        self.logger = logger
        if let loop {
            sweeper = Timer(loop: loop, repeats: true) { [weak self] in self?.sweep() }
        }
    }

    deinit { sweeper?.cancel() }

    /// Whether any breakpoint pauses requests, or responses (the exchange asks nothing otherwise).
    var pausesRequests: Bool { points.contains { $0.stage.pausesRequests } }
    var pausesResponses: Bool { points.contains { $0.stage.pausesResponses } }
    var pausesMessages: Bool { points.contains { $0.stage == .messages } }

    // MARK: - Changing the list

    /// Adds, or replaces the one with the same name.
    func put(_ point: Breakpoint) {
        if let index = points.firstIndex(where: { $0.name == point.name }) {
            points[index] = point
        } else {
            points.append(point)
        }
    }

    /// The names of the points the configuration file listed last.
    private var fromFile: Set<String> = []

    /// A reloaded configuration's `breakpoints:`: its points added or replaced, those the file
    /// listed before and no longer does removed; those added live (page, API, CLI) stay.
    func reload(_ settings: Configuration.Breakpoints) {
        timeoutMilliseconds = settings.timeout
        let listed = Set(settings.points.map(\.name))
        for name in fromFile where !listed.contains(name) { _ = remove(name) }
        for point in settings.points { put(point) }
        fromFile = listed
    }

    /// Removes a breakpoint (what it paused stays paused until decided); `false` when unknown.
    func remove(_ name: String) -> Bool {
        guard let index = points.firstIndex(where: { $0.name == name }) else { return false }
        points.remove(at: index)
        return true
    }

    // MARK: - Matching

    /// The breakpoints that may pause this request at the request or the response stage (no
    /// allocation when none does: the common case costs a match per breakpoint).
    func candidates(
        for stage: PausedItem.Stage, method: String, host: String, path: String, fields: HTTPFields
    ) -> [Breakpoint] {
        func fits(_ point: Breakpoint) -> Bool {
            let atStage: Bool
            switch stage {
            // A `both` breakpoint with response conditions (status, media type) pauses at the
            // response alone: its request half could not know whether they will hold.
            case .request:
                atStage = point.stage.pausesRequests && !(point.stage == .both && point.hasResponseConditions)
            case .response: atStage = point.stage.pausesResponses
            case .message: atStage = point.stage == .messages
            }
            return atStage && point.matchesRequest(method: method, host: host, path: path, fields: fields)
        }
        guard points.contains(where: fits) else { return [] }
        return points.filter(fits)
    }

    // MARK: - Paused items

    /// Registers a paused item; `nil` when too many are paused already (it then goes on).
    func pause(
        exchange: Int, stage: PausedItem.Stage, breakpoint: String, request: PausedMessage, response: PausedMessage?,
        contractRule: String?, target: any PauseTarget
    ) -> PausedItem? {
        if stopping { return nil }
        guard paused.count < BreakpointBook.pausedLimit else {
            logger?.warning(
                "breakpoint \(breakpoint): \(BreakpointBook.pausedLimit) exchanges are paused already; exchange \(exchange) goes on"
            )
            return nil
        }
        let now = clock()
        let item = PausedItem(
            id: nextID, exchange: exchange, stage: stage, breakpoint: breakpoint, since: now,
            deadline: now + Double(timeoutMilliseconds) / 1000, request: request, response: response,
            contractRule: contractRule, target: target)
        nextID += 1
        paused.append(item)
        if sweeper?.isScheduled == false { sweeper?.schedule(milliseconds: 250) }
        return item
    }

    func item(_ id: Int) -> PausedItem? { paused.first { $0.id == id } }

    /// Decides an item: it leaves the list and its exchange goes on; `false` when it is gone.
    @discardableResult
    func decide(_ id: Int, _ decision: PauseDecision) -> Bool {
        guard let index = paused.firstIndex(where: { $0.id == id }) else { return false }
        let item = paused.remove(at: index)
        item.held = max(0, clock() - item.since)
        guard let target = item.target else { return false }
        withExtendedLifetime(item.owner) { target.resolve(decision, of: item) }
        return true
    }

    /// The exchange ended (its client left): what it had paused goes.
    func forget(exchange: Int) { paused.removeAll { $0.exchange == exchange } }

    /// Sluice is stopping: every paused item goes on unchanged now, so its client gets its answer
    /// within the shutdown grace instead of a closed connection after it.
    func releaseAll() {
        stopping = true
        paused.removeAll { $0.target == nil }
        for item in paused {
            logger?.info(
                "breakpoint \(item.breakpoint): the paused \(item.stage.rawValue) of exchange \(item.exchange) went on unchanged: Sluice is stopping"
            )
            decide(item.id, .resume(nil))
        }
    }

    /// Sluice is stopping: nothing pauses any more (a request released now would pause again at
    /// its response, and wait past the shutdown grace).
    private var stopping = false

    /// Items past their deadline go on unchanged (logged once each).
    private func sweep() {
        paused.removeAll { $0.target == nil }
        let now = clock()
        for item in paused where item.deadline <= now {
            logger?.info(
                "breakpoint \(item.breakpoint): the paused \(item.stage.rawValue) of exchange \(item.exchange) went on unchanged after \(timeoutMilliseconds) ms (breakpoints.timeout)"
            )
            decide(item.id, .timedOut)
        }
        if paused.isEmpty { sweeper?.cancel() }
    }
}
