import EventIO
import TLS

/// Which CONNECT tunnels are opened (`tls.intercept`, rules with `intercept: true`, minus
/// `tls.passthrough` and the clients in a passthrough window), and the TLS server that opens
/// them with leaves from the local CA. Loop-confined.
final class Interceptor {
    let settings: Configuration.TLS
    let context: TLSServerContext
    /// The blind windows of clients that refused the certificate.
    private(set) var passthrough: PassthroughBook

    init(settings: Configuration.TLS, authority: CertificateAuthority) throws(TLSError) {
        self.settings = settings
        context = try TLSServerContext(
            minter: LeafMinter(authority: authority, capacity: settings.leafCache),
            protocols: settings.http2 ? ["h2", "http/1.1"] : ["http/1.1"])
        passthrough = PassthroughBook(window: Double(settings.passthroughAfterFailure) / 1000)
    }

    /// Whether a CONNECT to `host` is intercepted (before its ClientHello says who the client is).
    func intercepts(host: String, port: UInt16, rules: RuleBook) -> Bool {
        Self.intercepts(host: host, port: port, settings: settings, rules: rules)
    }

    /// ``intercepts(host:port:rules:)`` under `settings`.
    static func intercepts(host: String, port: UInt16, settings: Configuration.TLS, rules: RuleBook) -> Bool {
        var bare = host.withoutIPv6Brackets
        // `localhost.` is `localhost` (a fully qualified name): it is matched as the name it is.
        if bare.hasSuffix("."), bare.count > 1 { bare.removeLast() }
        if settings.passthrough.contains(where: { $0.matches(bare) }) { return false }
        return settings.intercept.contains { $0.matches(host: bare, port: port) }
            || rules.rules.contains { rule in rule.intercept && rule.match.host.map { $0.matches(bare) } == true }
    }

    /// The passthrough key of a client (address without port) with a fingerprint, for a host.
    static func key(client: String, host: String, fingerprint: String) -> PassthroughBook.Key {
        PassthroughBook.Key(client: client, host: host.withoutIPv6Brackets.lowercased(), fingerprint: fingerprint)
    }

    /// Whether this client's tunnels to the host are blind now.
    func isBlind(_ key: PassthroughBook.Key, now: Double) -> Bool { passthrough.isBlind(key, now: now) }

    /// The client refused the certificate.
    func noteRefusal(_ key: PassthroughBook.Key, now: Double) -> PassthroughBook.Outcome {
        passthrough.refused(key, now: now)
    }

    /// The client completed a handshake.
    func noteHandshake(_ key: PassthroughBook.Key, now: Double) { passthrough.completedHandshake(key, now: now) }

    /// Ends a client's blind windows and refusals (it was given the CA); how many windows ended.
    @discardableResult
    func clearPassthrough(client: String) -> Int { passthrough.clear(client: client) }

    /// Ends the blind windows for `host` (all when `nil`); how many ended.
    func clearPassthrough(host: String?) -> Int { passthrough.clear(host: host.map(\.withoutIPv6Brackets)) }

    /// A TLS server session for a connection to `host` (its leaf unless the SNI names another).
    func makeSession(host: String) throws(TLSError) -> TLSSession {
        try context.makeSession(defaultName: host.withoutIPv6Brackets)
    }
}
