/// One entry of `rules:` (or the `defaults:` block): what a matching request gets.
public struct Rule: Sendable, Equatable {
    /// The rule's name, reported in problems, `Sluice-Validation` and logs.
    public var name: String
    /// Which requests it applies to (everything when empty).
    public var match = RuleMatch()
    /// Response validation; `nil` = none (every response passes).
    public var accept: Acceptance?
    /// JSON null stripping; `nil` = off (the client can still ask with `Sluice-Strip-Nulls`).
    public var stripJSONNulls: NullStripper.Mode?
    /// The API contract responses (and, when asked, requests) are validated against.
    public var contract: ContractRule?
    /// The redirect policy for matching requests; `nil` = `redirects.policy`.
    public var redirects: Configuration.RedirectPolicy?
    /// What the cache may do with matching responses; `nil` = RFC 9111 alone.
    public var cache: CacheRule?
    /// Intercept HTTPS to the hosts this rule matches (its `match.host`); `false` by default.
    public var intercept = false
    /// How origins' certificates are trusted; `nil` = the system store, verified.
    public var tls: UpstreamTrust?
    /// `proxy:` a parent for the matching requests, or `none` (straight to the origin).
    public var proxy: ParentRouting.RuleChoice?
    /// `respond:` the answer Sluice gives itself (map local); nothing goes upstream.
    public var respond: MapLocal?
    /// `upstream:` another origin for the matching requests (map remote).
    public var upstream: MapRemote?
    /// `rewrite:` header fields changed on the way up and back.
    public var rewrite: Rewrite?
    /// `faults:` failures on demand (latency, injected statuses, resets, held requests).
    public var faults: Faults?

    public init(name: String) { self.name = name }
}

/// A rule's `cache:` block, applied by its will-cache hook (``RuleCacher``) after the RFC 9111 checks.
public struct CacheRule: Sendable, Equatable {
    /// `false`: matching responses are never stored.
    public var store = true
    /// Freshness lifetime in seconds for responses that carry none of their own (no `s-maxage`,
    /// `max-age` or `Expires`): Squid's `refresh_pattern`, nginx's `proxy_cache_valid`.
    public var ttl: Int64?

    public init(store: Bool = true, ttl: Int64? = nil) {
        self.store = store
        self.ttl = ttl
    }
}

/// A rule's `match:` block. Empty fields match everything.
public struct RuleMatch: Sendable, Equatable {
    /// Host glob (`api.example.com`, `*.example.com`), case-insensitive.
    public var host: Glob?
    /// Path glob (`/v1/**`, `/items/*/detail`), compared with the path without its query.
    public var path: Glob?
    /// Methods, upper-case; empty = any.
    public var methods: [String] = []

    public init() {}

    /// Whether a request fits. The path is compared with its percent-encoded unreserved
    /// characters decoded (RFC 3986 §6.2.2.2: `/a/%78` is `/a/x`).
    public func matches(method: String, host: String, path: String) -> Bool {
        if !methods.isEmpty, !methods.contains(method) { return false }
        if let hostGlob = self.host, !hostGlob.matches(host) { return false }
        if let pathGlob = self.path, !pathGlob.matches(path.utf8.contains(0x25) ? Self.decodingUnreserved(path) : path)
        {
            return false
        }
        return true
    }

    /// `text` with each `%XX` that encodes an unreserved character (letters, digits, `-._~`)
    /// replaced by it; other escapes (`%2F`, `%20`) stay as they are.
    static func decodingUnreserved(_ text: String) -> String {
        PercentEncoding.decode(text, plusAsSpace: false, decodes: PercentEncoding.isUnreserved)
    }
}

/// The rules in force: the first whose `match` fits a request gives it its ``Rule``; `defaults` otherwise.
/// A class: every exchange is handed the book, and a reference is one retain where a struct of
/// arrays and a `Rule` would be one per part.
public final class RuleBook: Sendable, Equatable {
    public let rules: [Rule]
    public let defaults: Rule
    /// Each rule with its hooks, built once and shared by the requests it applies to (a route
    /// keeps a reference, not a copy of the rule's many fields).
    private let entries: [Entry]
    /// The defaults with their hooks (what a request gets when no rule matches).
    let defaultsEntry: Entry

    /// A rule as requests get it: the rule, whether it is one of `rules` (not the defaults), and
    /// its hooks for upstream tasks (its redirect policy, its enforce-mode response handler, its
    /// will-cache hook), made once.
    final class Entry: Sendable {
        let rule: Rule
        let matched: Bool
        let hooks: UpstreamTask.Hooks

        init(_ rule: Rule, matched: Bool) {
            self.rule = rule
            self.matched = matched
            hooks = UpstreamTask.Hooks(
                redirectHandler: rule.redirects.map { Redirector(policy: $0) }, responseHandler: RuleBook.gate(rule),
                cachedResponseHandler: RuleBook.cacher(rule))
        }
    }

    public init(rules: [Rule] = [], defaults: Rule = Rule(name: "defaults")) {
        self.rules = rules
        self.defaults = defaults
        entries = rules.map { Entry($0, matched: true) }
        defaultsEntry = Entry(defaults, matched: false)
    }

    public static func == (lhs: RuleBook, rhs: RuleBook) -> Bool {
        lhs.rules == rhs.rules && lhs.defaults == rhs.defaults
    }

    private static func gate(_ rule: Rule) -> (any ResponseHandler)? {
        var gates: [any ResponseHandler] = []
        if let accept = rule.accept, accept.onReject == .enforce {
            gates.append(ValidationGate(acceptance: accept, rule: rule.name))
        }
        // Only an OpenAPI document has head checks (a schema contract judges bodies alone).
        if let contract = rule.contract, contract.onViolation == .enforce || contract.undocumented == .enforce,
            case .openAPI = contract.loaded?.kind
        {
            gates.append(ContractGate(rule: rule))
        }
        switch gates.count {
        case 0: return nil
        case 1: return gates[0]
        default: return GateChain(gates: gates)
        }
    }

    private static func cacher(_ rule: Rule) -> (any CachedResponseHandler)? {
        rule.cache.map { RuleCacher(rule: rule.name, settings: $0) }
    }

    /// The rule for a request.
    public func rule(method: String, host: String, path: String) -> Rule {
        match(method: method, host: host, path: path) ?? defaults
    }

    /// The first rule that fits a request, if any.
    public func match(method: String, host: String, path: String) -> Rule? {
        rules.first { $0.match.matches(method: method, host: host, path: path) }
    }

    /// What a request gets: the first matching rule's entry, else the defaults'. `path` may carry
    /// the query (it is ignored).
    func resolve(method: String, host: String, path: String) -> Entry {
        guard !entries.isEmpty else { return defaultsEntry }
        // Decoded once for all the rules (``RuleMatch/matches(method:host:path:)`` finds no `%` then).
        let path = path.utf8.contains(0x25) ? RuleMatch.decodingUnreserved(path) : path
        for entry in entries where entry.rule.match.matches(method: method, host: host, path: path) { return entry }
        return defaultsEntry
    }
}
