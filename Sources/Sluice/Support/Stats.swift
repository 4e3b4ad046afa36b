/// Every counter, declared once (Varnish's `VSC_main.vsc` lesson). Loop-confined.
public final class Stats {
    /// Client connections accepted.
    public var connectionsAccepted = 0
    /// Client connections refused (limit or access control).
    public var connectionsRefused = 0
    /// Client connections open now.
    public var connectionsOpen = 0
    /// Request heads parsed.
    public var requests = 0
    /// Exchanges finished with a response status (any).
    public var responses = 0
    /// Exchanges that ended in an error (problem response or cut connection).
    public var errors = 0
    /// CONNECT tunnels established.
    public var tunnels = 0
    /// Tunnels whose download went on socket to socket in the kernel (``Relay``).
    public var tunnelsSpliced = 0
    /// Faults injected, by rule and kind.
    public var faultsInjected: [String: [FaultKind: Int]] = [:]
    func countFaults(_ kinds: [FaultKind], rule: String) {
        for kind in kinds { faultsInjected[rule, default: [:]][kind, default: 0] += 1 }
    }
    /// Requests answered from a recording (`replay:`), and those it held no response for.
    public var replayServed = 0
    public var replayMissed = 0
    /// Tunnels whose client spoke plain HTTP inside: served as requests to the proxy.
    public var tunnelsCarryingHTTP = 0
    /// HTTP/2 streams served on intercepted connections (each one exchange), and those connections.
    public var http2Streams = 0
    public var http2Connections = 0
    /// HTTP/2 streams refused: a header block over the limit (an HPACK bomb), and connections
    /// ended for cancelling streams too fast (rapid reset).
    public var http2Refused = 0
    public var http2RapidResets = 0
    /// Exchanges that switched protocols (`101`: WebSockets and other upgrades) and were relayed.
    public var upgrades = 0
    /// WebSocket messages and control frames read on the way, both directions.
    public var webSocketMessages = 0
    /// CONNECTs intercepted: TLS terminated with a leaf from the local CA.
    public var tlsIntercepted = 0
    /// Intercepted handshakes that failed for another reason (not TLS, protocol errors, timeouts).
    public var tlsHandshakeFailures = 0
    /// Intercepted clients that refused the certificate (alert unknown_ca, bad_certificate, or a
    /// reset during the handshake).
    public var tlsCertificateRefusals = 0
    /// Passthrough windows started (a client refused twice within a minute).
    public var tlsPassthroughStarted = 0
    /// Tunnels opened blind because their client was in a passthrough window.
    public var tlsPassthroughTunnels = 0
    /// TLS agreed with `https://` parents for blind tunnels, and how many of those resumed a session.
    public var parentTLSHandshakes = 0
    public var parentTLSResumed = 0
    /// Upstream tasks started.
    public var upstreamTasks = 0
    /// Upstream tasks that opened a new connection (the rest reused one).
    public var upstreamConnections = 0
    /// Upstream transfers each transport carried (`upstream.engine`): the native HTTP/1.1 one, libcurl.
    public var upstreamNativeTransfers = 0
    public var upstreamCurlTransfers = 0
    /// Response bodies (and their bytes) the kernel moved from the origin's socket to the client's
    /// unseen (``SocketSplice``): large plain pass-through bodies nothing else wanted.
    public var upstreamSplicedBodies = 0
    public var upstreamSplicedBytes: Int64 = 0
    /// Responses served from the cache.
    public var cacheHits = 0
    /// Responses stored in the cache.
    public var cacheStores = 0
    /// Responses rejected by validation (enforce mode: 502).
    public var validationRejected = 0
    /// Responses that failed validation in report mode (passed, marked).
    public var validationReported = 0
    /// Responses and requests checked against a contract, and those that broke it.
    public var contractChecked = 0
    public var contractFailed = 0
    /// Exchanges answered with a problem because they broke an enforced contract (502, or 400
    /// for a request).
    public var contractRejected = 0
    /// The same, per rule (`/stats`, the page): rules are few and named in the configuration.
    public var contractsByRule: [String: ContractTally] = [:]

    /// One rule's contract checks.
    public struct ContractTally: Sendable, Equatable {
        public var checked = 0
        public var failed = 0
        public var rejected = 0
    }
    /// JSON bodies delivered with null members removed.
    public var jsonStripped = 0
    /// JSON bodies that stripping was asked for but left untouched (invalid, too large, no-transform…).
    public var jsonUntouched = 0

    public init() {}
}
