import Curl
import EventIO

/// The session engine: the tasks it runs, the session-wide hooks and the event monitors
/// (Alamofire's `Session`), over two transports: the native HTTP/1.1 one (``NativeTransport``)
/// and one libcurl multi handle on the loop.
public final class Session {
    /// What the session needs from the configuration.
    public struct Settings: Sendable {
        public var connectTimeoutMilliseconds = 10_000
        public var responseTimeoutMilliseconds = 60_000
        public var idleTimeoutMilliseconds = 60_000
        public var http2 = true
        public var maxIdleConnections = 256
        public var maxConnectionsPerHost = 0
        public var redirectLimit = 5
        /// `upstream.engine`: `auto` lets the native transport carry what it can.
        public var engine = Configuration.UpstreamEngine.auto
        /// Largest response header section an origin may send (each interim one counts alone).
        public var maxHeaderBytes = 64 * 1024
        /// How long a body whose client expects `100 Continue` waits for the origin's before it
        /// goes anyway; 0: Sluice answers the client itself and the origin sees no expectation.
        public var continueTimeoutMilliseconds = 1_000
        /// Whether a client that stops sending its request body is timed (`timeouts.client_body`
        /// above 0): while an upload waits for its client, that timeout, not the origin's, runs.
        public var clientBodyTimed = true
        public init() {}

        /// Settings from a ``Configuration``.
        public init(_ configuration: Configuration) {
            connectTimeoutMilliseconds = configuration.timeouts.upstreamConnect
            responseTimeoutMilliseconds = configuration.timeouts.upstreamResponse
            idleTimeoutMilliseconds = configuration.timeouts.upstreamIdle
            http2 = configuration.upstream.http2
            maxIdleConnections = configuration.upstream.maxIdleConnections
            maxConnectionsPerHost = configuration.upstream.maxConnectionsPerHost
            redirectLimit = configuration.redirects.limit
            engine = configuration.upstream.engine
            maxHeaderBytes = configuration.limits.maxHeaderBytes
            continueTimeoutMilliseconds = configuration.timeouts.upstreamContinue
            clientBodyTimed = configuration.timeouts.clientBody > 0
        }
    }

    /// The loop everything runs on.
    public let loop: EventLoop
    /// The settings in force.
    public let settings: Settings
    let multi: MultiHandle
    /// The native HTTP/1.1 transport and its connection pool.
    let native: NativeTransport
    /// Routes libcurl's moments through monitors and hooks.
    let delegate: SessionDelegate
    /// Session-wide redirect hook; `nil` passes redirects through.
    public var redirectHandler: (any RedirectHandler)? { didSet { rebuildHooks() } }
    /// Session-wide did-receive-response hook; `nil` allows everything.
    public var responseHandler: (any ResponseHandler)? { didSet { rebuildHooks() } }
    /// Session-wide will-cache hook; `nil` keeps the proposal.
    public var cachedResponseHandler: (any CachedResponseHandler)? { didSet { rebuildHooks() } }
    /// The three session-wide hooks as one value (what a task's own hooks are merged over); made
    /// again when one changes (tasks keep the one they started with).
    private var hooks = UpstreamTask.Hooks.empty

    private func rebuildHooks() {
        hooks = UpstreamTask.Hooks(
            redirectHandler: redirectHandler, responseHandler: responseHandler,
            cachedResponseHandler: cachedResponseHandler)
    }
    /// Every monitor sees every task event.
    public let eventMonitor = CompositeEventMonitor()
    /// Where tasks may connect (never to this proxy, a denied network, or loopback for remote clients).
    public var targetGuard = TargetGuard()

    private var idleHandles: [EasyHandle] = []
    private var nextTaskID = 0
    private var running: [ObjectIdentifier: UpstreamTask] = [:]

    /// A session on `loop`.
    public init(loop: EventLoop, settings: Settings = Settings()) {
        self.loop = loop
        self.settings = settings
        multi = MultiHandle(
            loop: loop, maxConnections: settings.maxIdleConnections,
            maxConnectionsPerHost: settings.maxConnectionsPerHost)
        native = NativeTransport(loop: loop, settings: settings)
        delegate = SessionDelegate()
        delegate.session = self
        multi.delegate = delegate
    }

    /// Tasks in flight.
    public var activeTaskCount: Int { running.count }

    /// Creates a task for `request`; call ``UpstreamTask/start()`` to send it.
    /// - Parameters:
    ///   - request: what to send upstream.
    ///   - delegate: receives the response; not retained, and held unowned: it must outlive the
    ///     task or let go of it first with ``UpstreamTask/detach()``.
    ///   - hooks: this task's own hooks, overriding the session's; none by default.
    ///   - replaying: a recorded response the task hands over instead of asking the origin.
    @discardableResult
    public func makeTask(
        _ request: UpstreamRequest, delegate: any TaskDelegate, hooks: UpstreamTask.Hooks = .empty,
        replaying: ReplayedResponse? = nil
    ) -> UpstreamTask {
        nextTaskID += 1
        let merged = hooks.merging(self.hooks)
        let task = UpstreamTask(
            id: nextTaskID, request: request, delegate: delegate, hooks: merged, session: self, replayed: replaying)
        running[ObjectIdentifier(task)] = task
        return task
    }

    func taskDidFinish(_ task: UpstreamTask) { running.removeValue(forKey: ObjectIdentifier(task)) }

    // MARK: - Handles

    func checkoutHandle() -> EasyHandle { idleHandles.popLast() ?? EasyHandle() }

    // MARK: - Head timers

    /// A response-head timer lent to one task at a time: a timer is a libevent event, an object
    /// and a closure, three allocations a request if each task made its own.
    final class HeadTimer {
        /// The task waiting for its head; cleared when the timer goes back (the task's `deinit`
        /// gives it back too).
        unowned var task: UpstreamTask?
        lazy var timer = Timer(loop: loop) { [unowned self] in self.task?.headTimedOut() }
        private let loop: EventLoop
        init(loop: EventLoop) { self.loop = loop }
    }

    private var idleHeadTimers: [HeadTimer] = []

    /// A head timer for `task`, not yet armed.
    func lendHeadTimer(to task: UpstreamTask) -> HeadTimer {
        let lent = idleHeadTimers.popLast() ?? HeadTimer(loop: loop)
        lent.task = task
        return lent
    }

    /// Takes a head timer back (disarmed).
    func returnHeadTimer(_ lent: HeadTimer) {
        lent.timer.cancel()
        lent.task = nil
        if idleHeadTimers.count < 512 { idleHeadTimers.append(lent) }
    }

    func recycle(_ handle: EasyHandle) {
        handle.prepareForReuse()
        if idleHandles.count < 512 { idleHandles.append(handle) }
    }

    /// libcurl's receive buffers share this much between the transfers in flight: a lone
    /// transfer reads in large steps (each read costs libcurl a recv and a poll), many at once
    /// read in small ones so that memory stays bounded.
    static let receiveBudget = 256 << 10
    static let receiveBufferRange = (32 << 10)...(256 << 10)

    func configure(_ handle: EasyHandle, for request: UpstreamRequest) {
        handle.setURL(request.url.description)
        if let parent = request.parent {
            handle.setProxy(parent.curlURL)
            if parent.scheme == .https, let caFile = parent.caFile { handle.setProxyCAFile(caFile) }
        }
        let share = Session.receiveBudget / max(1, running.count)
        handle.setReceiveBuffer(
            bytes: min(max(share, Session.receiveBufferRange.lowerBound), Session.receiveBufferRange.upperBound))
        let body: EasyHandle.RequestBody
        switch request.body {
        case .none: body = .none
        case .length(let count): body = .length(count)
        case .streamed: body = .streamed
        }
        handle.setMethod(request.method, body: body)
        if request.url.hasEmptyPath, request.method == "OPTIONS" { handle.setRequestTarget("*") }
        let lines = HeaderList()
        var sawAccept = false
        for field in request.headers {
            if !sawAccept, field.is(.accept) { sawAccept = true }
            if field.opaque {
                lines.append(
                    bytes: Array((field.name + ": ").utf8) + HTTPFields.Field.wireBytes(field.value, opaque: true))
            } else {
                lines.append(name: field.name, value: field.value)
            }
        }
        if !sawAccept { lines.append("Accept:") }  // libcurl would add Accept: */*
        // No expectation: the client's is Sluice's to answer on this path (libcurl would add its
        // own to large uploads, and retries a 417 without it).
        if request.body != .none { lines.append("Expect:") }
        // TE is named in Connection over HTTP/1.1 (RFC 9110 §10.1.4); libcurl leaves Connection
        // out of an HTTP/2 request.
        if request.headers.contains(.te), !request.headers.contains(.connection) { lines.append("Connection: TE") }
        handle.setHeaders(lines)
        handle.setHTTPVersion(settings.http2 ? .http2OverTLS : .http1_1)
        if let trust = request.trust {
            handle.setTrust(
                caFile: trust.caFile, pins: trust.pins.isEmpty ? nil : trust.pins.joined(separator: ";"),
                verify: trust.verify,
                minimumVersion: trust.minVersion.map { version in
                    switch version {
                    case .tls12: .tls12
                    case .tls13: .tls13
                    }
                }, clientCertificate: trust.clientCertificate, clientKey: trust.clientKey)
        }
        handle.setTimeouts(
            connectMilliseconds: settings.connectTimeoutMilliseconds,
            lowSpeedSeconds: max(1, settings.idleTimeoutMilliseconds / 1000))
    }
}
