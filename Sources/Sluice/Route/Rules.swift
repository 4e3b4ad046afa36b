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
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 0x30...0x39: byte - 0x30
            case 0x41...0x46: byte - 0x41 + 10
            case 0x61...0x66: byte - 0x61 + 10
            default: nil
            }
        }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == 0x25, index + 2 < bytes.count, let high = hex(bytes[index + 1]),
                let low = hex(bytes[index + 2])
            {
                let byte = high << 4 | low
                let unreserved =
                    (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A)
                    || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
                if unreserved {
                    out.append(byte)
                    index += 3
                    continue
                }
            }
            out.append(bytes[index])
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
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

/// A glob for hosts or paths.
///
/// Hosts (`kind: .host`): `*` matches any run of characters (dots included), `?` one character;
/// compared case-insensitively. Paths (`kind: .path`): `*` matches within one segment, `**` across
/// segments, `?` one character other than `/`; a trailing `/**` also matches the bare prefix
/// (`/v1/**` matches `/v1`).
public struct Glob: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable { case host, path }

    enum Token: Sendable, Equatable {
        case literal(UInt8)
        case any  // ?
        case star  // * (within a segment for paths)
        case globstar  // ** (paths only)
        case globstarSlash  // **/ (paths only): nothing, or any run of segments ending in /
    }

    public let text: String
    public let kind: Kind
    let tokens: [Token]
    /// A faster equivalent for the common pattern shapes.
    let shape: Shape

    enum Shape: Sendable, Equatable {
        /// No wildcard: the whole subject equals these bytes.
        case exact([UInt8])
        /// `/prefix/**`: the subject is `/prefix` or starts with `/prefix/` (bytes include the slash).
        case underPrefix([UInt8])
        /// `*suffix` (hosts): the subject ends with these bytes.
        case suffix([UInt8])
        /// Anything else: the token automaton.
        case general
    }

    init(text: String, kind: Kind, tokens: [Token]) {
        self.text = text
        self.kind = kind
        self.tokens = tokens
        func literals(_ slice: ArraySlice<Token>) -> [UInt8]? {
            var bytes: [UInt8] = []
            for token in slice {
                guard case .literal(let byte) = token else { return nil }
                bytes.append(byte)
            }
            return bytes
        }
        if let bytes = literals(tokens[...]) {
            shape = .exact(bytes)
        } else if kind == .path, tokens.last == .globstar, let bytes = literals(tokens.dropLast()), bytes.last == 0x2F {
            shape = .underPrefix(bytes)
        } else if kind == .host, tokens.first == .star, let bytes = literals(tokens.dropFirst()) {
            shape = .suffix(bytes)
        } else {
            shape = .general
        }
    }

    public var description: String { text }

    /// Parses a glob, or explains what is wrong with it.
    /// Why a rule's or a breakpoint's host pattern with a port (`127.0.0.1:8080`) would never
    /// match: they compare the host without its port. (`tls.intercept` entries take a port; other
    /// host lists keep their own readings.)
    public static func portRefusal(_ text: String) -> GlobError? {
        guard let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon || text.hasPrefix("[") else {
            return nil
        }
        let port = text[text.index(after: colon)...]
        guard !port.isEmpty, port.allSatisfy({ $0.isASCII && $0.isNumber }) || port == "*" else { return nil }
        return GlobError("a host pattern matches the host without its port: write \(text[..<colon]), not \(text)")
    }

    public static func parse(_ text: String, kind: Kind) -> Result<Glob, GlobError> {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return .failure(GlobError("an empty pattern")) }
        if let bad = bytes.first(where: { "[]{}\\ \t".utf8.contains($0) || $0 < 0x20 || $0 == 0x7F }) {
            return .failure(
                GlobError("\"\(Character(UnicodeScalar(bad)))\" is not supported (only *, ** and ? are wildcards)"))
        }
        var tokens: [Token] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "*") {
                var run = 1
                while index + run < bytes.count, bytes[index + run] == UInt8(ascii: "*") { run += 1 }
                switch (kind, run) {
                case (_, 1): tokens.append(.star)
                case (.path, 2):
                    let before = index == 0 || bytes[index - 1] == UInt8(ascii: "/")
                    let after = index + 2 == bytes.count || bytes[index + 2] == UInt8(ascii: "/")
                    guard before, after else {
                        return .failure(GlobError("** must be a whole path segment, as in /v1/** or /**/x"))
                    }
                    if index + 2 < bytes.count {
                        tokens.append(.globstarSlash)
                        index += 3
                        continue
                    }
                    tokens.append(.globstar)
                default:
                    return .failure(
                        GlobError(kind == .host ? "use a single * in host patterns" : "*** is not a pattern"))
                }
                index += run
                continue
            }
            if byte == UInt8(ascii: "?") {
                tokens.append(.any)
            } else {
                tokens.append(.literal(kind == .host ? lowercase(byte) : byte))
            }
            index += 1
        }
        switch kind {
        case .host:
            if bytes.contains(UInt8(ascii: "/")) { return .failure(GlobError("a host pattern cannot contain /")) }
        case .path:
            guard bytes[0] == UInt8(ascii: "/") || bytes[0] == UInt8(ascii: "*") else {
                return .failure(GlobError("a path pattern starts with /"))
            }
        }
        return .success(Glob(text: text, kind: kind, tokens: tokens))
    }

    /// Whether `subject` matches the whole pattern.
    public func matches(_ subject: String) -> Bool {
        var subject = subject
        return subject.withUTF8 { matches(bytes: $0) }
    }

    func matches(bytes whole: UnsafeBufferPointer<UInt8>) -> Bool {
        var bytes = whole
        if kind == .path, let query = whole.firstIndex(of: UInt8(ascii: "?")) {
            bytes = UnsafeBufferPointer(rebasing: whole[..<query])
        }
        switch shape {
        case .exact(let literal):
            return bytes.count == literal.count && Glob.equal(bytes, from: 0, literal, kind: kind)
        case .underPrefix(let prefix):
            if bytes.count == prefix.count - 1 { return Glob.equal(bytes, from: 0, prefix.dropLast(), kind: kind) }
            return bytes.count >= prefix.count && Glob.equal(bytes, from: 0, prefix[...], kind: kind)
        case .suffix(let suffix):
            return bytes.count >= suffix.count
                && Glob.equal(bytes, from: bytes.count - suffix.count, suffix[...], kind: kind)
        case .general:
            break
        }
        // `/prefix/**` also matches `/prefix`.
        if kind == .path, tokens.count >= 2, tokens[tokens.count - 1] == .globstar,
            tokens[tokens.count - 2] == .literal(UInt8(ascii: "/")),
            Glob.run(Array(tokens.dropLast(2)), bytes, kind: kind)
        {
            return true
        }
        return Glob.run(tokens, bytes, kind: kind)
    }

    /// Whether `bytes[from...]` starts with `literal` (hosts fold ASCII case; literals are lower-case).
    private static func equal(
        _ bytes: UnsafeBufferPointer<UInt8>, from: Int, _ literal: ArraySlice<UInt8>, kind: Kind
    ) -> Bool {
        var index = from
        for expected in literal {
            let byte = kind == .host ? lowercase(bytes[index]) : bytes[index]
            if byte != expected { return false }
            index += 1
        }
        return true
    }

    private static func equal(
        _ bytes: UnsafeBufferPointer<UInt8>, from: Int, _ literal: [UInt8], kind: Kind
    ) -> Bool { equal(bytes, from: from, literal[...], kind: kind) }

    /// Dynamic programming over (token, byte): linear in both, no backtracking blow-up.
    private static func run(_ tokens: [Token], _ bytes: UnsafeBufferPointer<UInt8>, kind: Kind) -> Bool {
        // reachable[j]: the tokens so far can consume exactly bytes[0..<j].
        var reachable = [Bool](repeating: false, count: bytes.count + 1)
        reachable[0] = true
        for token in tokens {
            var next = [Bool](repeating: false, count: bytes.count + 1)
            switch token {
            case .literal(let expected):
                for j in 0..<bytes.count where reachable[j] {
                    let byte = kind == .host ? lowercase(bytes[j]) : bytes[j]
                    if byte == expected { next[j + 1] = true }
                }
            case .any:
                for j in 0..<bytes.count where reachable[j] {
                    if kind == .host || bytes[j] != UInt8(ascii: "/") { next[j + 1] = true }
                }
            case .globstarSlash:
                var open = false
                for j in 0...bytes.count {
                    if reachable[j] { next[j] = true }
                    if j > 0, open, bytes[j - 1] == UInt8(ascii: "/") { next[j] = true }
                    if reachable[j] { open = true }
                }
            case .star, .globstar:
                let crossesSlash = token == .globstar || kind == .host
                var open = false
                for j in 0...bytes.count {
                    if reachable[j] { open = true }
                    if open { next[j] = true }
                    if j < bytes.count, !crossesSlash, bytes[j] == UInt8(ascii: "/") { open = false }
                }
            }
            reachable = next
            if !reachable.contains(true) { return false }
        }
        return reachable[bytes.count]
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }
}

/// Why a glob was refused.
public struct GlobError: Error, Sendable, Equatable {
    public let message: String
    init(_ message: String) { self.message = message }
}
