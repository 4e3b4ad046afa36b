extension Configuration {
    /// HTTPS interception (`tls:`): which CONNECT tunnels are opened, and the local CA that signs
    /// what intercepted clients are shown. Off by default: every CONNECT is a blind tunnel.
    public struct TLS: Sendable, Equatable {
        /// Hosts whose tunnels are intercepted (rule host globs); none by default.
        public var intercept: [Glob] = []
        /// Hosts never intercepted; wins over ``intercept`` and rules' `intercept: true`.
        public var passthrough: [Glob] = []
        /// The CA certificate (PEM), created by `sluice ca init` or at the first intercepting start.
        /// `sluice-ca.pem` in the data directory by default (``FileLocations``).
        public var caCert = "sluice-ca.pem"
        /// The CA private key (PEM, mode 0600); never logged, served or exported.
        /// `sluice-ca.key` in the data directory by default (``FileLocations``).
        public var caKey = "sluice-ca.key"
        /// A client that refused the certificate gets blind tunnels to that host for this long
        /// (milliseconds); 0 = off.
        public var passthroughAfterFailure = 600_000
        /// Leaf certificates kept in memory (least recently used go first).
        public var leafCache = 1000
        /// Longest TLS handshake a client may take (milliseconds).
        public var handshakeTimeout = 10_000

        public init() {}

        /// Whether any host can be intercepted (configuration or a rule).
        public func isConfigured(rules: [Rule]) -> Bool {
            !intercept.isEmpty || rules.contains { $0.intercept }
        }
    }
}

/// How an origin's certificate is trusted (a rule's `tls:`; AFNetworking's `AFSecurityPolicy`,
/// Alamofire's `ServerTrustManager`, made central).
public struct UpstreamTrust: Sendable, Equatable {
    /// Public-key pins, `sha256//BASE64=` (`CURLOPT_PINNEDPUBLICKEY`); empty = no pinning.
    public var pins: [String] = []
    /// CA certificates (PEM) trusted instead of the system store; `nil` = the system store.
    public var caFile: String?
    /// Verify the chain and the name; `false` only in a rule (`allowInvalidCertificates`).
    public var verify = true
    /// Lowest TLS version offered to the origin: `1.2` or `1.3`; `nil` = libcurl's default.
    public var minVersion: String?

    public init() {}
}
