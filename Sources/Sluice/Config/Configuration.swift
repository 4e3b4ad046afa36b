import EventIO
import Redis

/// Everything `sluice serve` can be told, with defaults. Every key, its type and default is
/// documented once, in ``ConfigLoader/keys`` (and `conf/sluice.yaml` mirrors it).
public struct Configuration: Sendable, Equatable {
    /// Where the proxy listens; `127.0.0.1:8080` by default (loopback only).
    public var listen = "127.0.0.1:8080"
    /// Client networks allowed besides loopback, as CIDRs; empty by default (loopback only).
    public var allowClients: [CIDR] = []
    /// Proxy authentication (Basic), for a listener other devices reach; `nil` by default.
    public var proxyAuth: ProxyAuth?

    /// A user and the file that holds the password (never in the configuration itself, never
    /// logged or served).
    public struct ProxyAuth: Sendable, Equatable {
        public var user: String
        public var passwordFile: String
        public init(user: String, passwordFile: String) {
            self.user = user
            self.passwordFile = passwordFile
        }
    }
    /// Ports that CONNECT may reach; `[80, 443]` by default (browsers tunnel `ws://` to 80).
    public var connectPorts: [UInt16] = [80, 443]
    /// What plain HTTP sent inside a CONNECT tunnel gets: served by Sluice (rules, cache,
    /// contracts, WebSocket messages seen), or relayed blind like any other tunnel's bytes.
    public var tunnelPlainHTTP = TunnelPlainHTTP.serve

    /// `tunnel_plain_http`.
    public enum TunnelPlainHTTP: String, Sendable, Equatable {
        case serve, relay
    }
    /// Upstream networks never connected to (checked on the resolved address): link-local, cloud
    /// metadata services and "this network" by default.
    public var denyTargets: [CIDR] = Configuration.defaultDenyTargets
    /// Who may reach loopback services through the proxy.
    public var loopbackTargets = LoopbackTargets.localClients

    /// `169.254.0.0/16` and `fe80::/10` (link-local, where cloud metadata services live),
    /// `100.100.100.200` (Alibaba's metadata), `fd00:ec2::254` (AWS IPv6 metadata), `0.0.0.0/8`, `::`.
    public static let defaultDenyTargets = [
        "169.254.0.0/16", "fe80::/10", "100.100.100.200/32", "fd00:ec2::254/128", "0.0.0.0/8", "::/128",
    ].compactMap(CIDR.init)

    /// Who may reach loopback addresses (127.0.0.0/8, ::1) upstream.
    public enum LoopbackTargets: String, Sendable, Equatable, CaseIterable {
        /// Clients on this machine only: a client from `allow_clients` cannot reach this host's
        /// loopback services through Sluice.
        case localClients = "local-clients"
        /// Every allowed client.
        case all
        /// Nobody.
        case none
    }
    /// Size and count limits.
    public var limits = Limits()
    /// Time limits.
    public var timeouts = Timeouts()
    /// Upstream (origin-side) settings.
    public var upstream = Upstream()
    /// The redirect policy.
    public var redirects = Redirects()
    /// Logging.
    public var log = Log()
    /// The response cache.
    public var cache = Cache()
    /// The admin port.
    public var admin = Admin()
    /// HTTPS interception and the local CA.
    public var tls = TLS()
    /// `record:`: exchanges kept in a recording.
    public var record = Record()
    /// `replay:`: answers from a recording.
    public var replay = Replay()
    /// `breakpoints:`: where exchanges pause for a person.
    public var breakpoints = Breakpoints()

    /// `breakpoints:` (more are added live from the page, the admin API and the CLI).
    public struct Breakpoints: Sendable, Equatable {
        /// A paused item goes on unchanged after this long (milliseconds).
        public var timeout = 300_000
        public var points: [Breakpoint] = []
    }
    /// What requests no rule matches get (`defaults:`): no validation, no stripping.
    public var defaults = Rule(name: "defaults")
    /// The ordered `rules:`; the first whose `match` fits a request applies.
    public var rules: [Rule] = []

    /// The rules in force.
    public var ruleBook: RuleBook { RuleBook(rules: rules, defaults: defaults) }

    /// The defaults.
    public init() {}

    /// Size and count limits.
    public struct Limits: Sendable, Equatable {
        /// Concurrent client connections; 1024 by default.
        public var maxConnections = 1024
        /// Longest request line (414); 8 KiB by default.
        public var maxRequestLine = 8 * 1024
        /// Largest request header section (431); 64 KiB by default.
        public var maxHeaderBytes = 64 * 1024
        /// Largest request body (413); 100 MiB by default.
        public var maxRequestBody: Int64 = 100 * 1024 * 1024
        /// Largest body the JSON null stripper buffers (decoded); larger ones pass untouched; 16 MiB by default.
        public var maxTransformBody = 16 * 1024 * 1024
        /// Body bytes all exchanges together hold whole (JSON transforms, contracts held for
        /// enforcement, response breakpoints), until they are sent.
        public var maxHeldBodies = 256 * 1024 * 1024
        public init() {}
    }

    /// Time limits, in milliseconds.
    public struct Timeouts: Sendable, Equatable {
        /// From the first byte of a request to the end of its header section; 10 s.
        public var clientHeader = 10_000
        /// Keep-alive idle time between requests; 60 s.
        public var clientIdle = 60_000
        /// Longest pause while a request body is being sent, or while the client is not reading; 30 s.
        public var clientBody = 30_000
        /// Connecting to the origin (TCP and TLS); 10 s.
        public var upstreamConnect = 10_000
        /// From sending the request to the origin's response headers; 60 s.
        public var upstreamResponse = 60_000
        /// Longest stall in an origin's body; 60 s.
        public var upstreamIdle = 60_000
        /// How long a request body whose client sent `Expect: 100-continue` waits for the origin's
        /// `100 Continue` (or final answer) before it goes anyway; 1 s. 0: Sluice answers the
        /// client's expectation itself and forwards none.
        public var upstreamContinue = 1_000
        /// CONNECT tunnel without traffic in either direction; 300 s.
        public var tunnelIdle = 300_000
        /// How long shutdown waits for in-flight exchanges; 10 s.
        public var shutdownGrace = 10_000
        public init() {}
    }

    /// Upstream settings.
    /// `upstream.engine`: the native HTTP/1.1 transport where it applies, or libcurl for everything.
    public enum UpstreamEngine: String, Sendable, Equatable, CaseIterable {
        case auto
        case curl
    }

    public struct Upstream: Sendable, Equatable {
        /// Which transport carries upstream requests (`upstream.engine`); `auto` by default.
        public var engine = UpstreamEngine.auto
        /// Offer HTTP/2 to TLS origins (ALPN); `true` by default.
        public var http2 = true
        /// Idle upstream connections kept for reuse; 256 by default.
        public var maxIdleConnections = 256
        /// Connections per origin, 0 = unlimited; 0 by default.
        public var maxConnectionsPerHost = 0
        /// `upstream.proxy`: a parent proxy, `env`, or none (the default).
        public var proxy = ProxySetting.none
        /// `upstream.no_proxy`: targets that never go through the parent.
        public var noProxy: [ParentRouting.Exception] = []
        /// `upstream.proxy_ca_file`: PEM CA certificates trusted for `https://` parents instead of
        /// the system store.
        public var proxyCAFile: String?
        public init() {}

        /// Where `upstream.proxy` takes the parent from.
        public enum ProxySetting: Sendable, Equatable {
            case none
            case url(ParentProxy)
            /// `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` (or their lower-case forms), read at start.
            case environment
        }

        /// The parents in force, given the process environment (`lookup`: `getenv`).
        public func parentRouting(environment lookup: (String) -> String?) -> Result<
            ParentRouting, ParentProxy.ParseError
        > {
            switch proxy {
            case .none:
                return .success(ParentRouting())
            case .url(let parent):
                return .success(
                    ParentRouting(forHTTP: parent, forHTTPS: parent, exceptions: noProxy, caFile: proxyCAFile))
            case .environment:
                func variable(_ name: String) -> String? {
                    (lookup(name) ?? lookup(name.lowercased())).flatMap { $0.isEmpty ? nil : $0 }
                }
                var routing = ParentRouting(exceptions: noProxy, caFile: proxyCAFile)
                do {
                    if let text = variable("HTTP_PROXY") { routing.forHTTP = try ParentProxy.parse(text).get() }
                    if let text = variable("HTTPS_PROXY") { routing.forHTTPS = try ParentProxy.parse(text).get() }
                } catch {
                    return .failure(error)
                }
                for item in variable("NO_PROXY")?.split(separator: ",") ?? [] {
                    routing.exceptions += ParentRouting.exceptions(String(item)) ?? []
                }
                return .success(routing)
            }
        }
    }

    /// What to do with 3xx responses.
    public struct Redirects: Sendable, Equatable {
        /// `pass` (the client sees the 3xx), `follow` or `refuse`; `pass` by default.
        public var policy = RedirectPolicy.pass
        /// Most redirects followed for one request; 5 by default.
        public var limit = 5
        public init() {}
    }

    /// The redirect policies a configuration can name.
    public enum RedirectPolicy: String, Sendable, Equatable, CaseIterable {
        case pass, follow, refuse
    }

    /// The SQLite response cache.
    public struct Cache: Sendable, Equatable {
        /// Whether responses are cached; `true` by default.
        public var enabled = true
        /// The SQLite file; `sluice.sqlite` in the data directory by default (``FileLocations``).
        public var path = "sluice.sqlite"
        /// Most bytes of stored bodies; least recently used entries go beyond it; 1 GiB by default.
        public var capacity: Int64 = 1 << 30
        /// Largest entry; 0 = 5 % of the capacity (NSURLCache's rule).
        public var maxEntrySize: Int64 = 0
        /// Most responses kept per URL that vary (`Vary`); storing one more drops the least recently used. A
        /// lookup reads them all, so `Vary: User-Agent` must not grow one URL's list without end.
        public var maxVariants = 16
        /// `shared` (several users: `private` responses and credentials are never stored) or `private`.
        public var mode = Mode.shared
        /// Heuristic freshness: this percent of `Date − Last-Modified`; 10 by default.
        public var heuristicPercent = 10
        /// Cap of heuristic freshness, in milliseconds; 24 h by default.
        public var heuristicMax = 86_400_000
        /// How long past its freshness a stored response may stand in when the origin fails (5xx,
        /// no connection, timeout) and neither the response nor the request says `stale-if-error`;
        /// milliseconds, 0 = never (RFC 5861 §4 for origins that send no directive).
        public var serveStaleOnError = 0
        /// Memory for the hot set: decoded entries of recent keys and whole small bodies; 8 MiB by default.
        public var memory: Int64 = 8 << 20
        /// Concurrent misses on a key wait for one upstream request (unless the key is known not
        /// to be storable, ``uncacheableTTL``).
        public var collapseForwarding = true
        /// Longest wait for another client's fetch, in milliseconds; then the waiter fetches itself.
        public var collapseTimeout = 5000
        /// How long a key whose response could not be stored or shared is remembered as such, in
        /// milliseconds (Varnish's hit-for-miss): its misses then go upstream side by side instead
        /// of queueing behind each other; 120 s by default.
        public var uncacheableTTL = 120_000
        /// `cache.shared`: a second tier on Redis shared by several Sluice instances; off by default.
        public var sharedTier: SharedTier?

        /// A shared tier on a Redis (or Valkey) server.
        public struct SharedTier: Sendable, Equatable {
            /// `redis://host:port[/db]`.
            public var host = "127.0.0.1"
            public var port: UInt16 = 6379
            public var database = 0
            /// What every key of this tier starts with (several caches may share one server).
            public var prefix = "sluice:"
            /// Largest response shared (bigger ones stay local).
            public var maxEntry: Int64 = 4 << 20
            /// Longest a lookup waits for the tier before it counts as a miss (ms).
            public var timeout = 50
            /// The server is a node of a Redis Cluster: the slot map is read from it.
            public var cluster = false
            /// `redis://[user]:password@…`: sent with `AUTH` on every connection; never shown.
            public var credentials: RedisConnection.Credentials?
            public init() {}
        }
        /// Whether responses that set cookies are stored (with their `Set-Cookie` lines, replayed to
        /// every client the entry serves); `nil` = the mode decides: no in `shared`, yes in `private`.
        public var storeSetCookie: Bool?
        public init() {}

        /// Whether responses with `Set-Cookie` are stored under these settings.
        public var storesSetCookie: Bool { storeSetCookie ?? (mode == .private) }

        /// Shared or private cache semantics (RFC 9111 §1).
        public enum Mode: String, Sendable, Equatable, CaseIterable { case shared, `private` }

        /// The largest entry in bytes.
        public var entryLimit: Int64 { maxEntrySize > 0 ? maxEntrySize : capacity / 20 }
    }

    /// The admin API (stats, metrics, cache, live events, health), on its own loopback port.
    public struct Admin: Sendable, Equatable {
        /// `127.0.0.1:8081` by default; loopback addresses only; empty = no admin port.
        public var listen = "127.0.0.1:8081"
        /// A token that DELETE and POST requests must bring as `Authorization: Bearer …`; empty = none.
        public var token = ""
        public init() {}
    }

    /// Logging.
    public struct Log: Sendable, Equatable {
        /// `trace`, `debug`, `info`, `notice`, `warning`, `error` or `critical`; `info` by default.
        public var level = "info"
        /// One access-log line per exchange; `true` by default.
        public var access = true
        public init() {}
    }

    /// `IP:port` (`[IPv6]:port` too) as a socket address; `nil` when it is not one.
    /// The one parser for `listen`, `admin.listen` and `--listen`.
    public static func socketAddress(_ text: String) -> SocketAddress? {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            return nil
        }
        var host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return SocketAddress.parseIP(String(host)).map { SocketAddress(ip: $0, port: port) }
    }

    /// The parser limits these settings imply.
    public var parserLimits: RequestParser.Limits {
        var parser = RequestParser.Limits()
        parser.maxRequestLine = limits.maxRequestLine
        parser.maxHeaderBytes = limits.maxHeaderBytes
        parser.maxBodyBytes = limits.maxRequestBody
        return parser
    }

    /// A copy with the listen address replaced.
    public func with(listen: String) -> Configuration {
        var copy = self
        copy.listen = listen
        return copy
    }
}
