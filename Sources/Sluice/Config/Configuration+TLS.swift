extension Configuration {
    /// HTTPS interception (`tls:`): which CONNECT tunnels are opened, and the local CA that signs
    /// what intercepted clients are shown. Off by default: every CONNECT is a blind tunnel.
    public struct TLS: Sendable, Equatable {
        /// Hosts whose tunnels are intercepted (rule host globs, each with a port or not); none
        /// by default.
        public var intercept: [InterceptTarget] = []
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
        /// Offer `h2` in ALPN: intercepted clients that take it speak HTTP/2 (each stream an exchange).
        public var http2 = true
        /// Streams one intercepted HTTP/2 connection may run at once (`SETTINGS_MAX_CONCURRENT_STREAMS`).
        public var http2MaxStreams = 100

        public init() {}

        /// Whether any host can be intercepted (configuration or a rule).
        public func isConfigured(rules: [Rule]) -> Bool {
            !intercept.isEmpty || rules.contains { $0.intercept }
        }
    }
}

/// How an origin's certificate is trusted (a rule's `tls:`; AFNetworking's `AFSecurityPolicy`,
/// Alamofire's `ServerTrustManager`, made central).
public struct UpstreamTrust: Sendable, Hashable {
    /// Public-key pins, `sha256//BASE64=` (`CURLOPT_PINNEDPUBLICKEY`); empty = no pinning.
    public var pins: [String] = []
    /// CA certificates (PEM) trusted instead of the system store; `nil` = the system store.
    public var caFile: String?
    /// Verify the chain and the name; `false` only in a rule (`allowInvalidCertificates`).
    public var verify = true
    /// Lowest TLS version offered to the origin; `nil` = libcurl's default.
    public var minVersion: TLSVersion?
    /// A PEM file with the client certificate (and chain) for an origin that asks for one
    /// (mutual TLS); `nil` = none is sent.
    public var clientCertificate: String?
    /// The PEM file of that certificate's private key; `nil` = in ``clientCertificate``'s file.
    public var clientKey: String?

    public init() {}

    /// Said after an origin's TLS failure that may come from a client certificate it wanted and
    /// did not get (its alert, or a close or reset right after the handshake of a new connection).
    static let clientCertificateHint =
        " (the origin may want a client certificate: a rule's tls.client_certificate gives one)"
}

/// A TLS version a rule can ask for at least (`tls.min_version: "1.2" | "1.3"`).
public enum TLSVersion: String, Sendable, Equatable, CaseIterable {
    case tls12 = "1.2"
    case tls13 = "1.3"
}

/// One `tls.intercept` entry: a host glob, and a port when the entry names one
/// (`localhost:18443`). An entry with a port intercepts that port only, and lets CONNECT reach it
/// whatever `connect_ports` says (listing it is asking for it); one without intercepts the host on
/// every port `connect_ports` allows.
public struct InterceptTarget: Sendable, Equatable {
    public var host: Glob
    public var port: UInt16?

    public init(host: Glob, port: UInt16? = nil) {
        self.host = host
        self.port = port
    }

    /// The entry as written (`localhost:18443`).
    public var text: String { port.map { "\(host.text):\($0)" } ?? host.text }

    /// Whether a CONNECT to `host` (without IPv6 brackets) and `port` is this entry's.
    public func matches(host: String, port: UInt16) -> Bool {
        (self.port == nil || self.port == port) && self.host.matches(host)
    }

    /// `host-glob` or `host-glob:port` (`[v6]:port` for an IPv6 literal).
    static func parse(_ text: String) -> Result<InterceptTarget, GlobError> {
        var hostText = text
        var port: UInt16?
        if let colon = text.lastIndex(of: ":"),
            text.hasPrefix("[") ? text[..<colon].hasSuffix("]") : !text[..<colon].contains(":"),
            !text[text.index(after: colon)...].isEmpty, text[text.index(after: colon)...].allSatisfy(\.isNumber)
        {
            guard let number = UInt16(text[text.index(after: colon)...]), number > 0 else {
                return .failure(GlobError("port out of range"))
            }
            port = number
            hostText = String(text[..<colon])
        }
        if hostText.hasPrefix("["), hostText.hasSuffix("]") { hostText = String(hostText.dropFirst().dropLast()) }
        return Glob.parse(hostText, kind: .host).map { InterceptTarget(host: $0, port: port) }
    }
}
